import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import './ledger.tables.js';

/** At most this many offending rows are reported per check (the count is always complete). */
export const verifyRowsPerCheckMax = 50;

export interface VerifyCheck {
  name: string;
  description: string;
  /** How many rows break the rule. */
  violationCount: number;
  /** The first offending rows, each naming its table and key. */
  violations: Record<string, unknown>[];
}

/**
 * Wallet accounts whose AVAILABLE is below zero: allowed only by a forced posting's recorded
 * shortfall (the `wallet_balances_not_negative` check), and listed apart, as CONTRACT §12.3 says,
 * so an operator sees who owes money (until 2026-12-07 they were not listed; found by an audit).
 */
export interface OverdrawnWallets {
  /** How many wallet accounts are overdrawn. */
  count: number;
  /**
   * The first of them (at most verifyRowsPerCheckMax), deepest first, each with its latest forced
   * posting that AVAILABLE could not cover: when, and under which parent transaction (a card
   * swipe's or a bank payment's id, as in `GET /v1/transactions`), so an operator can tell a card's
   * from a returned deposit's.
   */
  wallets: {
    clientId: string;
    walletId: string;
    asset: string;
    available: string;
    overdrawn: string;
    lastShortfall: { parentTransactionId: string | null; at: string } | null;
  }[];
}

export interface VerifyReport {
  ok: boolean;
  checks: VerifyCheck[];
  overdrawn: OverdrawnWallets;
  totals: { accounts: number; transfers: number; entries: number; holds: number; pendingCredits: number; walletTransactions: number };
}

/** Every movement of every entry, signed: the debit side negative, the credit side positive. */
const movements = sql`
  SELECT client_id, transfer_id, asset, debit_account_id AS account_id, debit_balance AS balance, -amount AS amount FROM ledger_entries
  UNION ALL
  SELECT client_id, transfer_id, asset, credit_account_id, credit_balance, amount FROM ledger_entries`;

export interface CheckDefinition {
  name: string;
  description: string;
  query: RawBuilder<Record<string, unknown>>;
}

