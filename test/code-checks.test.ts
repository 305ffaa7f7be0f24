import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * The code rules of migration 0011 (CHECK constraints without regular expressions), with the
 * regular expressions they replaced. Since migration 0034 a rule is a domain where it can be (the
 * columns that held the constraint are of that domain), and a table constraint otherwise.
 */
type CodeCheck = { pattern: string } & (
  | { domain: string; columns: [table: string, column: string][] }
  | { table: string; constraint: string; column: string }
);
const checks: CodeCheck[] = [
  { domain: 'wallet_record_code', columns: [['wallet_transactions', 'type'], ['wallet_transactions', 'purpose']], pattern: '^[A-Z][A-Z0-9_]{0,63}$' },
  { domain: 'event_type_code', columns: [['events', 'type']], pattern: '^[A-Z][A-Z0-9_]*$' },
  { table: 'webhook_deliveries', constraint: 'webhook_deliveries_event_type_check', column: 'event_type', pattern: '^[A-Z][A-Z0-9_]*$' },
];

const nameOf = (check: CodeCheck) => ('domain' in check ? `the domain ${check.domain}` : check.constraint);

/**
 * Runs the rule's own expression (read from the catalogue) and the old pattern on each text. The
 * probe's column is named as the expression names it: VALUE for a domain, the column for a table.
 */
async function judge(check: CodeCheck, texts: string[]): Promise<{ text: string; constraint: boolean; pattern: boolean }[]> {
  const found =
    'domain' in check
      ? await sql<{ expression: string }>`
          SELECT pg_get_expr(conbin, 0) AS expression FROM pg_constraint WHERE contypid = ${check.domain}::regtype`.execute(t.deps.db)
      : await sql<{ expression: string }>`
          SELECT pg_get_expr(conbin, conrelid) AS expression FROM pg_constraint
          WHERE conname = ${check.constraint} AND conrelid = ${check.table}::regclass`.execute(t.deps.db);
  expect(found.rows).toHaveLength(1);
  const expression = found.rows[0]?.expression;
  if (!expression) throw new Error(`${nameOf(check)} was not found`);
  const column = sql.ref('domain' in check ? 'value' : check.column);
  const result = await sql<{ text: string; constraint: boolean; pattern: boolean }>`
    SELECT ${column} AS text, coalesce((${sql.raw(expression)}), false) AS constraint, ${column} ~ ${check.pattern} AS pattern
    FROM unnest(${texts}::text[]) AS probe (${column})`.execute(t.deps.db);
  return result.rows;
}

const edgeCases = [
  '',
  'A',
  'a',
  '_',
  '0ABC',
  'INTERNAL_TRANSFER',
  'INTERNAL_TRANSACTION_COMPLETED',
  'CARD_2',
  'Internal',
  'ABC-DEF',
  'ABC DEF',
  'ÉCOLE',
  'AÉ',
  'A\u00a0B',
  `A${'B'.repeat(63)}`,
  `A${'B'.repeat(64)}`,
  `A${'_'.repeat(200)}`,
];

describe('code checks without regular expressions (migrations 0011 and 0034)', () => {
  for (const check of checks) {
    if ('domain' in check) {
      it(`${check.columns.map(([table, column]) => `${table}.${column}`).join(' and ')} of the domain ${check.domain}`, async () => {
        for (const [table, column] of check.columns) {
          const found = await sql<{ type: string }>`
            SELECT format_type(atttypid, NULL) AS type FROM pg_attribute WHERE attrelid = ${table}::regclass AND attname = ${column}`.execute(t.deps.db);
          expect(found.rows).toEqual([{ type: check.domain }]);
        }
      });
    }

    it(`${nameOf(check)} accepts exactly what ${check.pattern} accepted`, async () => {
      for (const row of await judge(check, edgeCases)) expect({ text: row.text, accepted: row.constraint }).toEqual({ text: row.text, accepted: row.pattern });
      const alphabet = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'.split(''), 'a', 'z', '-', ' ', 'É', '9', '\u00a0');
      await fc.assert(
        fc.asyncProperty(fc.array(fc.string({ unit: alphabet, maxLength: 70 }), { minLength: 1, maxLength: 40 }), async (texts) => {
          for (const row of await judge(check, texts)) expect(row.constraint).toBe(row.pattern);
        }),
        { numRuns: 40 },
      );
    });
  }
});

/**
 * The one-column rules that became domains (migrations 0034 and 0035): each still refuses what
 * its CHECK constraint refused, with the same SQLSTATE (23514), and accepts a value on the edge.
 */
