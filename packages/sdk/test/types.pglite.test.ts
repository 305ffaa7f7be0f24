import { describe, expect, expectTypeOf, it } from 'vitest';
import { OpenBaaS, OpenBaaSError, type ErrorCode, type Schema, type WebhookEvent, type WebhookEventOf } from '../src/index.js';

/**
 * What the compiler checks for the SDK's users (`npm run typecheck` fails when one of these
 * `@ts-expect-error` lines stops being an error). No server: the calls are never awaited.
 * Independent of the database, so once, in the PGlite project.
 */
const api = new OpenBaaS({ apiKey: 'sk_test_types0000000000000000' });

describe('the types of the SDK', () => {
  it('checks paths, parameters and bodies against the document', () => {
    const calls = () => [
      // @ts-expect-error the path parameter is required
      api.get('/v1/customers/{id}'),
      // @ts-expect-error the body is required
      api.post('/v1/customers/individual'),
      // @ts-expect-error not a path of the API
      api.get('/v1/nope', {}),
      // @ts-expect-error amounts are decimal strings
      api.post('/v1/internal-transfer', { body: { sourceWalletId: 'a', destinationWalletId: 'b', amount: 30, asset: 'USD' } }),
      // @ts-expect-error an internal transfer needs destinationWalletId or referenceWalletId (the server answers 400 otherwise)
      api.post('/v1/internal-transfer', { body: { sourceWalletId: 'a', amount: '1.00', asset: 'USD' } }),
      // @ts-expect-error the same on the deprecated aliases, which share the body's schema
      api.post('/v1/baas/transactions/internal-transfer', { body: { sourceWalletId: 'a', amount: '1.00', asset: 'USD' } }),
      // Either name of the destination does; both together do too (the server takes them when equal).
      api.post('/v1/internal-transfer', { body: { sourceWalletId: 'a', destinationWalletId: 'b', amount: '1.00', asset: 'USD' } }),
      api.post('/v1/internal-transfer', { body: { sourceWalletId: 'a', referenceWalletId: 'b', amount: '1.00', asset: 'USD', note: null } }),
      api.post('/v1/internal-transfer', { body: { sourceWalletId: 'a', destinationWalletId: 'b', referenceWalletId: 'b', amount: '1.00', asset: 'USD' } }),
      // @ts-expect-error a withdrawal needs counterpartyId or the beneficiary's fields (the server answers 400 otherwise)
      api.post('/v1/baas/withdrawals', { body: { walletId: 'w', amount: '1.00', personTypeCode: 'P' } }),
      // @ts-expect-error null is absent to the server, so it names no counterparty
      api.post('/v1/baas/transactions/withdrawal', { body: { walletId: 'w', amount: '1.00', personTypeCode: 'P', counterpartyId: null } }),
      // @ts-expect-error the beneficiary's fields go together: a name alone is not a beneficiary
      api.post('/v1/baas/withdrawals', { body: { walletId: 'w', amount: '1.00', personTypeCode: 'P', name: 'Grace Hopper' } }),
      // A saved counterparty, or the beneficiary in the body (on either path, which share the body).
      api.post('/v1/baas/withdrawals', { body: { walletId: 'w', amount: '1.00', personTypeCode: 'P', counterpartyId: 'c', street2: null } }),
      api.post('/v1/baas/transactions/withdrawal', { body: { walletId: 'w', amount: '1.00', personTypeCode: 'P', counterpartyId: 'c' } }),
      api.post('/v1/baas/withdrawals', {
        body: {
          walletId: 'w',
          amount: '1.00',
          personTypeCode: 'P',
          counterpartyId: null,
          name: 'Grace Hopper',
          transferNetwork: 'ACH_DOMESTIC',
          routingNumber: '021000021',
          accountNumber: '123456789',
          street1: '1 Main Street',
          cityCounty: 'Arlington',
          stateRegion: 'VA',
          zip: '22201',
          countryCode: 'US',
        },
      }),
      // @ts-expect-error a single customer is not a list
      api.list('/v1/customers/{id}', { params: { path: { id: 'x' } } }),
      // A body without required fields may be left out, as the server takes the call without one.
      api.post('/v1/sandbox/card-transactions/{parentId}/reversals', { params: { path: { parentId: 'x' } } }),
      // Headers the document does not declare go in the call's own headers.
      api.get('/v1/assets', { headers: { 'X-Trace-Id': 'order-42' } }),
    ];
    expect(typeof calls).toBe('function');
  });

  it('types answers, list items, errors and events', () => {
    expectTypeOf<Awaited<ReturnType<typeof api.get<'/v1/assets', undefined>>>['data'][number]>().toEqualTypeOf<Schema<'Asset'>>();
    expectTypeOf<ReturnType<typeof api.list<'/v1/customers', undefined>>>().toEqualTypeOf<AsyncGenerator<Schema<'Customer'>, void, undefined>>();
    expectTypeOf<OpenBaaSError['code']>().toEqualTypeOf<ErrorCode | 'HTTP_ERROR'>();
    expectTypeOf<'NOT_FOUND'>().toExtend<ErrorCode>();
    expectTypeOf<WebhookEventOf<'CUSTOMER_CREATED'>['data']['customerId']>().toEqualTypeOf<string>();
    expectTypeOf<WebhookEvent['type']>().toExtend<string>();
    // The destination rule narrows the body only: the answer is still the transfer.
    expectTypeOf<Awaited<ReturnType<typeof api.post<'/v1/internal-transfer', { body: Schema<'InternalTransferRequest'> }>>>['data']>().toEqualTypeOf<Schema<'InternalTransfer'>>();
  });
});