export const verifyChecks: readonly CheckDefinition[] = [
  {
    name: 'transfer_zero_sum',
    description: 'the entries of every ledger transfer sum to zero per asset',
    query: sql`
      SELECT client_id, transfer_id, asset, sum(amount)::text AS total
      FROM (${movements}) m GROUP BY client_id, transfer_id, asset HAVING sum(amount) <> 0`,
  },
  {
    name: 'transfer_has_entries',
    description: 'every ledger transfer moves something',
    query: sql`
      SELECT t.client_id, t.id AS transfer_id, t.kind FROM ledger_transfers t
      WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.client_id = t.client_id AND e.transfer_id = t.id)`,
  },
  {
    name: 'references_exist',
    description: 'every entry names an existing ledger transfer and two existing accounts of its asset, and every wallet transaction an existing ledger transfer',
    // The database checks these when the rows are written (migration 0014); this finds rows written
    // around those checks.
    query: sql`
      SELECT 'ledger_entries' AS table_name, e.client_id, e.transfer_id, e.entry_index::text AS entry_index, NULL::uuid AS id
      FROM ledger_entries e
      LEFT JOIN ledger_transfers t ON t.client_id = e.client_id AND t.id = e.transfer_id
      LEFT JOIN ledger_accounts d ON d.client_id = e.client_id AND d.id = e.debit_account_id AND d.asset = e.asset
      LEFT JOIN ledger_accounts c ON c.client_id = e.client_id AND c.id = e.credit_account_id AND c.asset = e.asset
      WHERE t.id IS NULL OR d.id IS NULL OR c.id IS NULL
      UNION ALL
      SELECT 'wallet_transactions', w.client_id, w.ledger_transfer_id, NULL, w.id
      FROM wallet_transactions w
      LEFT JOIN ledger_transfers t ON t.client_id = w.client_id AND t.id = w.ledger_transfer_id
      WHERE t.id IS NULL`,
  },
  {
    name: 'balances_match_entries',
    description: 'every account balance equals the sum of its entries',
    query: sql`
      WITH sums AS (
        SELECT client_id, account_id,
          coalesce(sum(amount) FILTER (WHERE balance = 'AVAILABLE'), 0) AS available,
          coalesce(sum(amount) FILTER (WHERE balance = 'RESERVED'), 0) AS reserved,
          coalesce(sum(amount) FILTER (WHERE balance = 'PENDING'), 0) AS pending
        FROM (${movements}) m GROUP BY client_id, account_id
      )
      SELECT a.client_id, a.id AS account_id, a.kind, a.wallet_id, a.shard, a.asset,
        a.available::text AS available, coalesce(s.available, 0)::text AS available_from_entries,
        a.reserved::text AS reserved, coalesce(s.reserved, 0)::text AS reserved_from_entries,
        a.pending::text AS pending, coalesce(s.pending, 0)::text AS pending_from_entries
      FROM ledger_accounts a LEFT JOIN sums s ON s.client_id = a.client_id AND s.account_id = a.id
      WHERE a.available <> coalesce(s.available, 0) OR a.reserved <> coalesce(s.reserved, 0) OR a.pending <> coalesce(s.pending, 0)`,
  },
  {
    name: 'wallet_balances_not_negative',
    description: 'no customer balance is negative, except AVAILABLE by exactly a shortfall recorded by a forced capture',
    query: sql`
      SELECT a.client_id, a.id AS account_id, a.wallet_id, a.asset, a.available::text AS available, a.reserved::text AS reserved,
        a.pending::text AS pending, a.overdrawn::text AS overdrawn
      FROM ledger_accounts a
      WHERE a.kind = 'WALLET' AND (
        a.reserved < 0 OR a.pending < 0 OR a.overdrawn <> GREATEST(0, -a.available)
        OR (a.available < 0 AND NOT EXISTS (
          SELECT 1 FROM ledger_holds h WHERE h.client_id = a.client_id AND h.account_id = a.id AND h.shortfall > 0)))`,
  },
  {
    name: 'reserved_equals_open_holds',
    description: 'every wallet account reserves exactly what its open holds still hold',
    query: sql`
      SELECT a.client_id, a.id AS account_id, a.wallet_id, a.asset, a.reserved::text AS reserved, coalesce(h.total, 0)::text AS open_holds
      FROM ledger_accounts a
      LEFT JOIN (SELECT client_id, account_id, sum(amount_remaining) AS total FROM ledger_holds WHERE status = 'OPEN' GROUP BY 1, 2) h
        ON h.client_id = a.client_id AND h.account_id = a.id
      WHERE a.kind = 'WALLET' AND a.reserved <> coalesce(h.total, 0)`,
  },
  {
    name: 'holds_match_entries',
    description: 'every hold’s placed, captured, over-captured, released and remaining amounts equal its entries',
    query: sql`
      WITH per_hold AS (
        SELECT h.client_id, h.id, h.status,
          h.amount_placed, h.amount_remaining, h.amount_captured, h.amount_over_captured, h.amount_released,
          coalesce(sum(e.amount) FILTER (WHERE e.debit_account_id = h.account_id AND e.debit_balance = 'AVAILABLE'
            AND e.credit_account_id = h.account_id AND e.credit_balance = 'RESERVED'), 0) AS placed,
          coalesce(sum(e.amount) FILTER (WHERE e.debit_account_id = h.account_id AND e.debit_balance = 'RESERVED'
            AND e.credit_account_id = h.account_id AND e.credit_balance = 'AVAILABLE'), 0) AS released,
          coalesce(sum(e.amount) FILTER (WHERE t.kind = 'HOLD_CAPTURE' AND e.debit_account_id = h.account_id
            AND e.credit_account_id <> h.account_id), 0) AS captured,
          coalesce(sum(e.amount) FILTER (WHERE t.kind = 'HOLD_CAPTURE' AND e.debit_account_id = h.account_id
            AND e.debit_balance = 'AVAILABLE' AND e.credit_account_id <> h.account_id), 0) AS over_captured
        FROM ledger_holds h
        LEFT JOIN ledger_transfers t ON t.client_id = h.client_id AND t.hold_id = h.id
        LEFT JOIN ledger_entries e ON e.client_id = t.client_id AND e.transfer_id = t.id
        GROUP BY h.client_id, h.id
      )
      SELECT client_id, id AS hold_id, status,
        amount_placed::text AS placed, placed::text AS placed_from_entries,
        amount_captured::text AS captured, captured::text AS captured_from_entries,
        amount_over_captured::text AS over_captured, over_captured::text AS over_captured_from_entries,
        amount_released::text AS released, released::text AS released_from_entries,
        amount_remaining::text AS remaining
      FROM per_hold
      WHERE amount_placed <> placed OR amount_captured <> captured OR amount_over_captured <> over_captured
        OR amount_released <> released
        OR amount_remaining <> amount_placed - (amount_captured - amount_over_captured) - amount_released
        OR (status = 'OPEN') <> (amount_remaining > 0)`,
  },
  {
    name: 'pending_equals_open_credits',
    description: 'every wallet account’s PENDING balance equals its pending credits not yet cleared or failed',
    query: sql`
      SELECT a.client_id, a.id AS account_id, a.wallet_id, a.asset, a.pending::text AS pending, coalesce(p.total, 0)::text AS open_credits
      FROM ledger_accounts a
      LEFT JOIN (SELECT client_id, account_id, sum(amount) AS total FROM ledger_pending_credits WHERE status = 'PENDING' GROUP BY 1, 2) p
        ON p.client_id = a.client_id AND p.account_id = a.id
      WHERE a.kind = 'WALLET' AND a.pending <> coalesce(p.total, 0)`,
  },
  {
    name: 'wallet_effects_recorded',
    description: 'every ledger transfer that touches a wallet has its records in the wallet transaction history',
    // Written as set operations (each side of each entry, EXCEPT the history's records), so no
    // join against the history is left for the planner to choose. As a NOT EXISTS it became a
    // nested loop probing the history by wallet, quadratic for a hot wallet: minutes for 60,000
    // transfers into one wallet, on tables not yet analysed (see also planForWholeLedger).
    query: sql`
      WITH wallet_sides AS (
        SELECT e.client_id, e.transfer_id, a.wallet_id
        FROM ledger_entries e JOIN ledger_accounts a ON a.client_id = e.client_id AND a.id = e.debit_account_id
        WHERE a.kind = 'WALLET'
        UNION
        SELECT e.client_id, e.transfer_id, a.wallet_id
        FROM ledger_entries e JOIN ledger_accounts a ON a.client_id = e.client_id AND a.id = e.credit_account_id
        WHERE a.kind = 'WALLET'
      )
      SELECT client_id, transfer_id, wallet_id FROM wallet_sides
      EXCEPT
      SELECT client_id, ledger_transfer_id, wallet_id FROM wallet_transactions`,
  },
  // Credit lines (src/modules/credit) keep their figures beside the ledger: what they lent is the
  // CREDIT_LENDING account, their collateral a hold, their card holds rows of their own. These
  // checks tie the two together.
  {
    name: 'credit_lending_equals_principal',
    description: 'per client, what the CREDIT_LENDING account lent (minus its balance) equals the principal its credit lines owe',
    query: sql`
      WITH lent AS (
        SELECT client_id, -sum(available) AS lent FROM ledger_accounts WHERE kind = 'CREDIT_LENDING' GROUP BY client_id
      ), owed AS (
        SELECT client_id, sum(principal) AS principal FROM credit_lines GROUP BY client_id
      )
      SELECT coalesce(l.client_id, o.client_id) AS client_id, coalesce(l.lent, 0)::text AS lent, coalesce(o.principal, 0)::text AS principal
      FROM lent l FULL JOIN owed o ON o.client_id = l.client_id
      WHERE coalesce(l.lent, 0) <> coalesce(o.principal, 0)`,
  },
  {
    name: 'credit_collateral_equals_hold',
    description: 'every credit line\'s locked collateral equals what its open collateral hold still reserves',
    query: sql`
      SELECT c.client_id, c.id AS credit_line_id, c.collateral_amount::text AS collateral, h.amount_remaining::text AS held, h.status
      FROM credit_lines c
      LEFT JOIN ledger_holds h ON h.client_id = c.client_id AND h.id = c.collateral_hold_id
      WHERE (c.collateral_hold_id IS NULL AND c.collateral_amount <> 0)
         OR (c.collateral_hold_id IS NOT NULL AND (h.id IS NULL OR h.status <> 'OPEN' OR h.amount_remaining <> c.collateral_amount))`,
  },
  {
    name: 'credit_pending_holds_equal_open_holds',
    description: 'every credit line\'s pending holds equal the sum of its open card holds',
    query: sql`
      WITH open_holds AS (
        SELECT client_id, credit_line_id, sum(amount) AS amount FROM credit_line_holds WHERE status = 'OPEN' GROUP BY client_id, credit_line_id
      )
      SELECT c.client_id, c.id AS credit_line_id, c.pending_holds::text AS pending_holds, coalesce(o.amount, 0)::text AS open_holds
      FROM credit_lines c LEFT JOIN open_holds o ON o.client_id = c.client_id AND o.credit_line_id = c.id
      WHERE c.pending_holds <> coalesce(o.amount, 0)`,
  },
];

