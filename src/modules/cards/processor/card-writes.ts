import { sql } from 'kysely';
import type { RowsKind } from '../../../platform/db/write-statement.js';
import type { CardSwipeRow, CardTransactionRow } from './card-transaction-views.js';

/**
 * The card processor's writes as kinds of rows of a combined statement (WriteStatement.addRows):
 * each kind writes any number of rows with one text, so the messages of a transaction group write
 * their records and lifecycles with one statement per table (transaction-groups.ts, "Writes
 * written together"). The rows travel as one JSON document, read by `jsonb_populate_recordset`
 * into the table's own row type, so every column converts exactly as an insert of its text would.
 */

/** The columns written, in one fixed order (the statement's text must not depend on the rows). */
const transactionColumns = [
  'client_id',
  'id',
  'trace_id',
  'swipe_id',
  'card_id',
  'wallet_id',
  'credit_line_id',
  'card_type',
  'type',
  'operation',
  'status',
  'mti',
  'processing_code',
  'asset',
  'amount_minor',
  'requested_minor',
  'held_minor',
  'transaction_minor',
  'transaction_currency',
  'surcharge_minor',
  'fees',
  'rrn',
  'stan',
  'transmission_date_time',
  'acquirer_id',
  'auth_code',
  'response_code',
  'decline_reason',
  'decision_source',
  'network_data_ref',
  'merchant',
  'request_fields',
  'response_mti',
  'response_fields',
  'expires_at',
  'expired_at',
  'over_capture',
  'force_post',
  'orphan',
  'ledger_hold_id',
  'created_at',
  'coop_decision',
  'repeat_of',
  'reverses_id',
] as const satisfies readonly (keyof CardTransactionRow)[];

const swipeColumns = [
  'client_id',
  'id',
  'card_id',
  'wallet_id',
  'credit_line_id',
  'card_type',
  'status',
  'asset',
  'network_data_ref',
  'first_mti',
  'stan',
  'transmission_date_time',
  'acquirer_id',
  'rrn',
  'held_minor',
  'posted_minor',
  'hold_id',
  'merchant',
  'mcc',
  'expires_at',
  'expired_at',
  'created_at',
  'updated_at',
  'coop_pending',
  'refund_authorized_minor',
] as const satisfies readonly (keyof CardSwipeRow)[];

/** What a change to a lifecycle may set; the rest of its row stays as inserted. */
const swipeChangingColumns = ['status', 'held_minor', 'posted_minor', 'hold_id', 'expires_at', 'expired_at', 'coop_pending', 'refund_authorized_minor', 'updated_at'] as const satisfies readonly (keyof CardSwipeRow)[];

const list = (columns: readonly string[], prefix = '') => sql.raw(columns.map((column) => `${prefix}${column}`).join(', '));

/**
 * New rows of `table` under the part name `name`, every column given (the card tables have no
 * defaults), read from one JSON document into the table's row type.
 */
function insertsFromJson<R>(name: string, table: 'card_transactions' | 'card_swipes', columns: readonly string[]): RowsKind<R> {
  return {
    name,
    parts: (rows) => [
      {
        name,
        statement: sql`
          INSERT INTO ${sql.table(table)} (${list(columns)})
          SELECT ${list(columns, 'r.')} FROM jsonb_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb) AS r`,
      },
    ],
  };
}

/** New card transaction records. */
export const cardTransactionInserts = insertsFromJson<CardTransactionRow>('card_transactions', 'card_transactions', transactionColumns);

/** New lifecycles. */
export const swipeInserts = insertsFromJson<CardSwipeRow>('card_swipes_new', 'card_swipes', swipeColumns);

/**
 * Lifecycles changed, each given as its whole new row (read and locked in this transaction, then
 * changed); the columns a change may set are written from it. Each must exist: the part returns a
 * row per lifecycle updated and the statement checks their number. The rows to change are found
 * by their physical location, each looked up by its whole key in a scalar subquery: joined to the
 * table instead, the generic plan (made expecting a hundred rows from the JSON document) read the
 * whole table into a hash for every group.
 */
export const swipeUpdates: RowsKind<CardSwipeRow> = {
  name: 'card_swipes_changed',
  parts: (rows) => [
    {
      name: 'card_swipes_changed',
      statement: sql`
        UPDATE card_swipes AS t SET ${sql.raw(swipeChangingColumns.map((column) => `${column} = c.${column}`).join(', '))}
        FROM jsonb_populate_recordset(NULL::card_swipes, ${JSON.stringify(rows)}::jsonb) AS c
        WHERE t.ctid = ANY (ARRAY(
            SELECT (SELECT x.ctid FROM card_swipes x WHERE x.client_id = k.client_id AND x.id = k.id)
            FROM unnest(${rows.map((row) => row.client_id)}::uuid[], ${rows.map((row) => row.id)}::uuid[]) AS k (client_id, id)))
          AND t.client_id = c.client_id AND t.id = c.id
        RETURNING 1`,
      expectRows: rows.length,
    },
  ],
};
