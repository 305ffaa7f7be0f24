import { Type } from 'typebox';
import type { App } from '../../src/platform/http/app-type.js';
import type { Deps } from '../../src/platform/deps.js';
import { runWrite } from '../../src/platform/http/idempotency.js';
import { AppError } from '../../src/platform/http/errors.js';
import { Envelope, Text } from '../../src/platform/http/envelope.js';
import { parseAmount, formatAmount } from '../../src/platform/money/amount.js';
import { requireAsset } from '../../src/platform/money/assets.js';
import { recordEvent } from '../../src/modules/webhooks/events.store.js';

/**
 * Routes that exist only in tests, to drive the platform mechanisms (validation, idempotency,
 * events) through real HTTP before any domain route exists. Each write records a real event.
 */
export function registerTestRoutes(app: App, deps: Deps): void {
  app.post(
    '/v1/test/things',
    {
      config: { removedFields: { legacyName: 'Use name instead.' } },
      schema: {
        body: Type.Object(
          {
            name: Text.short({ maxLength: 50 }),
            amount: Text.amount(),
            asset: Text.short({ maxLength: 16 }),
            tags: Type.Optional(Type.Array(Text.short(), { maxItems: 5 })),
            nested: Type.Optional(Type.Object({ note: Text.short() }, { additionalProperties: false })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(Type.Object({ eventId: Type.String(), name: Type.String(), amount: Type.String() })) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => {
        const asset = requireAsset(request.body.asset, deps.config.mode);
        const amount = parseAmount(request.body.amount, asset);
        const event = await recordEvent(tx, context, 'CUSTOMER_CREATED', { customerId: request.body.name });
        if (request.body.name === 'conflict') throw new AppError('CONFLICT', 'Things named conflict always conflict.');
        if (request.body.name === 'crash') throw new Error('a bug');
        if (request.body.name === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
        return { statusCode: 201, message: 'Thing created', data: { eventId: event.id, name: request.body.name, amount: formatAmount(amount, asset) } };
      }),
  );
}