const domainRules: { domain: string; accepted: string[]; refused: string[] }[] = [
  { domain: 'positive_amount', accepted: ['1'], refused: ['0', '-1'] },
  { domain: 'non_negative_amount', accepted: ['0'], refused: ['-1'] },
  { domain: 'non_negative_minor', accepted: ['0'], refused: ['-1'] },
  { domain: 'note_text', accepted: ['x'.repeat(1000)], refused: ['x'.repeat(1001)] },
  { domain: 'trace_id_text', accepted: ['t', 't'.repeat(128)], refused: ['', 't'.repeat(129)] },
  { domain: 'ledger_balance', accepted: ['AVAILABLE', 'RESERVED', 'PENDING'], refused: ['available', 'OVERDRAWN'] },
  { domain: 'record_operation', accepted: ['CREDIT', 'DEBIT'], refused: ['credit'] },
  { domain: 'record_status', accepted: ['PENDING', 'COMPLETED', 'FAILED', 'CANCELLED'], refused: ['OPEN'] },
  { domain: 'ledger_transfer_kind', accepted: ['TRANSFER', 'HOLD_EXPIRE', 'PENDING_FAIL'], refused: ['HOLD'] },
  { domain: 'system_account_shard', accepted: ['0', '255'], refused: ['-1', '256'] },
  { domain: 'trade_pair_symbol', accepted: ['BTC', 'B'.repeat(40)], refused: ['BT', 'B'.repeat(41)] },
  { domain: 'trade_direction', accepted: ['direct', 'reverse'], refused: ['DIRECT'] },
  { domain: 'trade_side', accepted: ['buy', 'sell'], refused: ['hold'] },
  { domain: 'trade_price_decimals', accepted: ['0', '18'], refused: ['-1', '19'] },
  { domain: 'trade_fee_rate', accepted: ['0', '0.999999999999999999'], refused: ['-0.000000000000000001', '1'] },
  { domain: 'trade_quote_ttl_seconds', accepted: ['5', '900'], refused: ['4', '901'] },
  { domain: 'trade_quote_status', accepted: ['OPEN', 'EXECUTED', 'FAILED'], refused: ['COMPLETED'] },
  { domain: 'trade_failure_code', accepted: ['L', 'L'.repeat(64)], refused: ['', 'L'.repeat(65)] },
  { domain: 'card_kind', accepted: ['DEBIT', 'CREDIT'], refused: ['PREPAID'] },
  { domain: 'card_transaction_type', accepted: ['PRE_AUTHORIZATION', 'REVERSAL_ADVICE'], refused: ['ONLINE_TRANSACTION'] },
  { domain: 'card_decision_source', accepted: ['SYSTEM', 'CLIENT', 'STAND_IN', 'NETWORK'], refused: ['ISSUER'] },
  { domain: 'card_asset_text', accepted: ['U', 'U'.repeat(16)], refused: ['', 'U'.repeat(17)] },
  { domain: 'jsonb_object_value', accepted: ['{}'], refused: ['[]', '"text"'] },
  { domain: 'jsonb_array_value', accepted: ['[]'], refused: ['{}'] },
  { domain: 'ledger_hold_status', accepted: ['OPEN', 'CAPTURED', 'RELEASED', 'EXPIRED'], refused: ['CLOSED'] },
  { domain: 'iso_mti', accepted: ['0100', '0420'], refused: ['100', '1100', '01000'] },
  { domain: 'iso_six_digits', accepted: ['000000'], refused: ['00000', '00000a'] },
  { domain: 'iso_transmission_date_time', accepted: ['1127134500'], refused: ['112713450'] },
  { domain: 'iso_acquirer_id', accepted: ['', '12345678901'], refused: ['123456789012', 'A'] },
  { domain: 'iso_rrn', accepted: ['633113256382'], refused: ['63311325638'] },
  { domain: 'iso_mcc', accepted: ['5411'], refused: ['541', 'ABCD'] },
  { domain: 'iso_auth_code', accepted: ['A1B2C3'], refused: ['A1B2C'] },
  { domain: 'iso_response_code', accepted: ['00'], refused: ['0'] },
  { domain: 'iso_currency_code', accepted: ['840'], refused: ['84'] },
  { domain: 'network_data_ref_text', accepted: ['0123456789ABCDEF'], refused: ['0123456789ABCDE'] },
];

describe('one-column rules as domains (migrations 0034 and 0035)', () => {
  it('each domain accepts the values on its edges and refuses the others with SQLSTATE 23514', async () => {
    for (const rule of domainRules) {
      for (const value of rule.accepted) {
        const result = await sql<{ ok: boolean }>`SELECT ${value}::${sql.raw(rule.domain)} IS NOT NULL AS ok`.execute(t.deps.db);
        expect({ domain: rule.domain, value, ok: result.rows[0]?.ok }).toEqual({ domain: rule.domain, value, ok: true });
      }
      for (const value of rule.refused) {
        const error = await sql`SELECT ${value}::${sql.raw(rule.domain)}`.execute(t.deps.db).then(
          () => undefined,
          (caught: unknown) => caught as { code?: string },
        );
        expect({ domain: rule.domain, value, code: error?.code }).toEqual({ domain: rule.domain, value, code: '23514' });
      }
    }
  });

  it('a column of a domain refuses a bad value in an insert, naming the domain', async () => {
    const error = await sql`
      INSERT INTO ledger_transfers (client_id, id, kind, created_at) VALUES (${t.clientA.id}, gen_random_uuid(), 'NOT_A_KIND', now())`
      .execute(t.deps.db)
      .then(
        () => undefined,
        (caught: unknown) => caught as { code?: string; message?: string },
      );
    expect(error?.code).toBe('23514');
    expect(error?.message).toMatch(/ledger_transfer_kind/);
  });
});
