import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { answerRefusal, runPausableWrite, runWrite } from '../../platform/http/idempotency.js';
import { isUuid } from '../../platform/ids.js';
import { listQueryProperties, paginate, parseInstant } from '../../platform/http/pagination.js';
import { eventTypes, renamedFilterMessage } from './event-types.js';
import { testEventType } from './event-payloads.js';
import * as service from './webhooks.service.js';
import * as store from './webhooks.store.js';
import { webhookUrlLengthMax } from './webhook-url.js';

const exampleId = '0195a3c2-7a10-7c4e-9d8a-3f1e2b4c5d6e';
const exampleTime = '2026-03-01T12:00:00.000Z';

const webhookProperties = {
  id: Type.String({ examples: [exampleId] }),
  name: Type.String({ examples: ['Ledger sync'] }),
  url: Type.String({ examples: ['https://example.com/webhooks/openbaas'] }),
  subscribedEventTypes: Type.Array(Type.String(), { examples: [['CUSTOMER_CREATED', 'BANK_DEPOSIT_TRANSACTION_COMPLETED']] }),
  active: Type.Boolean({ description: 'false when paused (PATCH active), disabled for failing or deleted: nothing is delivered' }),
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('PAUSED'), Type.Literal('DISABLED'), Type.Literal('DELETED')], {
    description:
      'ACTIVE: receives its events; PAUSED: paused by you (active: false); DISABLED: disabled by OpenBaaS because its endpoint ' +
      'failed every attempt for WEBHOOK_DISABLE_AFTER_MS (3 days by default; see disabledReason; PATCH active: true enables it ' +
      'again, POST /v1/webhooks/:id/replay sends what it missed); DELETED: deleted',
    examples: ['ACTIVE'],
  }),
  disabledReason: Type.Union([Type.Literal('ENDPOINT_FAILING'), Type.Null()], {
    description: 'when DISABLED, why: ENDPOINT_FAILING (every attempt of every delivery failed for the whole period)',
  }),
  disabledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when DISABLED, when (by your clock)' }),
  failingSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'the start of the current unbroken run of failed attempts (by your clock); null when the last attempt succeeded',
  }),
  createdAt: Type.String({ format: 'date-time', examples: [exampleTime] }),
  updatedAt: Type.String({ format: 'date-time', examples: [exampleTime] }),
  deletedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'set by DELETE (soft delete)' }),
  secretRotatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  previousSecretExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'after a rotation, until this moment deliveries also carry a signature made with the previous secret',
  }),
};
const WebhookSchema = Type.Object(webhookProperties, { title: 'Webhook' });
const WebhookWithSecretSchema = Type.Object(
  {
    ...webhookProperties,
    secret: Type.String({
      description: 'the signing secret (Standard Webhooks, whsec_ + base64): returned only here, keep it',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  },
  { title: 'WebhookWithSecret' },
);

const AttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: 'attempt number, also sent in the openbaas-attempt header' }),
    attemptedAt: Type.String({ format: 'date-time' }),
    succeeded: Type.Boolean(),
    httpStatus: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no response arrived' }),
    latencyMs: Type.Union([Type.Integer(), Type.Null()]),
    responseBody: Type.Union([Type.String(), Type.Null()], { description: 'the start of the receiver\'s answer (1000 characters at most)' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'why no 2xx arrived: timeout, connection refused, ...' }),
    injectedFault: Type.Union([Type.Literal('DUPLICATE'), Type.Null()], {
      description: 'sandbox fault injection (PUT /v1/sandbox/webhooks/faults): DUPLICATE marks the extra sending of a delivery that had succeeded; null for every ordinary attempt',
    }),
    verdict: Type.Union([Type.String(), Type.Null()], {
      description:
        'cooperative decision requests (COOP_AUTH_0100/0200) only: what the answer decided (APPROVED, PARTIAL <minor>, DECLINED <code>) or why the stand-in rule decided instead (STAND_IN TIMEOUT, NON_2XX, BAD_BODY, UNREACHABLE); null for every other delivery',
    }),
  },
  { title: 'WebhookDeliveryAttempt' },
);
const DeliveryStatusSchema = Type.Union(
  [Type.Literal('PENDING'), Type.Literal('DELIVERED'), Type.Literal('FAILED'), Type.Literal('CANCELLED')],
  { description: 'PENDING: waiting for its first attempt or a retry; DELIVERED: a 2xx arrived; FAILED: every attempt failed (retry it by hand); CANCELLED: the webhook was paused, deleted or unsubscribed from the type' },
);
const DeliverySchema = Type.Object(
  {
    id: Type.String({ examples: [exampleId] }),
    webhookId: Type.String(),
    eventId: Type.String({ description: 'the event id, sent as webhook-id on every attempt' }),
    eventType: Type.String({ examples: ['CUSTOMER_CREATED'] }),
    test: Type.Boolean({ description: `true for the ${testEventType} deliveries of POST /v1/webhooks/:id/test` }),
    status: DeliveryStatusSchema,
    attemptCount: Type.Integer({ minimum: 0 }),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when PENDING: the earliest next attempt' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    attempts: Type.Array(AttemptSchema, { description: 'the attempts, oldest first (the 50 most recent)' }),
  },
  { title: 'WebhookDelivery' },
);

