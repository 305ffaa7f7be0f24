import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/ids.js';
import { listQueryProperties, paginate } from '../../platform/http/pagination.js';
import { eventTypes, renamedFilterMessage } from './event-types.js';
import { eventPayloadSchemas, testEventPayloadSchema, testEventType } from './event-payloads.js';
import { eventsQuery } from './events.store.js';

const EventSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    data: Type.Object({ traceId: Type.String() }, { additionalProperties: true }),
  },
  { title: 'Event' },
);

const EventTypeSchema = Type.Object(
  {
    type: Type.String({ examples: ['CUSTOMER_CREATED'] }),
    description: Type.String(),
    testOnly: Type.Boolean({ description: 'true for WEBHOOK_TEST, which only test deliveries carry (a subscription cannot list it)' }),
    payloadSchema: Type.Unknown({ description: 'the JSON Schema of the event\'s `data`' }),
  },
  { title: 'EventTypeDescription' },
);

/** The catalogue as GET /v1/events/types shows it (built once: it does not change while the program runs). */
const eventTypeCatalogue = [
  ...eventTypes.map((type) => {
    const schema = eventPayloadSchemas[type] as { description?: string };
    return { type, description: schema.description ?? '', testOnly: false, payloadSchema: schema };
  }),
  { type: testEventType, description: (testEventPayloadSchema as { description?: string }).description ?? '', testOnly: true, payloadSchema: testEventPayloadSchema },
];

function eventView(row: { id: string; type: string; data: Record<string, unknown>; created_at: Date }) {
  return { id: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data as { traceId: string } };
}

export function registerEventRoutes(app: App, deps: Deps): void {
  app.get(
    '/v1/events',
    {
      schema: {
        operationId: 'events.list',
        tags: ['Events'],
        summary: 'List events (newest first), for reconciliation and backfill',
        querystring: Type.Object(
          { ...listQueryProperties, type: Type.Optional(Type.Union(eventTypes.map((type) => Type.Literal(type)))) },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(EventSchema) },
      },
      // A legacy name points at its replacement, as a subscription's event types and the deliveries'
      // filter do (until 2026-12-04 it got the list of every type; found by an audit).
      preValidation: async (request) => {
        const renamed = renamedFilterMessage((request.query as { type?: unknown }).type);
        if (renamed !== undefined) throw validationError('type', renamed);
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      let query = eventsQuery(deps.db, clientId);
      if (request.query.type) query = query.where('type', '=', request.query.type);
      const { rows, pagination } = await paginate(deps.db, query, request.query, { id: 'id', createdAt: 'created_at' });
      return { message: 'Events retrieved', data: rows.map(eventView), pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/events/types',
    {
      schema: {
        operationId: 'events.listTypes',
        tags: ['Events'],
        summary: 'The event catalogue',
        description:
          'Every event type a subscription can list (or ["*"] for all of them), each with what it means and the JSON Schema of its payload ' +
          '(`data`; every payload carries `traceId`, and may gain optional fields over time). WEBHOOK_TEST is sent only by POST /v1/webhooks/:id/test.',
        response: { 200: Envelope(Type.Array(EventTypeSchema)) },
      },
    },
    async (request) => {
      authOf(request);
      return { message: 'Event types retrieved', data: eventTypeCatalogue, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/events/:id',
    {
      schema: {
        operationId: 'events.get',
        tags: ['Events'],
        summary: 'Retrieve one event',
        params: Type.Object({ id: Text.id() }),
        response: { 200: Envelope(EventSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      if (!isUuid(request.params.id)) throw notFound('Event');
      const row = await eventsQuery(deps.db, clientId).where('id', '=', request.params.id).executeTakeFirst();
      if (!row) throw notFound('Event');
      return { message: 'Event retrieved', data: eventView(row), traceId: String(request.id) };
    },
  );
}
