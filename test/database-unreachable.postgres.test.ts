import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEncryptionKey } from './harness.js';
import { freePort } from './support/free-port.js';
import { runCli } from './support/run-cli.js';

// A command started while its PostgreSQL database cannot be reached, or with a DATABASE_URL that
// names no database it can use, says so in one line naming DATABASE_URL without its password, and
// exits 1 (until 2026-12-07 node-postgres's error and its stack, without naming DATABASE_URL; found
// by an audit). A process manager restarts it.

const env = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, OPENBAAS_ENCRYPTION_KEY: testEncryptionKey, DB_CONNECT_TIMEOUT_MS: '500' });

/** TEST_DATABASE_URL with another user and database. */
function testUrlWith(user: string, database: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL ?? '');
  url.username = user;
  url.pathname = `/${database}`;
  return url.toString();
}

describe('a command started while its database cannot be reached', () => {
  // A server that accepts connections and never answers (a network that drops the packets).
  const silent = net.createServer(() => undefined);
  let silentPort = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    silent.close();
  });

  it('serve, worker, migrate, ledger verify and clients list: one line naming DATABASE_URL without its password and the cause, exit 1', async () => {
    const port = await freePort();
    const url = `postgres://openbaas:secret-password@127.0.0.1:${port}/openbaas`;
    for (const args of [['serve', '--port', '0'], ['worker'], ['migrate'], ['ledger', 'verify'], ['clients', 'list']]) {
      const result = await runCli(args, env(url));
      expect([result.code, result.stderr], args.join(' ')).toEqual([
        1,
        `openbaas: cannot connect to the database of DATABASE_URL (postgres://openbaas@127.0.0.1:${port}/openbaas): connect ECONNREFUSED 127.0.0.1:${port}\n`,
      ]);
    }
    const json = await runCli(['migrate', '--json'], env(url));
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({
      error: { name: 'DatabaseConnectError', message: `cannot connect to the database of DATABASE_URL (postgres://openbaas@127.0.0.1:${port}/openbaas): connect ECONNREFUSED 127.0.0.1:${port}` },
    });
  });

  it('a database that never answers, a missing database, an unknown role: the same line with their cause', async () => {
    const missing = testUrlWith('postgres', 'openbaas_no_such_database');
    const role = testUrlWith('openbaas_no_such_role', 'postgres');
    for (const [url, cause] of [
      [`postgres://openbaas@127.0.0.1:${silentPort}/openbaas`, /timeout/i],
      [missing, /^database "openbaas_no_such_database" does not exist$/],
      [role, /^role "openbaas_no_such_role" does not exist$/],
    ] as const) {
      const result = await runCli(['migrate'], env(url));
      expect(result.code, url).toBe(1);
      const line = /^openbaas: cannot connect to the database of DATABASE_URL \((.*?)\): (.*)\n$/.exec(result.stderr);
      expect(line?.[1], result.stderr).toBe(url);
      expect(line?.[2]).toMatch(cause);
    }
  });

  it('a DATABASE_URL that is not a PostgreSQL URL is refused before any connection', async () => {
    for (const [url, message] of [
      ['not a url', 'DATABASE_URL cannot be read as a URL: it must look like postgres://user:password@host:5432/database'],
      ['postgres://openbaas:pw@127.0.0.1:99999/openbaas', 'DATABASE_URL cannot be read as a URL: it must look like postgres://user:password@host:5432/database'],
      ['mysql://openbaas:pw@127.0.0.1/openbaas', 'DATABASE_URL must be a postgres:// (or postgresql://) URL, got a mysql:// URL'],
    ] as const) {
      const result = await runCli(['serve', '--port', '0'], env(url));
      expect([result.code, result.stderr], url).toEqual([1, `openbaas: ${message}\n`]);
    }
  });
});