const eventTypesDescription =
  `event types of the catalogue (GET /v1/events/types, and the webhooks documentation), or ["*"] alone for every event type, ` +
  `including those added later: ${eventTypes.join(', ')}`;
const NameSchema = Type.String({ minLength: 1, maxLength: 200, examples: ['Ledger sync'] });
const UrlSchema = Type.String({
  minLength: 1,
  maxLength: webhookUrlLengthMax,
  description: 'http or https (https only in production, and never a private or loopback address); no credentials',
  examples: ['https://example.com/webhooks/openbaas'],
});
const EventTypesSchema = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: eventTypesDescription,
  examples: [['CUSTOMER_CREATED', 'BANK_DEPOSIT_TRANSACTION_COMPLETED']],
});

const IdParams = Type.Object({ id: Text.id() });

const ReplaySchema = Type.Object(
  {
    webhookId: Type.String({ examples: [exampleId] }),
    since: Type.String({ format: 'date-time', examples: [exampleTime] }),
    until: Type.String({ format: 'date-time', description: 'the end of the window: the one asked for (exclusive), or now (included)' }),
    scheduled: Type.Integer({ minimum: 0, description: 'deliveries scheduled now (created, or brought back from FAILED or CANCELLED)' }),
    more: Type.Boolean({ description: `true when the window holds more than ${service.replayEventsMax} missed events: send the request again (with a new Idempotency-Key) for the rest` }),
  },
  { title: 'WebhookReplay' },
);

