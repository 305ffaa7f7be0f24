import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { acquireDataFolderLock, DataFolderLockedError } from '../src/platform/db/lock-file.js';
import { checkEncryptionKey, checkVaultKey, EncryptionKeyMismatchError, VaultKeyMismatchError } from '../src/platform/crypto/key-check.js';
import { cardVaultOf } from '../src/modules/cards/index.js';
import { fieldCipherOf } from '../src/platform/crypto/field-cipher.js';
import { checksumOf, DatabaseNewerError, MigrationChangedError, migrate, readMigrationFiles } from '../src/platform/db/migrate.js';
import { withTransaction } from '../src/platform/db/transaction.js';
import { issuedCard } from './cards/fixtures.js';
import { createTestApp, type TestContext } from './harness.js';
import { temporaryFolder } from './support/temp-folder.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});


describe('migrations', () => {
  it('are all applied, once, and running them again changes nothing', async () => {
    const expected = readMigrationFiles().map((migration) => migration.version);
    expect(await migrate(t.database.pool)).toEqual([]);
    const applied = await t.deps.db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
    expect(applied.map((row) => row.version)).toEqual(expected);
  });

  it('refuse a database a newer build migrated (a migration this build does not know), and change nothing', async () => {
    // Until 2026-12-05 an older build ran on it as if current (found by an audit: its card reversals
    // lacked migration 0044's link, and a second reversal then credited a purchase back again).
    const newest = readMigrationFiles().at(-1);
    await sql`INSERT INTO schema_migrations (version, name) VALUES ('9999', 'from_a_newer_build')`.execute(t.deps.db);
    try {
      const refused = migrate(t.database.pool);
      await expect(refused).rejects.toThrow(DatabaseNewerError);
      await expect(migrate(t.database.pool)).rejects.toThrow(`migrated by a newer OpenBaaS: it holds migration 9999_from_a_newer_build, which this build does not know (its newest is ${newest?.version}_${newest?.name})`);
    } finally {
      await sql`DELETE FROM schema_migrations WHERE version = '9999'`.execute(t.deps.db);
    }
    expect(await migrate(t.database.pool)).toEqual([]);
  });

  it('refuse a database whose applied migration has another text in this build (edited since), and record the text of every migration', async () => {
    const [first] = readMigrationFiles();
    if (!first) throw new Error('no migrations');
    const stored = async () => (await sql<{ checksum: string | null }>`SELECT checksum FROM schema_migrations WHERE version = ${first.version}`.execute(t.deps.db)).rows[0]?.checksum;
    expect(await stored()).toBe(checksumOf(first.sql));
    // A row of before the checksums: it takes this build's text.
    await sql`UPDATE schema_migrations SET checksum = NULL WHERE version = ${first.version}`.execute(t.deps.db);
    expect(await migrate(t.database.pool)).toEqual([]);
    expect(await stored()).toBe(checksumOf(first.sql));
    await sql`UPDATE schema_migrations SET checksum = ${checksumOf('-- another text')} WHERE version = ${first.version}`.execute(t.deps.db);
    try {
      await expect(migrate(t.database.pool)).rejects.toThrow(MigrationChangedError);
      await expect(migrate(t.database.pool)).rejects.toThrow(`migration ${first.version}_${first.name} of this build differs from the text this database applied`);
    } finally {
      await sql`UPDATE schema_migrations SET checksum = ${checksumOf(first.sql)} WHERE version = ${first.version}`.execute(t.deps.db);
    }
    // Line endings and surrounding white space are not a change.
    expect(checksumOf(`${first.sql.replace(/\n/g, '\r\n')}\n\n`)).toBe(checksumOf(first.sql));
  });

  it('refuse a process whose encryption key is not the database\'s, recorded at first start or taken from the fields encrypted before', async () => {
    // Until 2026-12-05 such a process started, and wrote secrets the others could not open (found by an audit).
    const own = fieldCipherOf(t.deps).keyId;
    await sql`DELETE FROM encryption_key_check`.execute(t.deps.db);
    // A database of before the check, with a field encrypted under another key: that key is the database's.
    const created = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'key check', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    expect(created.status).toBe(201);
    await sql`UPDATE webhook_subscriptions SET secret = regexp_replace(secret, '^v1\.[0-9a-f]{8}\.', 'v1.0badc0de.') WHERE id = ${created.body.data.id}`.execute(t.deps.db);
    await expect(checkEncryptionKey(t.deps.db, own)).rejects.toThrow(EncryptionKeyMismatchError);
    await expect(checkEncryptionKey(t.deps.db, own)).rejects.toThrow(`the encryption key of this process (key id ${own}) is not the key this database's fields are encrypted with (key id 0badc0de)`);
    await expect(checkEncryptionKey(t.deps.db, '0badc0de')).resolves.toBeUndefined();
    // Recorded: the field no longer decides.
    await sql`DELETE FROM webhook_subscriptions WHERE id = ${created.body.data.id}`.execute(t.deps.db);
    await expect(checkEncryptionKey(t.deps.db, own)).rejects.toThrow(EncryptionKeyMismatchError);
    await sql`DELETE FROM encryption_key_check`.execute(t.deps.db);
    await checkEncryptionKey(t.deps.db, own);
  });

  it('refuse a process whose card vault key is not the database\'s, recorded at first start or taken from the card numbers encrypted before', async () => {
    // Until 2026-12-07 such a process started, and answered 500 to every message on the others' cards (found by an audit).
    const own = cardVaultOf(t.deps).keyId;
    expect(own).toMatch(/^[0-9a-f]{8}$/);
    await sql`DELETE FROM vault_key_check`.execute(t.deps.db);
    // A database of before the check, with a card number encrypted under another key: that key is the database's.
    const { cardId } = await issuedCard(t);
    await sql`UPDATE cards SET pan_encrypted = regexp_replace(pan_encrypted, '^v1\.[0-9a-f]{8}\.', 'v1.0badc0de.') WHERE id = ${cardId}`.execute(t.deps.db);
    await expect(checkVaultKey(t.deps.db, own)).rejects.toThrow(VaultKeyMismatchError);
    await expect(checkVaultKey(t.deps.db, own)).rejects.toThrow(`the card vault key of this process (key id ${own}) is not the key this database's card numbers are encrypted with (key id 0badc0de)`);
    await expect(checkVaultKey(t.deps.db, '0badc0de')).resolves.toBeUndefined();
    // Recorded: the card no longer decides.
    await sql`DELETE FROM cards WHERE id = ${cardId}`.execute(t.deps.db);
    await expect(checkVaultKey(t.deps.db, own)).rejects.toThrow(VaultKeyMismatchError);
    await sql`DELETE FROM vault_key_check`.execute(t.deps.db);
    await checkVaultKey(t.deps.db, own);
  });

  it('enforce the database-level rules: an event without traceId is refused', async () => {
    await expect(
      sql`INSERT INTO events (client_id, id, type, data, created_at) VALUES (${t.clientA.id}, gen_random_uuid(), 'CUSTOMER_CREATED', '{}', now())`.execute(t.deps.db),
    ).rejects.toThrow(/check constraint/);
  });
});

