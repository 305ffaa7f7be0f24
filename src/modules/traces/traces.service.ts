import type { Db } from '../../platform/db/database.js';
import { assert } from '../../platform/assert.js';
import { notFound } from '../../platform/http/errors.js';
import { formatAmount } from '../../platform/money/amount.js';
import { findAsset } from '../../platform/money/assets.js';
import * as store from './traces.store.js';
import { traceItemsMax, type TraceItem, type TraceView } from './trace.schemas.js';

export { traceItemsMax, type TraceItem, type TraceView };

type TraceEntryView = Extract<TraceItem, { kind: 'LEDGER_TRANSFER' }>['entries'][number];

/** The order of items that carry the same `at`: cause before effect. */
export const traceItemKinds = ['REQUEST', 'LEDGER_TRANSFER', 'RECORD', 'EVENT', 'DELIVERY', 'DELIVERY_ATTEMPT'] as const;
export type TraceItemKind = (typeof traceItemKinds)[number];

/** A ledger amount (minor units) as the API writes amounts: a decimal string in the asset's major units. */
function amountOf(minor: string, assetCode: string, owner: string): string {
  // The ledger holds registry assets only; the sandbox registry is the complete one.
  const asset = findAsset(assetCode, 'sandbox');
  assert(asset, `${owner} holds an unknown asset ${assetCode}`);
  return formatAmount(BigInt(minor), asset);
}

/** Sorts by time, then by kind (cause before effect), then by id; the order is total, so stable. */
export function compareTraceItems(a: TraceItem, b: TraceItem): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  const kinds = traceItemKinds.indexOf(a.kind) - traceItemKinds.indexOf(b.kind);
  if (kinds !== 0) return kinds;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * GET /v1/traces/:traceId: everything of `clientId` that carries the trace id, in time order.
 * Another client's trace id answers exactly as an unknown one (404 NOT_FOUND): every read
 * is filtered by the caller's client id.
 */
export async function readTrace(db: Db, clientId: string, traceId: string): Promise<TraceView> {
  // One more row than shown per read: reaching it means the trace is cut.
  const limit = traceItemsMax + 1;
  const [requests, transfers, events] = await Promise.all([
    store.requestsOfTrace(db, clientId, traceId, limit),
    store.transfersOfTrace(db, clientId, traceId, limit),
    store.eventsOfTrace(db, clientId, traceId, limit),
  ]);
  const transferRefs = transfers.map((transfer) => ({ id: transfer.id, parentTransactionId: transfer.parent_transaction_id }));
  const [entries, records, deliveries] = await Promise.all([
    store.entriesOfTransfers(db, clientId, transferRefs.map((transfer) => transfer.id)),
    store.recordsOfTransfers(db, clientId, transferRefs, limit),
    store.deliveriesOfEvents(db, clientId, events.map((event) => event.id), limit),
  ]);
  const attempts = await store.attemptsOfDeliveries(db, clientId, deliveries.map((delivery) => delivery.id), limit);

  const entriesByTransfer = new Map<string, TraceEntryView[]>();
  for (const entry of entries) {
    const list = entriesByTransfer.get(entry.transfer_id) ?? [];
    list.push({
      asset: entry.asset,
      amount: amountOf(entry.amount, entry.asset, `ledger entry ${entry.transfer_id}/${entry.entry_index}`),
      debit: { accountId: entry.debit_account_id, balance: entry.debit_balance },
      credit: { accountId: entry.credit_account_id, balance: entry.credit_balance },
    });
    entriesByTransfer.set(entry.transfer_id, list);
  }

  const items: TraceItem[] = [
    ...requests.map((row): TraceItem => ({
      kind: 'REQUEST',
      at: row.created_at.toISOString(),
      id: row.id,
      method: row.method,
      path: row.path,
      operationId: row.operation_id,
      statusCode: row.status_code,
      durationMs: Number(row.duration_ms),
      idempotencyKey: row.idempotency_key,
      errorCode: row.error_code,
    })),
    ...transfers.map((row): TraceItem => ({
      kind: 'LEDGER_TRANSFER',
      at: row.created_at.toISOString(),
      id: row.id,
      transferKind: row.kind,
      parentTransactionId: row.parent_transaction_id,
      holdId: row.hold_id,
      description: row.description,
      entries: entriesByTransfer.get(row.id) ?? [],
    })),
    ...records.map((row): TraceItem => ({
      kind: 'RECORD',
      at: row.created_at.toISOString(),
      id: row.id,
      recordType: 'WALLET_TRANSACTION',
      walletId: row.wallet_id,
      ledgerTransferId: row.ledger_transfer_id,
      parentTransactionId: row.parent_transaction_id,
      type: row.type,
      purpose: row.purpose,
      operation: row.operation,
      balanceType: row.balance_type,
      status: row.status,
      amount: amountOf(row.amount, row.asset, `wallet transaction ${row.id}`),
      asset: row.asset,
    })),
    ...events.map((row): TraceItem => ({ kind: 'EVENT', at: row.created_at.toISOString(), id: row.id, type: row.type, data: row.data })),
    ...deliveries.map((row): TraceItem => ({
      kind: 'DELIVERY',
      at: row.created_at.toISOString(),
      id: row.id,
      eventId: row.event_id,
      eventType: row.event_type,
      subscriptionId: row.subscription_id,
      status: row.status,
      attemptCount: row.attempt_count,
      nextAttemptAt: row.next_attempt_at === null ? null : row.next_attempt_at.toISOString(),
    })),
    ...attempts.map((row): TraceItem => ({
      kind: 'DELIVERY_ATTEMPT',
      at: row.attempted_at.toISOString(),
      id: `${row.delivery_id}:${row.attempt_number}`,
      deliveryId: row.delivery_id,
      attemptNumber: row.attempt_number,
      succeeded: row.succeeded,
      httpStatus: row.http_status,
      latencyMs: row.latency_ms,
      error: row.error,
      responseBody: row.response_body,
    })),
  ];
  if (items.length === 0) throw notFound(`Trace ${traceId}`);
  items.sort(compareTraceItems);
  const truncated = items.length > traceItemsMax;
  const shown = truncated ? items.slice(0, traceItemsMax) : items;
  const first = shown[0];
  const last = shown[shown.length - 1];
  assert(first && last, 'a found trace has items');
  return { traceId, startedAt: first.at, endedAt: last.at, truncated, items: shown };
}
