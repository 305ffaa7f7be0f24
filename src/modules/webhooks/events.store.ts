import { sql } from 'kysely';
import type { Tx } from '../../platform/db/transaction.js';
import { WriteStatement, type RowsKind } from '../../platform/db/write-statement.js';
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
  /** Drawn beforehand (else drawn here). */
  id?: string;
}

/**
 * Records many events at once (the batched write paths record dozens per transaction), with the
 * same contract as recordEvent, which it must stay equivalent to: each payload is checked against
 * its schema, and each event gets one pending delivery per active subscription of its client that
 * subscribes to its type, in the same transaction. With `write`, both inserts join the caller's
 * combined statement (one round trip for the whole batch).
 */
export async function recordEvents(tx: Tx, events: readonly EventToRecord[], write?: WriteStatement): Promise<EventRecord[]> {
  const target = write ?? new WriteStatement();
  const records = addEvents(target, events);
  if (!write) await target.execute(tx);
  return records;
}

/**
 * recordEvents into a combined statement, which the caller sends. With `deliveries: false`, no
 * delivery is queued (a decision request is sent at once, not by the delivery worker).
 */
export function addEvents(write: WriteStatement, events: readonly EventToRecord[], options: { deliveries?: boolean } = {}): EventRecord[] {
  const rows = events.map(({ context, type, data, id }) => ({ clientId: context.clientId, record: eventRecordOf(context, type, data, id), createdAt: context.now }));
  write.addRows(options.deliveries === false ? eventRowsAlone : eventRows, rows);
  return rows.map((row) => row.record);
}

/** An event to insert: its record and its client. */
interface EventRow {
  clientId: string;
  record: EventRecord;
  createdAt: Date;
}

function insertEventsPart(name: string, rows: readonly EventRow[]) {
  return {
    name,
    statement: sql`
      INSERT INTO events (client_id, id, type, data, created_at)
      SELECT * FROM unnest(${rows.map((row) => row.clientId)}::uuid[], ${rows.map((row) => row.record.id)}::uuid[], ${rows.map((row) => row.record.type)}::text[], ${jsonArray(rows.map((row) => row.record.data))}, ${rows.map((row) => row.createdAt)}::timestamptz[])
      RETURNING client_id, id, type, created_at`,
  };
}

/** Events without deliveries, as rows of a combined statement. */
const eventRowsAlone: RowsKind<EventRow> = { name: 'events_alone', parts: (rows) => [insertEventsPart('events_alone', rows)] };

/**
 * Events as rows of a combined statement (WriteStatement.addRows): the events insert, then their
 * webhook deliveries, which read the rows the events insert returns (so its part is named `events`).
 */
const eventRows: RowsKind<EventRow> = {
  name: 'events',
  parts: (rows) => [
    insertEventsPart('events', rows),
    {
      name: 'webhook_deliveries',
      statement: sql`
        INSERT INTO webhook_deliveries (client_id, id, subscription_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
        SELECT s.client_id, openbaas_delivery_id(e.id, (row_number() OVER (PARTITION BY e.id ORDER BY s.id))::int), s.id, e.id, e.type, 'PENDING',
          e.created_at, e.created_at, e.created_at
        FROM events e
        JOIN webhook_subscriptions s ON s.client_id = e.client_id AND s.active AND (e.type = ANY (s.event_types) OR '*' = ANY (s.event_types))`,
    },
  ],
};
