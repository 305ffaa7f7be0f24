import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { notFound } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/ids.js';
import { listQueryProperties, paginate } from '../../platform/http/pagination.js';
import { eventTypes } from './event-types.js';
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

function eventView(row: { id: string; type: string; data: Record<string, unknown>; created_at: Date }) {
  return { id: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data as { traceId: string } };
}

export function registerEventRoutes(app: App, deps: Deps): void {
  app.get(
    '/v1/events',
    {
      schema: {
        tags: ['Events'],
        summary: 'List events (newest first), for reconciliation and backfill',
        querystring: Type.Object(
          { ...listQueryProperties, type: Type.Optional(Type.Union(eventTypes.map((type) => Type.Literal(type)))) },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(EventSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      let query = eventsQuery(deps.db, clientId);
      if (request.query.type) query = query.where('type', '=', request.query.type);
      const { rows, pagination } = await paginate(query, request.query, { id: 'id', createdAt: 'created_at' });
      return { message: 'Events retrieved', data: rows.map(eventView), pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/events/:id',
    {
      schema: {
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
