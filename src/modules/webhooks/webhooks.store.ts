import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type {
  DeliveryStatus,
  WebhookDeliveriesTable,
  WebhookDeliveryAttemptsTable,
  WebhookSubscriptionsTable,
} from './webhooks.tables.js';
import './webhooks.tables.js';

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

/** Attempts shown per delivery in the log (the most recent ones). */
export const attemptsShownMax = 50;

export async function insertSubscription(tx: Tx, row: SubscriptionRow): Promise<void> {
  await tx.insertInto('webhook_subscriptions').values(row).execute();
}

/** Subscriptions of a client that are not deleted (paused ones count). */
export async function countLiveSubscriptions(tx: Tx, clientId: string): Promise<number> {
  const row = await tx
    .selectFrom('webhook_subscriptions')
    .select((builder) => builder.fn.countAll<string>().as('count'))
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findSubscription(db: Db | Tx, clientId: string, id: string, options: { forUpdate?: boolean } = {}) {
  let query = db.selectFrom('webhook_subscriptions').selectAll().where('client_id', '=', clientId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export function subscriptionsQuery(db: Db, clientId: string) {
  return db.selectFrom('webhook_subscriptions').selectAll().where('client_id', '=', clientId);
}

export async function updateSubscription(
  tx: Tx,
  clientId: string,
  id: string,
  changes: Partial<Omit<SubscriptionRow, 'client_id' | 'id' | 'created_at'>>,
): Promise<SubscriptionRow> {
  return tx
    .updateTable('webhook_subscriptions')
    .set(changes)
    .where('client_id', '=', clientId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Cancels the pending deliveries of a subscription (all of them, or those of event types it no
 * longer subscribes to). A delivery being sent right now keeps its claim: until its attempt ends
 * (or the claim expires) it is still being sent, so a replay does not schedule it and a retry
 * answers 409 (until 2026-12-03 the cancellation took the claim, and both sent it a second time
 * while the first request was open; found by an audit). Its outcome is logged as an attempt; an
 * acknowledged one makes it DELIVERED (the endpoint has the event), a failed one leaves it
 * CANCELLED (the delivery worker's outcome statement).
 */
export async function cancelPendingDeliveries(
  tx: Tx,
  clientId: string,
  subscriptionId: string,
  now: Date,
  keepEventTypes?: readonly string[],
): Promise<number> {
  let query = tx
    .updateTable('webhook_deliveries')
    .set({ status: 'CANCELLED', completed_at: now, updated_at: now })
    .where('client_id', '=', clientId)
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'PENDING');
  // Test deliveries are not tied to a subscribed type.
  if (keepEventTypes) query = query.where('event_type', 'not in', [...keepEventTypes, 'WEBHOOK_TEST']);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export function deliveriesQuery(db: Db, clientId: string, subscriptionId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('subscription_id', '=', subscriptionId);
}

export async function findDelivery(db: Db | Tx, clientId: string, id: string, options: { forUpdate?: boolean } = {}) {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('client_id', '=', clientId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function insertDelivery(tx: Tx, row: DeliveryRow): Promise<void> {
  await tx
    .insertInto('webhook_deliveries')
    .values({ ...row, test_data: row.test_data === null ? null : JSON.stringify(row.test_data) })
    .execute();
}

export async function insertAttempt(tx: Tx, row: AttemptRow): Promise<void> {
  await tx.insertInto('webhook_delivery_attempts').values(row).execute();
}

export async function updateDelivery(
  tx: Tx,
  clientId: string,
  id: string,
  changes: { status: DeliveryStatus; next_attempt_at: Date; final_attempt: number | null; completed_at: Date | null; updated_at: Date; injected_delay_ms?: number | null },
): Promise<DeliveryRow> {
  return tx
    .updateTable('webhook_deliveries')
    .set(changes)
    .where('client_id', '=', clientId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The most recent attempts of each delivery, oldest first within a delivery. */
export async function attemptsOf(db: Db | Tx, clientId: string, deliveryIds: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt_number', 'desc')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    if (list.length < attemptsShownMax) list.push(row);
    byDelivery.set(row.delivery_id, list);
  }
  for (const list of byDelivery.values()) list.reverse();
  return byDelivery;
}
