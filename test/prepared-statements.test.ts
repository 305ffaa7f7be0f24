import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral } from '../src/platform/db/parameters.js';
import { forgetPreparedStatementNames, prepared, preparedStatementName } from '../src/platform/db/prepared-statements.js';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('array parameters', () => {
  it('reach the database unchanged, whatever the text (quotes, backslashes, braces, spaces, NULL, empty)', async () => {
    const awkward = ['', 'NULL', 'null', 'a,b', '{x}', 'say "hi"', 'back\\slash', ' lead', 'tab\there', 'é ü 中', 'plain-1.5:Z'];
    const rows = await sql<{ value: string[] }>`SELECT ${awkward}::text[] AS value`.execute(t.deps.db);
    expect(rows.rows[0]?.value).toEqual(awkward);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(fc.string({ unit: 'grapheme' }).filter((text) => !text.includes('\u0000')), { nil: null }), { maxLength: 8 }), async (values) => {
        const result = await sql<{ value: (string | null)[] }>`SELECT ${values}::text[] AS value`.execute(t.deps.db);
        expect(result.rows[0]?.value).toEqual(values);
      }),
      { numRuns: 60 },
    );
  });

  it('carry ids, amounts, booleans, dates and nulls in one literal without quoting', async () => {
    const moment = new Date('2026-11-21T10:00:00.123Z');
    expect(arrayLiteral(['019c8f2e-6b1a-7c3d-9e4f-0a1b2c3d4e5f', null, 12n, -3, true, moment])).toBe(
      '{019c8f2e-6b1a-7c3d-9e4f-0a1b2c3d4e5f,NULL,12,-3,true,2026-11-21T10:00:00.123Z}',
    );
    const rows = await sql<{ at: Date[]; amounts: string[] }>`SELECT ${[moment, null]}::timestamptz[] AS at, (${[10n ** 20n, -5n]}::numeric[])::text[] AS amounts`.execute(t.deps.db);
    expect(rows.rows[0]?.at).toEqual([moment, null]);
    expect(rows.rows[0]?.amounts).toEqual(['100000000000000000000', '-5']);
  });

  it('leave what they do not know to node-postgres (buffers, objects, invalid dates)', () => {
    expect(arrayLiteral([Buffer.from('x')])).toBeUndefined();
    expect(arrayLiteral([{ a: 1 }])).toBeUndefined();
    expect(arrayLiteral([new Date(Number.NaN)])).toBeUndefined();
  });
});

describe('prepared statements', () => {
  it('run under one name per text, and give the same answers as unnamed statements', async () => {
    const statement = (value: number) => prepared(sql<{ doubled: number }>`SELECT (${value}::int * 2) AS doubled`);
    const compiled = statement(1).compile(t.deps.db);
    const name = preparedStatementName(compiled.sql);
    expect(name).toMatch(/^ob_/);
    expect(preparedStatementName(statement(2).compile(t.deps.db).sql)).toBe(name);
    expect(preparedStatementName('SELECT 1')).toBeUndefined();
    for (const value of [1, 2, 3, 4, 5, 6, 7]) {
      const result = await statement(value).execute(t.deps.db);
      expect(result.rows[0]?.doubled).toBe(value * 2);
    }
  });

  it('still report errors, and the connection stays usable afterwards', async () => {
    const failing = (value: string) => prepared(sql`SELECT ${value}::uuid AS id`);
    await expect(failing('not-a-uuid').execute(t.deps.db)).rejects.toThrow(/uuid/);
    const ok = await failing('019c8f2e-6b1a-7c3d-9e4f-0a1b2c3d4e5f').execute(t.deps.db);
    expect(ok.rows).toHaveLength(1);
  });
});

describe('prepared statement names', () => {
  // It fills the process's table of names, and empties it at the end: the test files sharing this
  // process would otherwise run their prepared statements unnamed (and the plan tests fail).
  it('stop at the cap with one warning, and marked statements past it still run (unnamed)', async () => {
    const { preparedStatementsMax } = await import('../src/platform/db/prepared-statements.js');
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const names = Array.from({ length: preparedStatementsMax + 5 }, (_, index) => preparedStatementName(prepared(sql`SELECT ${sql.raw(String(index))}`).compile(t.deps.db).sql));
      expect(names.filter((name) => name === undefined).length).toBeGreaterThanOrEqual(5);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'OpenBaaSWarning')).toHaveLength(1);
      const result = await prepared(sql<{ value: number }>`SELECT ${sql.raw(String(preparedStatementsMax + 100))}::int AS value`).execute(t.deps.db);
      expect(result.rows[0]?.value).toBe(preparedStatementsMax + 100);
    } finally {
      process.off('warning', onWarning);
      forgetPreparedStatementNames();
    }
    const again = prepared(sql`SELECT ${sql.raw(String(preparedStatementsMax + 200))}`).compile(t.deps.db).sql;
    expect(preparedStatementName(again)).toMatch(/^ob_/);
  });
});
