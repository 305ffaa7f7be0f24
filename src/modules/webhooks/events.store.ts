import { sql } from 'kysely';
import type { Tx } from '../../platform/db/transaction.js';
import type { Db } from '../../platform/db/database.js';
import type { RequestContext } from '../../platform/http/context.js';
import { idAt } from '../../platform/ids.js';
import type { EventType } from './event-types.js';
import './events.tables.js';

export interface EventRecord {
  id: string;
  type: EventType;
  createdAt: string;
  data: Record<string, unknown> & { traceId: string };
}

/**
 * Records an event in the outbox. Call it inside the transaction of the change it reports: the
 * event then commits with the change or not at all, and delivery happens after commit.
 * `data.traceId` is filled from the request context.
 */
export async function recordEvent(
  tx: Tx,
  context: RequestContext,
  type: EventType,
  data: Record<string, unknown>,
): Promise<EventRecord> {
  const event: EventRecord = {
    id: idAt(context.now),
    type,
    createdAt: context.now.toISOString(),
    data: { ...data, traceId: context.traceId },
  };
  await tx
    .insertInto('events')
    .values({
      client_id: context.clientId,
      id: event.id,
      type,
      data: JSON.stringify(event.data),
      created_at: context.now,
    })
    .execute();
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
 * Records many events in one statement (the batched write paths record dozens per transaction).
 * Same contract as recordEvent, which it must stay equivalent to: whatever recordEvent does for
 * one event, this does for each.
 */
export async function recordEvents(tx: Tx, events: readonly EventToRecord[]): Promise<EventRecord[]> {
  if (events.length === 0) return [];
  const records: EventRecord[] = events.map(({ context, type, data }) => ({
    id: idAt(context.now),
    type,
    createdAt: context.now.toISOString(),
    data: { ...data, traceId: context.traceId },
  }));
  await sql`
    INSERT INTO events (client_id, id, type, data, created_at)
    SELECT * FROM unnest(
      ${events.map((event) => event.context.clientId)}::uuid[],
      ${records.map((record) => record.id)}::uuid[],
      ${records.map((record) => record.type)}::text[],
      ${records.map((record) => JSON.stringify(record.data))}::jsonb[],
      ${events.map((event) => event.context.now)}::timestamptz[]
    )`.execute(tx);
  return records;
}
