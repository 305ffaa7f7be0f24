import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope } from '../../platform/http/envelope.js';
import { runWrite } from '../../platform/http/idempotency.js';
import { deleteFaults, faultDelayMaxMs, getFaults, putFaults, webhookFaultsOf } from './webhook-faults.js';

const tags = ['Sandbox'];
const path = '/v1/sandbox/webhooks/faults';

const duplicateRate = (options: object = {}) =>
  Type.Number({
    minimum: 0,
    maximum: 1,
    description: 'the probability (0 to 1) that a delivery that succeeded is sent once more: same body and webhook-id, freshly signed',
    ...options,
  });
const reorderWindowMs = (options: object = {}) =>
  Type.Integer({
    minimum: 0,
    maximum: faultDelayMaxMs,
    description: `each delivery's first attempt is also held back by a random delay in [0, reorderWindowMs), so deliveries arrive out of order (0 to ${faultDelayMaxMs} ms)`,
    ...options,
  });
const extraDelayMs = (options: object = {}) =>
  Type.Integer({
    minimum: 0,
    maximum: faultDelayMaxMs,
    description: `each delivery's first attempt is held back by this much, by the client's clock (0 to ${faultDelayMaxMs} ms)`,
    ...options,
  });

const FaultsSchema = Type.Object(
  {
    duplicateRate: duplicateRate(),
    reorderWindowMs: reorderWindowMs(),
    extraDelayMs: extraDelayMs(),
    enabled: Type.Boolean({ description: 'true when any setting is above 0' }),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the settings were last set; null when none are' }),
  },
  {
    title: 'WebhookFaults',
    examples: [{ duplicateRate: 0.2, reorderWindowMs: 5000, extraDelayMs: 1000, enabled: true, updatedAt: '2026-03-01T12:00:00.000Z' }],
  },
);

const FaultsBody = Type.Object(
  {
    duplicateRate: Type.Optional(duplicateRate({ default: 0 })),
    reorderWindowMs: Type.Optional(reorderWindowMs({ default: 0 })),
    extraDelayMs: Type.Optional(extraDelayMs({ default: 0 })),
  },
  { additionalProperties: false, examples: [{ duplicateRate: 0.2, reorderWindowMs: 5000, extraDelayMs: 1000 }] },
);

const faultsDescription =
  'Fault injection for your own webhook consumer, for the calling client\'s deliveries only. With duplicateRate, a delivery that ' +
  'succeeded is sent once more with that probability (same body and webhook-id, a current webhook-timestamp and a fresh signature; ' +
  'logged as an attempt with injectedFault DUPLICATE; its failure does not change the delivery). extraDelayMs holds back every ' +
  'delivery\'s first attempt by that much, and reorderWindowMs adds a random delay in [0, reorderWindowMs) to each, so deliveries ' +
  'arrive out of order. Delays run on the client\'s clock (POST /v1/sandbox/clock/advance brings them forward). Test events ' +
  '(POST /v1/webhooks/:id/test) are never affected. Sandbox only: production has no such routes and never injects faults.';

/**
 * Webhook fault injection settings (sandbox only): GET, PUT and DELETE /v1/sandbox/webhooks/faults.
 * Registered only in sandbox mode; the delivery worker ignores the settings in production mode.
 */
export function registerWebhookFaultRoutes(app: App, deps: Deps): void {
  const cache = webhookFaultsOf(deps);

  app.get(
    path,
    {
      schema: {
        operationId: 'sandbox.getWebhookFaults',
        tags,
        summary: 'Read the webhook fault injection settings (sandbox)',
        description: `${faultsDescription} All settings are 0 and enabled is false when none are set.`,
        response: { 200: Envelope(FaultsSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      return { message: 'Webhook faults retrieved', data: await getFaults(deps.db, clientId), traceId: String(request.id) };
    },
  );

  app.put(
    path,
    {
      schema: {
        operationId: 'sandbox.setWebhookFaults',
        tags,
        summary: 'Set the webhook fault injection settings (sandbox)',
        description: `${faultsDescription} The body replaces the settings: a field left out is 0. Answers the stored settings.`,
        body: FaultsBody,
        response: { 200: Envelope(FaultsSchema) },
      },
    },
    async (request, reply) => {
      const { clientId } = authOf(request);
      await runWrite(request, reply, deps, async (tx, context) => {
        const data = await putFaults(tx, context, request.body);
        cache.forget(context.clientId);
        return { message: data.enabled ? 'Webhook faults set' : 'Webhook faults set (all 0: nothing is injected)', data };
      });
      // Again after the commit, in case a worker of this process read the old settings meanwhile.
      cache.forget(clientId);
    },
  );

  app.delete(
    path,
    {
      schema: {
        operationId: 'sandbox.clearWebhookFaults',
        tags,
        summary: 'Turn webhook fault injection off (sandbox)',
        description: 'Deletes the calling client\'s settings: deliveries are sent once, without injected delays, from now on. Answers the settings now in force (all 0).',
        response: { 200: Envelope(FaultsSchema) },
      },
    },
    async (request, reply) => {
      const { clientId } = authOf(request);
      await runWrite(request, reply, deps, async (tx, context) => {
        const { view, deletedNow } = await deleteFaults(tx, context.clientId);
        cache.forget(context.clientId);
        return { message: deletedNow ? 'Webhook faults turned off' : 'Webhook faults were already off', data: view };
      });
      cache.forget(clientId);
    },
  );
}
