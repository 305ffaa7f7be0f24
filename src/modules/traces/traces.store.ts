import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import './traces.tables.js';

/**
 * The reads of a trace. A trace spans the tables of several modules (the request log, the
 * ledger's transfers, entries and wallet records, the webhooks' events, deliveries and attempts),
 * so this store reads them directly, read-only, each by an index and always by client_id. Every
 * query takes at most `limit` rows; the caller asks one more than it shows, to know it cut.
 */

export interface RequestRow {
  id: string;
  method: string;
  path: string;
  operation_id: string | null;
  status_code: number;
  duration_ms: string;
  idempotency_key: string | null;
  error_code: string | null;
  created_at: Date;
}

export interface TransferRow {
  id: string;
  kind: string;
  parent_transaction_id: string | null;
  hold_id: string | null;
  description: string | null;
  created_at: Date;
}

export interface EntryRow {
  transfer_id: string;
  entry_index: number;
  asset: string;
  amount: string;
  debit_account_id: string;
  debit_balance: string;
  credit_account_id: string;
  credit_balance: string;
}

export interface RecordRow {
  id: string;
  ledger_transfer_id: string;
  wallet_id: string;
  parent_transaction_id: string;
  type: string;
  purpose: string;
  operation: string;
  balance_type: string;
  status: string;
  amount: string;
  asset: string;
  created_at: Date;
}

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  subscription_id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempt_number: number;
  attempted_at: Date;
  succeeded: boolean;
  http_status: number | null;
  latency_ms: number | null;
  error: string | null;
  response_body: string | null;
}

/** The request log rows of the trace (index api_requests_trace). */
export async function requestsOfTrace(db: Db, clientId: string, traceId: string, limit: number): Promise<RequestRow[]> {
  const result = await sql<RequestRow>`
    SELECT id, method, path, operation_id, status_code, duration_ms::text AS duration_ms, idempotency_key, error_code, created_at
    FROM api_requests WHERE client_id = ${clientId} AND trace_id = ${traceId}
    ORDER BY created_at, id LIMIT ${limit}::int`.execute(db);
  return result.rows;
}

/** The ledger transfers the trace made (index ledger_transfers_trace). */
export async function transfersOfTrace(db: Db, clientId: string, traceId: string, limit: number): Promise<TransferRow[]> {
  const result = await sql<TransferRow>`
    SELECT id, kind, parent_transaction_id, hold_id, description, created_at
    FROM ledger_transfers WHERE client_id = ${clientId} AND trace_id = ${traceId} AND trace_id IS NOT NULL
    ORDER BY created_at, id LIMIT ${limit}::int`.execute(db);
  return result.rows;
}

/** The entries of these transfers, in transfer and entry order (the primary key). */
export async function entriesOfTransfers(db: Db, clientId: string, transferIds: readonly string[]): Promise<EntryRow[]> {
  if (transferIds.length === 0) return [];
  const result = await sql<EntryRow>`
    SELECT transfer_id, entry_index, asset, amount::text AS amount, debit_account_id, debit_balance, credit_account_id, credit_balance
    FROM ledger_entries WHERE client_id = ${clientId} AND transfer_id = ANY(${transferIds}::uuid[])
    ORDER BY transfer_id, entry_index`.execute(db);
  return result.rows;
}

/**
 * The wallet records these transfers wrote. A record shares its transfer's parent transaction id,
 * so the parent index finds them (wallet_transactions has no index on ledger_transfer_id, and one
 * on the busiest table only for this read would cost every write).
 */
export async function recordsOfTransfers(
  db: Db,
  clientId: string,
  transfers: readonly { id: string; parentTransactionId: string | null }[],
  limit: number,
): Promise<RecordRow[]> {
  const parents = [...new Set(transfers.map((transfer) => transfer.parentTransactionId).filter((id): id is string => id !== null))];
  if (parents.length === 0) return [];
  const result = await sql<RecordRow>`
    SELECT id, ledger_transfer_id, wallet_id, parent_transaction_id, type, purpose, operation, balance_type, status, amount::text AS amount, asset, created_at
    FROM wallet_transactions
    WHERE client_id = ${clientId} AND parent_transaction_id = ANY(${parents}::uuid[]) AND ledger_transfer_id = ANY(${transfers.map((transfer) => transfer.id)}::uuid[])
    ORDER BY created_at, id LIMIT ${limit}::int`.execute(db);
  return result.rows;
}

/** The events the trace recorded (index events_trace on the generated trace_id). */
export async function eventsOfTrace(db: Db, clientId: string, traceId: string, limit: number): Promise<EventRow[]> {
  const result = await sql<EventRow>`
    SELECT id, type, data, created_at
    FROM events WHERE client_id = ${clientId} AND trace_id = ${traceId}
    ORDER BY created_at, id LIMIT ${limit}::int`.execute(db);
  return result.rows;
}

/**
 * The deliveries of these events. A delivery's id starts with the first 11 bytes of its event's
 * id (openbaas_delivery_id, migration 0004), so each event's deliveries are one range of the
 * primary key: no index on event_id is needed. Test deliveries have no event row, so none of
 * them is found.
 */
export async function deliveriesOfEvents(db: Db, clientId: string, eventIds: readonly string[], limit: number): Promise<DeliveryRow[]> {
  if (eventIds.length === 0) return [];
  const result = await sql<DeliveryRow>`
    SELECT d.id, d.event_id, d.event_type, d.subscription_id, d.status, d.attempt_count,
      CASE WHEN d.status = 'PENDING' THEN d.next_attempt_at END AS next_attempt_at, d.created_at
    FROM unnest(${eventIds}::uuid[]) AS e(id)
    CROSS JOIN LATERAL (
      SELECT d.* FROM webhook_deliveries d
      WHERE d.client_id = ${clientId}
        AND d.id BETWEEN encode(substring(uuid_send(e.id) FROM 1 FOR 11) || '\\x0000000000'::bytea, 'hex')::uuid
                     AND encode(substring(uuid_send(e.id) FROM 1 FOR 11) || '\\xffffffffff'::bytea, 'hex')::uuid
        AND d.event_id = e.id
    ) d
    ORDER BY d.created_at, d.id LIMIT ${limit}::int`.execute(db);
  return result.rows;
}

/** The attempts of these deliveries (the primary key). */
export async function attemptsOfDeliveries(db: Db, clientId: string, deliveryIds: readonly string[], limit: number): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const result = await sql<AttemptRow>`
    SELECT delivery_id, attempt_number, attempted_at, succeeded, http_status, latency_ms, error, response_body
    FROM webhook_delivery_attempts WHERE client_id = ${clientId} AND delivery_id = ANY(${deliveryIds}::uuid[])
    ORDER BY attempted_at, delivery_id, attempt_number LIMIT ${limit}::int`.execute(db);
  return result.rows;
}
