import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEncryptionKey } from './harness.js';
import { databaseUrlNamed } from './support/database-url.js';
import { commandsNeedingData, runCli } from './support/run-cli.js';

// Until 2026-12-07 the commands that only read or change what a database holds, pointed by
// DATABASE_URL at an empty PostgreSQL database (a wrong name, say), applied every migration there,
// and `ledger verify` reported the new, empty database clean (found by an audit). The embedded
// database's case: cli-args.pglite.test.ts.

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `empty_${crypto.randomBytes(5).toString('hex')}`;
let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client(url);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
});
afterAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

describe('a command that reads or changes what a database holds, on an empty PostgreSQL database', () => {
  it.each(commandsNeedingData)('%j: refused naming the database without its password, which it leaves empty; exit 1', async (args, purpose) => {
    const databaseUrl = databaseUrlNamed(url, name);
    const result = await runCli(args, { DATABASE_URL: databaseUrl, OPENBAAS_ENCRYPTION_KEY: testEncryptionKey });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(new RegExp(`^openbaas: the database of DATABASE_URL \\(.*/${name}\\) holds no OpenBaaS data \\(no migration was ever applied to it\\), so nothing to ${purpose}: `));
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    const empty = new pg.Client(databaseUrl);
    await empty.connect();
    try {
      const tables = await empty.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
      expect(tables.rows[0]).toEqual({ n: 0 });
    } finally {
      await empty.end();
    }
  });

  it('`openbaas migrate` sets it up, and then `ledger verify` reads it', async () => {
    const env = { DATABASE_URL: databaseUrlNamed(url, name), OPENBAAS_ENCRYPTION_KEY: testEncryptionKey };
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const verified = await runCli(['ledger', 'verify'], env);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/every invariant holds/);
  });
});
