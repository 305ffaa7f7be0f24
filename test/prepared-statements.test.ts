import fc from 'fast-check';
import type pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral } from '../src/platform/db/parameters.js';
import crypto from 'node:crypto';
import { withPipelinedTransaction } from '../src/platform/db/pipelined-transaction.js';
import { forgetPreparedStatementNames, prepared, preparedStatementName, preparedText, replanAfterRuns } from '../src/platform/db/prepared-statements.js';
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
    /** One run of the scenario on a table of its own, so the statement's text (and its count of runs) is new to this process. */
    const scenario = async () => {
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
        const values = await sql<{ v: number }>`SELECT v FROM ${sql.table(table)} WHERE id = ANY(${ids}::uuid[])`.execute(t.deps.db);
        return { ...seen, family, values: values.rows.map((row) => row.v) };
      } finally {
        await sql.raw(`DROP TABLE ${table}`).execute(t.deps.db);
      }
    };
    // The trap: planned on the empty table, the update reads the table whole, and keeps doing so
    // after it has grown (no ANALYZE has run). On a shared PostgreSQL server another session's
    // catalog change (a test file creating or dropping its schema) makes every backend drop its
    // cached plans, so the trap is not always there to see: the scenario runs again, up to 3 times.
    let seen = await scenario();
    for (let attempt = 2; attempt <= 3 && seen.kept[0] !== 'Seq Scan'; attempt++) seen = await scenario();
    expect(seen.young).toEqual(['Seq Scan']);
    expect(seen.kept).toEqual(['Seq Scan']);
    // Planned again (512 runs), it looks each row up by its key.
    expect(seen.grown).toEqual([expect.stringMatching(/^Index/)]);
    expect(seen.prepared).toEqual([`${seen.family}_2`]);
    expect(seen.values).toEqual([replanAfterRuns[1] ?? 0, replanAfterRuns[1] ?? 0].map((runs) => runs - 1));
  });
});

describe("prepared statements' columns", () => {
  // node-postgres asks the database to describe a statement's result at every run; the pool's
  // client asks once per prepared statement and connection (DescribedQuery).
  /** Runs `work` on one pool connection, counting the database's RowDescription and NoData answers. */
  async function onOneConnection<T>(work: (client: pg.PoolClient, descriptions: () => number) => Promise<T>): Promise<T> {
    const client = await t.database.pool.connect();
    const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    let described = 0;
    const count = () => described++;
    connection.on('rowDescription', count);
    connection.on('noData', count);
    try {
      return await work(client, () => described);
    } finally {
      connection.off('rowDescription', count);
      connection.off('noData', count);
      client.release();
    }
  }

  it('are described once per connection, and every run parses its rows by them (text, int8, numeric, timestamptz, jsonb, nulls)', async () => {
    const text = preparedText(
      `SELECT $1::text AS label, $2::int8 AS big, $3::numeric AS amount, $4::timestamptz AS at, jsonb_build_object('n', $2::int8) AS doc, NULL::uuid AS nothing`,
    );
    await onOneConnection(async (client, descriptions) => {
      const before = descriptions();
      for (const n of [1, 2, 3, 4, 5]) {
        const at = new Date(Date.UTC(2026, 10, n, 12));
        const result = await client.query(text, [`row ${n}`, String(10n ** 15n + BigInt(n)), `${n}.25`, at]);
        expect(result.rows).toEqual([{ label: `row ${n}`, big: String(10n ** 15n + BigInt(n)), amount: `${n}.25`, at, doc: { n: 10 ** 15 + n }, nothing: null }]);
        expect(result.fields.map((field) => field.name)).toEqual(['label', 'big', 'amount', 'at', 'doc', 'nothing']);
      }
      expect(descriptions() - before).toBe(1);
    });
  });

  it('of a statement without rows are not asked for again, and its row count still comes back', async () => {
    await onOneConnection(async (client, descriptions) => {
      await client.query('CREATE TEMP TABLE described_rows (n int)');
      try {
        const insert = preparedText('INSERT INTO described_rows SELECT generate_series(1, $1::int)');
        const beforeInserts = descriptions();
        for (const n of [1, 2, 3]) expect((await client.query(insert, [n])).rowCount).toBe(n);
        expect(descriptions() - beforeInserts).toBe(1);
        const before = descriptions();
        const select = preparedText('SELECT n FROM described_rows WHERE n <= $1::int ORDER BY n');
        expect((await client.query(select, [0])).rows).toEqual([]);
        expect((await client.query(select, [2])).rows).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }, { n: 2 }, { n: 2 }]);
        expect(descriptions() - before).toBe(1);
      } finally {
        await client.query('DROP TABLE described_rows');
      }
    });
  });

  it('that change under a name fail the run (the database refuses it), and the connection stays usable', async () => {
    await onOneConnection(async (client) => {
      await client.query('CREATE TEMP TABLE described_change (n int)');
      try {
        await client.query('INSERT INTO described_change VALUES (1)');
        const select = preparedText('SELECT * FROM described_change WHERE n = $1::int');
        expect((await client.query(select, [1])).rows).toEqual([{ n: 1 }]);
        expect((await client.query(select, [1])).rows).toEqual([{ n: 1 }]);
        await client.query("ALTER TABLE described_change ADD COLUMN label text NOT NULL DEFAULT 'x'");
        await expect(client.query(select, [1])).rejects.toThrow(/cached plan must not change result type/);
        expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await client.query('DROP TABLE described_change');
      }
    });
  });
});
