import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import type { BankTransferRuntime } from '../../bank-transfers/index.js';
import type { ComplianceRuntime } from '../../compliance/index.js';
import { seedCountMax, seedCustomers } from './seeding.service.js';

const SeedBody = Type.Object(
  {
    count: Type.Integer({ minimum: 1, maximum: seedCountMax, description: `how many customers to create (1 to ${seedCountMax})` }),
    fundAmount: Type.Optional(Text.amount({ description: 'a settled deposit of this amount on each primary wallet (a decimal string); absent: empty wallets' })),
    asset: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'the asset of fundAmount: USD (the default) or USD_TEST' })),
  },
  { additionalProperties: false, examples: [{ count: 3, fundAmount: '1000.00', asset: 'USD' }] },
);

const SeededSchema = Type.Object({
  customerId: Type.String(),
  onboardingId: Type.String(),
  walletId: Type.String(),
  virtualAccountNumber: Type.String(),
  funded: Type.Union([Type.Object({ amount: Type.String(), asset: Type.String() }), Type.Null()]),
});

/** Sandbox seeding: approved, funded customers in one call (registered only in sandbox mode). */
export function registerSandboxSeedingRoutes(app: App, deps: Deps, runtimes: { compliance: ComplianceRuntime; bank: BankTransferRuntime }): void {
  app.post(
    '/v1/sandbox/customers',
    {
      schema: {
        operationId: 'sandbox.seedCustomers',
        tags: ['Sandbox'],
        summary: 'Create approved, funded customers (sandbox)',
        description:
          'Creates `count` individuals, each with the KYC approved at once (as the outcome control with `completeRequirements`), a primary wallet with ' +
          'its virtual account and, with `fundAmount`, a settled deposit of that amount. Every step emits its usual events. One transaction: all or none. ' +
          '409 INVALID_STATE when the client\'s onboarding strategy is not STANDARD (the one-call KYC could not approve the customers).',
        body: SeedBody,
        response: { 201: Envelope(Type.Object({ customers: Type.Array(SeededSchema) })) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => {
        const customers = await seedCustomers(tx, context, deps, runtimes, {
          count: request.body.count,
          fundAmount: request.body.fundAmount,
          asset: request.body.asset ?? 'USD',
        });
        return { statusCode: 201, message: `${customers.length} customer(s) created`, data: { customers } };
      }),
  );
}