async function runCheck(tx: Tx, check: CheckDefinition): Promise<VerifyCheck> {
  const counted = await sql<{ count: string }>`SELECT count(*)::text AS count FROM (${check.query}) c`.execute(tx);
  const violationCount = Number(counted.rows[0]?.count ?? 0);
  const violations =
    violationCount === 0 ? [] : (await sql<Record<string, unknown>>`${check.query} LIMIT ${verifyRowsPerCheckMax}`.execute(tx)).rows;
  return { name: check.name, description: check.description, violationCount, violations };
}

/**
 * The planner settings of a verification, for the rest of the transaction `tx`. Every check reads
 * whole tables, which hash joins do in time proportional to their size. A nested loop is only
 * right when one side is small, and the planner decides that from statistics, which may be stale
 * (tables just filled, not yet analysed) or misleading (one hot wallet holding most entries). A
 * nested loop chosen that way is quadratic: it once kept a check running for minutes. Nested loops
 * are therefore turned off; every join of the checks is an equality, so a hash join is always
 * possible.
 */
export async function planForWholeLedger(tx: Tx): Promise<void> {
  await sql`SET LOCAL enable_nestloop = off`.execute(tx);
}

/**
 * Recomputes every balance from the entries and checks every ledger invariant, in one read-only
 * snapshot so it can run next to a live server.
 */