export function registerWebhookRoutes(app: App, deps: Deps): void {
  app.post(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'webhooks.create',
        tags: ['Webhooks'],
        summary: 'Create a webhook subscription; the signing secret is returned only in this response',
        body: Type.Object(
          {
            name: NameSchema,
            url: UrlSchema,
            subscribedEventTypes: EventTypesSchema,
            active: Type.Optional(Type.Boolean({ default: true, description: 'create it paused with false' })),
          },
          {
            additionalProperties: false,
            examples: [{ name: 'Ledger sync', url: 'https://example.com/webhooks/openbaas', subscribedEventTypes: ['CUSTOMER_CREATED', 'BANK_DEPOSIT_TRANSACTION_COMPLETED'] }],
          },
        ),
        response: { 201: Envelope(WebhookWithSecretSchema) },
      },
    },
    async (request, reply) => {
      let input: Awaited<ReturnType<typeof service.checkNewWebhookInput>>;
      try {
        input = await service.checkNewWebhookInput(deps, request.body);
      } catch (error) {
        // Checked before the transaction (the URL's name is looked up in DNS): still the key's answer.
        return answerRefusal(request, reply, deps, error);
      }
      await runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Webhook created',
        data: await service.createWebhook(tx, context, deps, input),
        sealResponse: true,
      }));
    },
  );

  app.get(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'webhooks.list',
        tags: ['Webhooks'],
        summary: 'List webhook subscriptions (newest first)',
        querystring: Type.Object(
          {
            ...listQueryProperties,
            includeDeleted: Type.Optional(Type.Boolean({ default: false, description: 'also list deleted subscriptions' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(WebhookSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      let query = store.subscriptionsQuery(deps.db, clientId);
      if (!request.query.includeDeleted) query = query.where('deleted_at', 'is', null);
      const { rows, pagination } = await paginate(deps.db, query, request.query, { id: 'id', createdAt: 'created_at' });
      return { message: 'Webhooks retrieved', data: rows.map(service.webhookView), pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/webhooks/:id',
    {
      schema: {
        operationId: 'webhooks.get',
        tags: ['Webhooks'],
        summary: 'Retrieve a webhook subscription (deleted ones too, with deletedAt)',
        params: IdParams,
        response: { 200: Envelope(WebhookSchema) },
      },
    },
    async (request) => {
      const row = await service.getWebhook(deps, authOf(request).clientId, request.params.id);
      return { message: 'Webhook retrieved', data: service.webhookView(row), traceId: String(request.id) };
    },
  );

  app.patch(
    '/v1/webhooks/:id',
    {
      schema: {
        operationId: 'webhooks.update',
        tags: ['Webhooks'],
        summary: 'Change a webhook subscription; pausing it (active: false) cancels its pending deliveries; active: true also enables a DISABLED one again',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.Optional(NameSchema),
            url: Type.Optional(UrlSchema),
            subscribedEventTypes: Type.Optional(EventTypesSchema),
            active: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false, minProperties: 1, examples: [{ subscribedEventTypes: ['*'] }, { active: false }] },
        ),
        response: { 200: Envelope(WebhookSchema) },
      },
    },
    async (request, reply) => {
      let checked: Awaited<ReturnType<typeof service.checkWebhookInput>>;
      try {
        checked = await service.checkWebhookInput(deps, request.body);
      } catch (error) {
        // Checked before the transaction (the URL's name is looked up in DNS): still the key's answer.
        return answerRefusal(request, reply, deps, error);
      }
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Webhook updated',
        data: await service.updateWebhook(tx, context, request.params.id, checked),
      }));
    },
  );

  app.delete(
    '/v1/webhooks/:id',
    {
      schema: {
        operationId: 'webhooks.delete',
        tags: ['Webhooks'],
        summary: 'Delete a webhook subscription (soft delete: it stays readable with deletedAt and receives nothing more)',
        params: IdParams,
        response: { 200: Envelope(WebhookSchema) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => {
        const { view, deletedNow } = await service.deleteWebhook(tx, context, request.params.id);
        return { message: deletedNow ? 'Webhook deleted' : 'Webhook was already deleted', data: view };
      });
    },
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'webhooks.rotateSecret',
        tags: ['Webhooks'],
        summary: 'Replace the signing secret; the new one is returned only in this response',
        description:
          'For WEBHOOK_SECRET_OVERLAP_MS (default 24 hours) deliveries carry two signatures in webhook-signature, ' +
          'one with the new secret and one with the previous, so receivers can switch without losing a message.',
        params: IdParams,
        response: { 200: Envelope(WebhookWithSecretSchema) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Webhook secret rotated',
        data: await service.rotateSecret(tx, context, deps, request.params.id),
        sealResponse: true,
      }));
    },
  );

  app.post(
    '/v1/webhooks/:id/test',
    {
      schema: {
        operationId: 'webhooks.sendTest',
        tags: ['Webhooks'],
        summary: `Send a ${testEventType} event to the subscription now and report the outcome`,
        description:
          `The ${testEventType} event (data: webhookId, test: true, traceId) is signed like every delivery and sent once, ` +
          'whatever the subscribed event types and even when the webhook is paused. It appears in the delivery log; it is ' +
          'not part of GET /v1/events. The response holds the delivery with its attempt (status DELIVERED or FAILED).',
        params: IdParams,
        response: { 200: Envelope(DeliverySchema) },
      },
    },
    async (request, reply) => {
      // The request to the receiver is made between two transactions, never inside one. With an
      // Idempotency-Key the first records the key as in progress, so a replay answers the stored
      // delivery and a duplicate sent meanwhile gets 409 IDEMPOTENCY_REQUEST_IN_PROGRESS: the
      // endpoint is sent one test event per key (two concurrent requests each sent one before).
      await runPausableWrite(request, reply, deps, {
        work: async () => ({ paused: request.params.id }),
        wait: (webhookId, context) => service.sendTestEvent(deps, context, webhookId),
        finish: async (tx, context, _webhookId, sent) => {
          const delivery = await service.recordTestDelivery(tx, context, sent as service.TestSend);
          return { message: delivery.status === 'DELIVERED' ? 'Test event delivered' : 'Test event not delivered', data: delivery };
        },
      });
    },
  );

  app.post(
    '/v1/webhooks/:id/replay',
    {
      schema: {
        operationId: 'webhooks.replay',
        tags: ['Webhooks'],
        summary: 'Send again every event of a time window that the subscription did not receive (after it was disabled or paused, say)',
        description:
          'Schedules a delivery, with the event id as webhook-id, for every event recorded in [since, until) (by your clock; ' +
          'without until, from since up to now included), or whose delivery to this subscription failed or was cancelled in that window, ' +
          'that the subscription subscribes to and has not received: its delivery FAILED or was ' +
          'CANCELLED, or none was made because the subscription was disabled or paused. Delivered and pending events are ' +
          `left alone, so nothing is sent twice by a replay. At most ${service.replayEventsMax} events per request (more: true ` +
          'when the window holds more). The subscription must be ACTIVE (409 otherwise).',
        params: IdParams,
        body: Type.Object(
          {
            since: Type.String({ format: 'date-time', maxLength: 40, description: 'the start of the window (inclusive), by your clock' }),
            until: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'the end of the window (exclusive); without it, up to now (included)' })),
          },
          { additionalProperties: false, examples: [{ since: '2026-03-01T00:00:00.000Z' }] },
        ),
        response: { 200: Envelope(ReplaySchema) },
      },
    },
    async (request, reply) => {
      // Bounds with digits past the millisecond count as the next millisecond, as the list filters' do.
      const input = { since: parseInstant(request.body.since, 'since'), ...(request.body.until ? { until: parseInstant(request.body.until, 'until') } : {}) };
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Replay scheduled',
        data: await service.replayWebhook(tx, context, deps, request.params.id, input),
      }));
    },
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'webhooks.listDeliveries',
        tags: ['Webhooks'],
        summary: 'The delivery log of a subscription (newest first), each delivery with its attempts',
        params: IdParams,
        querystring: Type.Object(
          {
            ...listQueryProperties,
            status: Type.Optional(DeliveryStatusSchema),
            eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: `an event type, or ${testEventType}` })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(DeliverySchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      const subscription = await service.getWebhook(deps, clientId, request.params.id);
      let query = store.deliveriesQuery(deps.db, clientId, subscription.id);
      if (request.query.status) query = query.where('status', '=', request.query.status);
      const eventType = request.query.eventType;
      if (eventType !== undefined) {
        // A type that does not exist is a mistake to report, not a filter that matches nothing.
        if (eventType !== testEventType && !(eventTypes as readonly string[]).includes(eventType)) {
          // A legacy name points at its replacement, as a subscription's event types do.
          const renamed = renamedFilterMessage(eventType);
          if (renamed !== undefined) throw validationError('eventType', renamed);
          throw validationError('eventType', `is not an event type; event types are ${eventTypes.join(', ')}, and ${testEventType}`);
        }
        query = query.where('event_type', '=', eventType);
      }
      const { rows, pagination } = await paginate(deps.db, query, request.query, { id: 'id', createdAt: 'created_at' });
      const attempts = await store.attemptsOf(deps.db, clientId, rows.map((row) => row.id));
      return {
        message: 'Deliveries retrieved',
        data: rows.map((row) => service.deliveryView(row, attempts.get(row.id) ?? [])),
        pagination,
        traceId: String(request.id),
      };
    },
  );

  app.post(
    '/v1/webhooks/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'webhooks.retryDelivery',
        tags: ['Webhooks'],
        summary: 'Send a delivery again (same webhook-id): a finished one gets one more attempt, a waiting one is brought forward',
        params: Type.Object({ deliveryId: Text.id() }),
        response: { 200: Envelope(DeliverySchema) },
      },
    },
    async (request, reply) => {
      if (!isUuid(request.params.deliveryId)) throw notFound('Delivery');
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Delivery scheduled',
        data: await service.retryDelivery(tx, context, request.params.deliveryId, deps.clock.now()),
      }));
    },
  );
}
