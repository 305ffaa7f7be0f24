import type { App } from './app-type.js';
import { AppError } from './errors.js';

/** Endpoints the provider removed: each answers 410 with its replacement in the message. */
export const removedEndpoints = [
  { method: 'GET', url: '/v1/customers/:id/transactions', replacement: 'Use GET /v1/transactions?walletId=<walletId> instead.' },
  { method: 'POST', url: '/v1/customers/:id/addresses', replacement: 'Set billing and delivery addresses with PATCH /v1/customers/:id instead.' },
  { method: 'DELETE', url: '/v1/digital-wallets/:id', replacement: 'Wallet archival is unavailable.' },
] as const;

export function registerRemovedEndpoints(app: App): void {
  for (const endpoint of removedEndpoints) {
    const removed = () => new AppError('ENDPOINT_REMOVED', `${endpoint.method} ${endpoint.url} has been removed. ${endpoint.replacement}`);
    app.route({
      method: endpoint.method,
      url: endpoint.url,
      // Answered before authentication or body parsing: there is nothing to protect, and a body
      // of any type gets the 410 (until 2026-12-04 a non-JSON one got 415 first; found by an audit).
      config: { public: true },
      schema: { hide: true },
      onRequest: async () => {
        throw removed();
      },
      handler: async () => {
        throw removed();
      },
    });
  }
}