export async function verifyLedger(db: Db): Promise<VerifyReport> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (tx) => {
      await planForWholeLedger(tx);
      const results: VerifyCheck[] = [];
      for (const check of verifyChecks) results.push(await runCheck(tx, check));
      const totals = await sql<Record<string, string>>`
        SELECT (SELECT count(*) FROM ledger_accounts)::text AS accounts,
               (SELECT count(*) FROM ledger_transfers)::text AS transfers,
               (SELECT count(*) FROM ledger_entries)::text AS entries,
               (SELECT count(*) FROM ledger_holds)::text AS holds,
               (SELECT count(*) FROM ledger_pending_credits)::text AS pending_credits,
               (SELECT count(*) FROM wallet_transactions)::text AS wallet_transactions`.execute(tx);
      const row = totals.rows[0] ?? {};
      // The latest shortfall of each listed wallet in one pass over the holds (a hold with a
      // shortfall is closed, so no index of open holds serves it).
      const overdrawn = await sql<{
        client_id: string;
        wallet_id: string;
        asset: string;
        available: string;
        overdrawn: string;
        count: string;
        shortfall_parent_id: string | null;
        shortfall_at: Date | null;
      }>`
        WITH listed AS (
          SELECT a.client_id, a.id, a.wallet_id, a.asset, a.available, a.overdrawn, count(*) OVER () AS count
          FROM ledger_accounts a WHERE a.kind = 'WALLET' AND a.available < 0
          ORDER BY a.available, a.client_id, a.wallet_id, a.asset LIMIT ${verifyRowsPerCheckMax}),
        latest AS (
          SELECT DISTINCT ON (h.client_id, h.account_id) h.client_id, h.account_id, h.parent_transaction_id, h.updated_at
          FROM ledger_holds h JOIN listed l ON l.client_id = h.client_id AND l.id = h.account_id
          WHERE h.shortfall > 0
          ORDER BY h.client_id, h.account_id, h.updated_at DESC, h.id DESC)
        SELECT l.client_id, l.wallet_id, l.asset, l.available::text AS available, l.overdrawn::text AS overdrawn, l.count::text AS count,
               s.parent_transaction_id AS shortfall_parent_id, s.updated_at AS shortfall_at
        FROM listed l LEFT JOIN latest s ON s.client_id = l.client_id AND s.account_id = l.id
        ORDER BY l.available, l.client_id, l.wallet_id, l.asset`.execute(tx);
      return {
        ok: results.every((check) => check.violationCount === 0),
        checks: results,
        overdrawn: {
          count: Number(overdrawn.rows[0]?.count ?? 0),
          wallets: overdrawn.rows.map((wallet) => ({
            clientId: wallet.client_id,
            walletId: wallet.wallet_id,
            asset: wallet.asset,
            available: wallet.available,
            overdrawn: wallet.overdrawn,
            lastShortfall: wallet.shortfall_at === null ? null : { parentTransactionId: wallet.shortfall_parent_id, at: new Date(wallet.shortfall_at).toISOString() },
          })),
        },
        totals: {
          accounts: Number(row.accounts ?? 0),
          transfers: Number(row.transfers ?? 0),
          entries: Number(row.entries ?? 0),
          holds: Number(row.holds ?? 0),
          pendingCredits: Number(row.pending_credits ?? 0),
          walletTransactions: Number(row.wallet_transactions ?? 0),
        },
      };
    });
}