describe('result types', () => {
  it('numeric and numeric[] come back as the exact decimal strings, int8 and int8[] as strings', async () => {
    const result = await sql<{ n: string; a: string[]; b: string; c: string[] }>`
      SELECT 12345678901234567890.12::numeric AS n, ARRAY[12345678901234567890.12, -0.10, NULL]::numeric[] AS a,
        9223372036854775807::int8 AS b, ARRAY[9223372036854775807]::int8[] AS c`.execute(t.deps.db);
    expect(result.rows[0]).toEqual({ n: '12345678901234567890.12', a: ['12345678901234567890.12', '-0.10', null], b: '9223372036854775807', c: ['9223372036854775807'] });
  });
});

describe('withTransaction', () => {
  it('runs the work again after a serialization failure or a deadlock, then commits once', async () => {
    let attempts = 0;
    const result = await withTransaction(t.deps.db, async (tx) => {
      attempts += 1;
      await sql`SELECT 1`.execute(tx);
      if (attempts === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      if (attempts === 2) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      return 'done';
    });
    expect(result).toBe('done');
    expect(attempts).toBe(3);
  });

  it('does not retry other errors, and rolls back', async () => {
    let attempts = 0;
    await expect(
      withTransaction(t.deps.db, async (tx) => {
        attempts += 1;
        await sql`INSERT INTO clients (id, name, created_at) VALUES (gen_random_uuid(), 'rolled back', now())`.execute(tx);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(attempts).toBe(1);
    const rows = await t.deps.db.selectFrom('clients').select('id').where('name', '=', 'rolled back').execute();
    expect(rows).toEqual([]);
  });

  it('gives up after a bounded number of attempts', async () => {
    let attempts = 0;
    await expect(
      withTransaction(t.deps.db, async () => {
        attempts += 1;
        throw Object.assign(new Error('always conflicting'), { code: '40001' });
      }),
    ).rejects.toThrow('always conflicting');
    expect(attempts).toBe(8);
  });
});

describe('embedded database folder', () => {
  it('refuses a second owner while the first is alive, and takes over a stale lock', () => {
    const folder = temporaryFolder('database');
    const release = acquireDataFolderLock(folder);
    expect(() => acquireDataFolderLock(folder)).toThrow(DataFolderLockedError);
    release();
    // A lock left by a process that no longer exists is taken over.
    fs.writeFileSync(path.join(folder, 'openbaas.lock'), '999999999');
    const again = acquireDataFolderLock(folder);
    again();
    // A lock held by another live process (our parent) is refused with its pid and, on Linux, its command.
    fs.writeFileSync(path.join(folder, 'openbaas.lock'), String(process.ppid));
    expect(() => acquireDataFolderLock(folder)).toThrow(new RegExp(`pid ${process.ppid}`));
    if (process.platform === 'linux') {
      const command = fs.readFileSync(`/proc/${process.ppid}/cmdline`, 'utf8').split('\0')[0] ?? '';
      expect(() => acquireDataFolderLock(folder)).toThrow(command);
      expect(() => acquireDataFolderLock(folder)).toThrow('openbaas.lock');
    }
  });

  it.runIf(process.platform === 'linux')('takes over a lock whose owner was killed and is not reaped yet (a zombie)', async () => {
    // The shell starts a child that exits at once, then becomes `sleep`, which never reaps it: the
    // child stays a zombie, as a server killed with kill -9 does until its parent reaps it.
    const holder = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = await new Promise<number>((resolve) => holder.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
      await vi.waitFor(() => expect(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/\) Z /), { timeout: 5_000, interval: 10 });
      const folder = temporaryFolder('database');
      fs.writeFileSync(path.join(folder, 'openbaas.lock'), String(pid));
      const release = acquireDataFolderLock(folder);
      expect(fs.readFileSync(path.join(folder, 'openbaas.lock'), 'utf8').split('\n')[0]).toBe(String(process.pid));
      release();
    } finally {
      holder.kill();
    }
  });

  it('is private: a new folder is 0700, an existing one loses group write and all access of others', () => {
    const parent = temporaryFolder('database');
    const fresh = path.join(parent, 'data');
    acquireDataFolderLock(fresh)();
    expect(fs.statSync(fresh).mode & 0o777).toBe(0o700);
    const open = path.join(parent, 'open');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    acquireDataFolderLock(open)();
    expect(fs.statSync(open).mode & 0o777).toBe(0o750);
    const group = path.join(parent, 'group');
    fs.mkdirSync(group);
    fs.chmodSync(group, 0o750);
    acquireDataFolderLock(group)();
    expect(fs.statSync(group).mode & 0o777).toBe(0o750);
  });
});
