import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledOnce, compileOnly, preparedTextStatement, StatementParameters, TextStatement } from '../src/platform/db/text-statements.js';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('statements written as text', () => {
  it('StatementParameters numbers the placeholders in order, and a TextStatement runs with them', async () => {
    const parameters = new StatementParameters();
    const text = `SELECT ${parameters.add('a')}::text AS first, ARRAY[${parameters.list([1, 2])}]::int[] AS list, ${parameters.add('b')}::text AS last`;
    expect(text).toBe('SELECT $1::text AS first, ARRAY[$2, $3]::int[] AS list, $4::text AS last');
    const { rows } = await new TextStatement<{ first: string; list: number[]; last: string }>(text, parameters.values).execute(t.deps.db);
    expect(rows).toEqual([{ first: 'a', list: [1, 2], last: 'b' }]);
  });

  it('preparedTextStatement marks the text as prepared and keeps the parameters its writer added', async () => {
    const statement = preparedTextStatement<{ n: number }>(({ add }) => `SELECT ${add(7)}::int AS n`);
    expect(statement.sql).toBe('/* prepared */ SELECT $1::int AS n');
    expect(statement.parameters).toEqual([7]);
    expect((await statement.execute(t.deps.db)).rows).toEqual([{ n: 7 }]);
  });
});

describe('compiledOnce', () => {
  it('builds and compiles the query once, then gives its text with each call’s arguments in their places and the query’s constants kept', async () => {
    let builds = 0;
    const statement = compiledOnce((clientId: string, name: string) => {
      builds++;
      // The arguments in the opposite order of the function's, and constants (true, the limit) among them.
      return compileOnly
        .selectFrom('clients')
        .select(['id', 'name'])
        .where('name', '=', name)
        .where(sql<boolean>`${true}`)
        .where('id', '=', clientId)
        .limit(1);
    });
    const first = statement(t.clientA.id, 'Client A');
    const second = statement(t.clientB.id, 'Client B');
    expect(builds).toBe(1);
    expect(second.sql).toBe(first.sql);
    expect(first.sql.startsWith('/* prepared */ ')).toBe(true);
    expect(second.parameters).toEqual(['Client B', true, t.clientB.id, 1]);
    expect((await first.execute(t.deps.db)).rows).toEqual([{ id: t.clientA.id, name: 'Client A' }]);
    expect((await second.execute(t.deps.db)).rows).toEqual([{ id: t.clientB.id, name: 'Client B' }]);
    // A client's id with another's name finds nothing: each argument went to its own place.
    expect((await statement(t.clientA.id, 'Client B').execute(t.deps.db)).rows).toEqual([]);
  });

  it('refuses a query that writes an argument into its text', () => {
    const statement = compiledOnce((table: string) => compileOnly.selectFrom(sql.raw(table).as('t') as never).selectAll());
    expect(() => statement('clients')).toThrow(/written into the text/);
  });
});