/** A report for people: one line per check, then the offending rows of each failed check. */
export function formatVerifyReport(report: VerifyReport): string {
  const lines = [
    `Ledger: ${report.totals.accounts} accounts, ${report.totals.transfers} transfers, ${report.totals.entries} entries, ` +
      `${report.totals.holds} holds, ${report.totals.pendingCredits} pending credits, ${report.totals.walletTransactions} wallet transactions.`,
  ];
  for (const check of report.checks) {
    lines.push(`${check.violationCount === 0 ? 'ok  ' : 'FAIL'} ${check.name}: ${check.description}${check.violationCount ? ` (${check.violationCount} violation(s))` : ''}`);
    for (const violation of check.violations) lines.push(`       ${JSON.stringify(violation)}`);
    if (check.violationCount > check.violations.length) lines.push(`       … and ${check.violationCount - check.violations.length} more`);
  }
  const { overdrawn } = report;
  lines.push(
    overdrawn.count === 0
      ? 'Overdrawn wallets: none.'
      : `Overdrawn wallets (AVAILABLE below zero by a forced posting: a card's, or a settled ACH deposit's return, which the rules allow): ${overdrawn.count}, in minor units, deepest first:`,
  );
  for (const wallet of overdrawn.wallets) {
    const last = wallet.lastShortfall;
    const cause = last ? `; last forced posting ${last.at}${last.parentTransactionId ? ` under ${last.parentTransactionId}` : ''}` : '';
    lines.push(`       client ${wallet.clientId} wallet ${wallet.walletId} ${wallet.asset}: available ${wallet.available}, overdrawn ${wallet.overdrawn}${cause}`);
  }
  if (overdrawn.count > overdrawn.wallets.length) lines.push(`       … and ${overdrawn.count - overdrawn.wallets.length} more`);
  lines.push(report.ok ? 'Ledger verified: every invariant holds.' : 'Ledger verification FAILED.');
  return lines.join('\n');
}

/** `openbaas ledger verify`: prints the report and answers the exit code (0 clean, 1 on any violation). */
export async function ledgerVerifyCommand(db: Db, write: (text: string) => void, json: boolean): Promise<number> {
  const report = await verifyLedger(db);
  write(json ? `${JSON.stringify(report, null, 2)}\n` : `${formatVerifyReport(report)}\n`);
  return report.ok ? 0 : 1;
}
