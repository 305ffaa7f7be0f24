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
  | { table: string; constraint: string }
);
const checks: CodeCheck[] = [
  { domain: 'wallet_record_code', columns: [['wallet_transactions', 'type'], ['wallet_transactions', 'purpose']], pattern: '^[A-Z][A-Z0-9_]{0,63}$' },
  { domain: 'event_type_code', columns: [['events', 'type']], pattern: '^[A-Z][A-Z0-9_]*$' },
  { table: 'webhook_deliveries', constraint: 'webhook_deliveries_event_type_check', pattern: '^[A-Z][A-Z0-9_]*$' },
];

const nameOf = (check: CodeCheck) => ('domain' in check ? `the domain ${check.domain}` : check.constraint);

/** Runs the rule's own expression (read from the catalogue) and the old pattern on each text. */
async function judge(check: CodeCheck, texts: string[]): Promise<{ text: string; constraint: boolean; pattern: boolean }[]> {
  const found =
    'domain' in check
      ? await sql<{ expression: string }>`
          SELECT pg_get_expr(conbin, 0) AS expression FROM pg_constraint WHERE contypid = ${check.domain}::regtype`.execute(t.deps.db)
      : // The table's column, named value in the probe below.
        await sql<{ expression: string }>`
          SELECT replace(pg_get_expr(conbin, conrelid), 'event_type', 'value') AS expression FROM pg_constraint
          WHERE conname = ${check.constraint} AND conrelid = ${check.table}::regclass`.execute(t.deps.db);
  expect(found.rows).toHaveLength(1);
  const expression = found.rows[0]?.expression;
  if (!expression) throw new Error(`${nameOf(check)} was not found`);
  const result = await sql<{ text: string; constraint: boolean; pattern: boolean }>`
    SELECT probe.value AS text, coalesce((${sql.raw(expression)}), false) AS constraint, probe.value ~ ${check.pattern} AS pattern
    FROM unnest(${texts}::text[]) AS probe (value)`.execute(t.deps.db); // VALUE in the domain's expression reads the column named value
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
