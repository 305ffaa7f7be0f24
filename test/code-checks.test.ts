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

/** The CHECK constraints of migration 0011, with the regular expressions they replaced. */
const checks = [
  { table: 'wallet_transactions', constraint: 'wallet_transactions_type_check', column: 'type', pattern: '^[A-Z][A-Z0-9_]{0,63}$' },
  { table: 'wallet_transactions', constraint: 'wallet_transactions_purpose_check', column: 'purpose', pattern: '^[A-Z][A-Z0-9_]{0,63}$' },
  { table: 'events', constraint: 'events_type_check', column: 'type', pattern: '^[A-Z][A-Z0-9_]*$' },
  { table: 'webhook_deliveries', constraint: 'webhook_deliveries_event_type_check', column: 'event_type', pattern: '^[A-Z][A-Z0-9_]*$' },
];

/** Runs the constraint's own expression (read from the catalogue) and the old pattern on each text. */
async function judge(check: (typeof checks)[number], texts: string[]): Promise<{ text: string; constraint: boolean; pattern: boolean }[]> {
  const found = await sql<{ expression: string }>`
    SELECT pg_get_expr(conbin, conrelid) AS expression FROM pg_constraint
    WHERE conname = ${check.constraint} AND conrelid = ${check.table}::regclass`.execute(t.deps.db);
  const expression = found.rows[0]?.expression;
  if (!expression) throw new Error(`constraint ${check.constraint} not found`);
  const result = await sql<{ text: string; constraint: boolean; pattern: boolean }>`
    SELECT ${sql.ref(check.column)} AS text, coalesce((${sql.raw(expression)}), false) AS constraint, ${sql.ref(check.column)} ~ ${check.pattern} AS pattern
    FROM unnest(${texts}::text[]) AS probe (${sql.ref(check.column)})`.execute(t.deps.db);
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

describe('code CHECK constraints without regular expressions (migration 0011)', () => {
  for (const check of checks) {
    it(`${check.constraint} accepts exactly what ${check.pattern} accepted`, async () => {
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
