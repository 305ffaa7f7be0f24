import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral } from '../src/platform/db/parameters.js';
import crypto from 'node:crypto';
import { withPipelinedTransaction } from '../src/platform/db/pipelined-transaction.js';
import { forgetPreparedStatementNames, prepared, preparedStatementName, replanAfterRuns } from '../src/platform/db/prepared-statements.js';
import type { Tx } from '../src/platform/db/transaction.js';
import { createTestApp, type TestContext } from './harness.js';
import { literal, scansOf, type PlanNode } from './plans.js';

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

describe('prepared statements planned again as their tables grow', () => {
  it('are prepared again after 64, 512, 4,096, 32,768 and 262,144 runs, then never', () => {
    expect(replanAfterRuns).toEqual([64, 512, 4096, 32_768, 262_144]);
  });

  it('an update made generic on an empty table finds its rows by key once the table has grown, and the old plan is deallocated', async () => {
    // A table of its own, so the statement's text (and its count of runs) is new to this process.
    const table = `replan_probe_${crypto.randomBytes(4).toString('hex')}`;
    await sql.raw(`CREATE TABLE ${table} (client_id uuid NOT NULL, id uuid NOT NULL, v int NOT NULL, PRIMARY KEY (client_id, id))`).execute(t.deps.db);
    const clientId = crypto.randomUUID();
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const update = () =>
      prepared(sql`UPDATE ${sql.table(table)} t SET v = t.v + u.v
        FROM unnest(${[clientId, clientId]}::uuid[], ${ids}::uuid[], ${[1, 1]}::int[]) AS u (client_id, id, v)
        WHERE t.client_id = u.client_id AND t.id = u.id RETURNING 1`);
    const compiled = update().compile(t.deps.db);
    const family = preparedStatementName(compiled.sql) ?? expect.fail('the update is prepared');
    // The plan PostgreSQL keeps for the statement under its current name, on this connection.
    const plan = async (tx: Tx) => {
      const name = preparedStatementName(compiled.sql);
      const explained = await sql.raw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE "${name}"(${compiled.parameters.map(literal).join(', ')})`).execute(tx);
      const scans = scansOf(explained.rows[0]?.['QUERY PLAN'][0].Plan ?? expect.fail('no plan')).filter((scan) => scan['Relation Name'] === table);
      return scans.map((scan) => scan['Node Type']);
    };
    try {
      // One transaction, so every run is on one connection (as a batcher's lane keeps one), with
      // the batches' generic plans.
      const seen = await withPipelinedTransaction(t.database.pool, async (tx) => {
        await update().execute(tx);
        const young = await plan(tx);
        await sql.raw(`INSERT INTO ${table} SELECT '${clientId}', gen_random_uuid(), 0 FROM generate_series(1, 20000)`).execute(tx);
        await sql.raw(`INSERT INTO ${table} VALUES ('${clientId}', '${ids[0]}', 0), ('${clientId}', '${ids[1]}', 0)`).execute(tx);
        const kept = await plan(tx);
        for (let run = 1; run < (replanAfterRuns[1] ?? 0); run++) await update().execute(tx);
        const grown = await plan(tx);
        const prepared = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE name LIKE ${`${family}%`}`.execute(tx);
        return { result: { young, kept, grown, prepared: prepared.rows.map((row) => row.name) } };
      });
      // The trap: planned on the empty table, the update reads the table whole, and keeps doing
      // so after it has grown (no ANALYZE has run).
      expect(seen.young).toEqual(['Seq Scan']);
      expect(seen.kept).toEqual(['Seq Scan']);
      // Planned again (512 runs), it looks each row up by its key.
      expect(seen.grown).toEqual([expect.stringMatching(/^Index/)]);
      expect(seen.prepared).toEqual([`${family}_2`]);
      const values = await sql<{ v: number }>`SELECT v FROM ${sql.table(table)} WHERE id = ANY(${ids}::uuid[])`.execute(t.deps.db);
      expect(values.rows.map((row) => row.v)).toEqual([replanAfterRuns[1] ?? 0, replanAfterRuns[1] ?? 0].map((runs) => runs - 1));
    } finally {
      await sql.raw(`DROP TABLE ${table}`).execute(t.deps.db);
    }
  });
});
