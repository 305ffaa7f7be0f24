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
