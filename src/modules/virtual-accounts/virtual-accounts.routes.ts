import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { Envelope, Text } from '../../platform/http/envelope.js';
import { runWrite } from '../../platform/http/idempotency.js';
import { createVirtualAccount } from './virtual-accounts.service.js';

export const VirtualAccountSchema = Type.Object(
  {
    walletId: Type.String({ format: 'uuid' }),
    virtualAccountNumber: Type.String({ pattern: '^70[0-9]{10}$', description: '12 digits: "70", a 9-digit serial (scrambled: numbers are not handed out in order) and a Luhn check digit; unique across the platform and never reused', examples: ['700000000017'] }),
  },
  { title: 'VirtualAccount' },
);

const CreateBody = Type.Object(
  { walletId: Text.id({ description: 'a wallet of a customer whose KYC or KYB is APPROVED' }) },
  { additionalProperties: false, examples: [{ walletId: '019ca945-0a00-74c1-8797-3bfde107f365' }] },
);

/** `serialKey` keys the permutation of the serials of new numbers (virtualAccountSerialKey in modules/routes.ts). */
export function registerVirtualAccountRoutes(app: App, deps: Deps, serialKey: Buffer): void {
  for (const url of ['/v1/virtual-accounts', '/v1/baas/virtual-accounts']) {
    app.post(
      url,
      {
        schema: {
          operationId: url === '/v1/virtual-accounts' ? 'virtualAccounts.create' : 'baas.virtualAccounts.create',
          tags: ['Virtual accounts'],
          summary: url === '/v1/virtual-accounts' ? 'Create a virtual account for a wallet' : 'Create a virtual account (alias of POST /v1/virtual-accounts)',
          description:
            'Gives the wallet a virtual account number that deposits can be sent to. The customer must be APPROVED (409 KYC_NOT_APPROVED); ' +
            'a wallet has at most one (409 VIRTUAL_ACCOUNT_EXISTS). The primary wallet gets one automatically when KYC or KYB is approved. ' +
            'Emits VIRTUAL_ACCOUNT_CREATED.',
          body: CreateBody,
          response: { 201: Envelope(VirtualAccountSchema) },
        },
      },
      async (request, reply) =>
        runWrite(request, reply, deps, async (tx, context) => ({
          statusCode: 201,
          message: 'Virtual account created',
          data: await createVirtualAccount(tx, context, request.body.walletId, serialKey),
        })),
    );
  }
}
