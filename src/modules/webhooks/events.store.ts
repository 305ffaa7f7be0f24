import { sql } from 'kysely';
import type { Tx } from '../../platform/db/transaction.js';
import type { WriteStatement } from '../../platform/db/write-statement.js';
import type { Db } from '../../platform/db/database.js';
import type { RequestContext } from '../../platform/http/context.js';
import { idAt } from '../../platform/ids.js';
import { jsonArray } from '../../platform/db/parameters.js';
import type { EventType } from './event-types.js';
import { assertEventPayload } from './event-payloads.js';
import './events.tables.js';
import './webhooks.tables.js';

export interface EventRecord {
  id: string;
  type: EventType;
  createdAt: string;
  data: Record<string, unknown> & { traceId: string };
}

/**
 * Records an event in the outbox. Call it inside the transaction of the change it reports: the
 * event then commits with the change or not at all, and delivery happens after commit.
 * `data.traceId` is filled from the request context. The same statement creates one pending
 * delivery for every active subscription of the client that subscribes to this type, so an
 * event is never committed without the deliveries it owes. (No NOTIFY for the workers: its
 * commit-time lock would serialise every transaction that records an event; they poll.)
 */
export async function recordEvent(
  tx: Tx,
  context: RequestContext,
  type: EventType,
  data: Record<string, unknown>,
): Promise<EventRecord> {
  const event = eventRecordOf(context, type, data);
  await sql`
    WITH recorded AS (
      INSERT INTO events (client_id, id, type, data, created_at)
      VALUES (${context.clientId}, ${event.id}, ${type}, ${JSON.stringify(event.data)}::jsonb, ${context.now})
    )
    INSERT INTO webhook_deliveries (client_id, id, subscription_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
    SELECT s.client_id, openbaas_delivery_id(${event.id}::uuid, (row_number() OVER (ORDER BY s.id))::int), s.id, ${event.id}, ${type}, 'PENDING', ${context.now}, ${context.now}, ${context.now}
    FROM webhook_subscriptions s
    WHERE s.client_id = ${context.clientId} AND s.active AND (${type} = ANY (s.event_types) OR '*' = ANY (s.event_types))
  `.execute(tx);
  return event;
}

/** An event of the context's client and clock, its payload checked against its schema; `id` may be drawn beforehand. */
export function eventRecordOf(context: RequestContext, type: EventType, data: Record<string, unknown>, id = idAt(context.now)): EventRecord {
  const event: EventRecord = { id, type, createdAt: context.now.toISOString(), data: { ...data, traceId: context.traceId } };
  assertEventPayload(type, event.data);
  return event;
}

export function eventsQuery(db: Db, clientId: string) {
  return db
    .selectFrom('events')
    .select(['id', 'type', 'data', 'created_at'])
    .where('client_id', '=', clientId);
}

export interface EventToRecord {
  context: RequestContext;
  type: EventType;
  data: Record<string, unknown>;
}

/**
 * Records many events at once (the batched write paths record dozens per transaction), with the
 * same contract as recordEvent, which it must stay equivalent to: each payload is checked against
 * its schema, and each event gets one pending delivery per active subscription of its client that
 * subscribes to its type, in the same transaction. With `write`, both inserts join the caller's
 * combined statement (one round trip for the whole batch).
 */
export async function recordEvents(tx: Tx, events: readonly EventToRecord[], write?: WriteStatement): Promise<EventRecord[]> {
  if (events.length === 0) return [];
  const { records, events: insertEvents, deliveries } = recordEventsStatements(events);
  if (write) {
    write.add('events', insertEvents);
    write.add('webhook_deliveries', deliveries);
  } else {
    await sql`WITH events AS (${insertEvents}) ${deliveries}`.execute(tx);
  }
  return records;
}

/**
 * The two inserts recordEvents runs, and the events it records. The deliveries read the rows the
 * events insert returns, so both must run in one statement with the events part named `events`.
 */
export function recordEventsStatements(events: readonly EventToRecord[]) {
  const records: EventRecord[] = events.map(({ context, type, data }) => {
    const record: EventRecord = { id: idAt(context.now), type, createdAt: context.now.toISOString(), data: { ...data, traceId: context.traceId } };
    assertEventPayload(type, record.data);
    return record;
  });
  const clientIds = events.map((event) => event.context.clientId);
  const ids = records.map((record) => record.id);
  const types = records.map((record) => record.type);
  const moments = events.map((event) => event.context.now);
  const insertEvents = sql`
    INSERT INTO events (client_id, id, type, data, created_at)
    SELECT * FROM unnest(${clientIds}::uuid[], ${ids}::uuid[], ${types}::text[], ${jsonArray(records.map((record) => record.data))}, ${moments}::timestamptz[])
    RETURNING client_id, id, type, created_at`;
  const deliveries = sql`
    INSERT INTO webhook_deliveries (client_id, id, subscription_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
    SELECT s.client_id, openbaas_delivery_id(e.id, (row_number() OVER (PARTITION BY e.id ORDER BY s.id))::int), s.id, e.id, e.type, 'PENDING',
      e.created_at, e.created_at, e.created_at
    FROM events e
    JOIN webhook_subscriptions s ON s.client_id = e.client_id AND s.active AND (e.type = ANY (s.event_types) OR '*' = ANY (s.event_types))`;
  return { records, events: insertEvents, deliveries };
}
