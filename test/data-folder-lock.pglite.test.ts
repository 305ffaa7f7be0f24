import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths.js';
import { acquireDataFolderLock, DataFolderLockedError } from '../src/platform/db/lock-file.js';
import { cliArgs, cliFile } from './support/cli-command.js';
import { expectOneHolder, takeLockAtOnce } from './support/lock-race.js';
import { runCli } from './support/run-cli.js';
import { migratedDataFolder, temporaryFolder } from './support/temp-folder.js';

// The embedded data folder's lock file (src/platform/db/lock-file.ts): which locks are taken over
// and which refused. PostgreSQL has no data folder, so this file runs in the pglite project only.

/** Runs `openbaas <args>` through bash, whose `exec` gives node the pid bash wrote into the lock file first. */
function runWithOwnPidInLock(dataDir: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const lockPath = path.join(dataDir, 'openbaas.lock');
  const command = `echo $$ > "$LOCK_PATH"; exec "$NODE" "$CLI" ${args.join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: packageRoot,
      env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', DATA_DIR: dataDir, LOCK_PATH: lockPath, NODE: process.execPath, CLI: cliFile() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('a lock file holding our own pid', () => {
  it('is taken over unless this process itself holds the lock', () => {
    // Until 2026-12-07 it was refused as "already open in this process": a container whose server is
    // PID 1, killed with -9, could never start again (found by an audit).
    const folder = temporaryFolder('lock');
    const lockPath = path.join(folder, 'openbaas.lock');
    fs.writeFileSync(lockPath, String(process.pid));
    const release = acquireDataFolderLock(folder);
    expect(fs.readFileSync(lockPath, 'utf8').split('\n')[0]).toBe(String(process.pid));
    // Opened twice by one process: still refused.
    expect(() => acquireDataFolderLock(folder)).toThrow(new DataFolderLockedError(`The data folder ${folder} is already open in this process.`));
    release();
    expect(fs.existsSync(lockPath)).toBe(false);
    // Released, it can be taken again.
    acquireDataFolderLock(folder)();
  });

  it('left by an earlier process with the pid the command gets (a container restarted after kill -9): the command runs', async () => {
    const folder = migratedDataFolder('lock');
    const result = await runWithOwnPidInLock(folder, ['migrate']);
    expect(result.output).toBe('Migrations are up to date: none to apply.\n');
    expect(result.code).toBe(0);
    expect(fs.existsSync(path.join(folder, 'openbaas.lock'))).toBe(false);
  });
});

/** Runs `openbaas <args>` as the user nobody (uid 65534), which needs root and setpriv (util-linux). */
function runAsNobody(args: string[], dataDir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...cliArgs(...args)], {
      cwd: packageRoot,
      env: { ...process.env, HOME: os.tmpdir(), LOG_LEVEL: 'silent', DATABASE_URL: '', DATA_DIR: dataDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const canSwitchUser = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;

describe('a data folder this user may not use', () => {
  // Until 2026-12-07 Node's EPERM or EACCES with a stack, or PGlite's "failed to initialize
  // properly" for files another user owns (found by an audit). Run as root with setpriv only: as
  // root every access is allowed.
  it.skipIf(!canSwitchUser)('another user\'s folder, a folder it may not write in or make, another user\'s database files: one line naming DATA_DIR and the cause, exit 1', async () => {
    const root = temporaryFolder('perm');
    fs.chmodSync(root, 0o755);
    const othersFolder = path.join(root, 'others');
    fs.mkdirSync(othersFolder, { mode: 0o777 });
    fs.chmodSync(othersFolder, 0o777);
    const readOnly = path.join(root, 'read-only');
    fs.mkdirSync(readOnly, { mode: 0o500 });
    fs.chownSync(readOnly, 65534, 65534);
    const readOnlyParent = path.join(root, 'read-only-parent');
    fs.mkdirSync(readOnlyParent, { mode: 0o555 });
    const othersFiles = path.join(root, 'others-files');
    fs.cpSync(migratedDataFolder('perm-files'), othersFiles, { recursive: true });
    fs.chownSync(othersFiles, 65534, 65534);
    // A folder OpenBaaS made for root (0700), as a first `sudo npm start` leaves ./data: nobody cannot
    // even look inside. Until 2026-12-07 the message's own stat of the file inside failed, and
    // that EACCES was printed with its stack (found by an audit).
    const rootsFolder = path.join(root, 'roots');
    expect((await runCli(['migrate'], { DATA_DIR: rootsFolder })).code).toBe(0);
    expect(fs.statSync(rootsFolder).mode & 0o777).toBe(0o700);

    for (const [dataDir, cause] of [
      [othersFolder, `EPERM: operation not permitted, chmod '${othersFolder}' (owned by uid 0)`],
      [readOnly, `EACCES: permission denied, open '${path.join(readOnly, 'openbaas.lock')}'`],
      [path.join(readOnlyParent, 'data'), `EACCES: permission denied, mkdir '${path.join(readOnlyParent, 'data')}'`],
      // The first of its database files (or folders) that nobody may not read or write.
      [othersFiles, `EACCES: permission denied, access '${othersFiles}/*' (owned by uid 0)`],
      [rootsFolder, `EACCES: permission denied, open '${path.join(rootsFolder, 'openbaas.lock')}' (owned by uid 0)`],
      [path.join(rootsFolder, 'sub'), `EACCES: permission denied, mkdir '${path.join(rootsFolder, 'sub')}' (owned by uid 0)`],
    ] as const) {
      const result = await runAsNobody(['migrate'], dataDir);
      expect(result.code, dataDir).toBe(1);
      const expected =
        `openbaas: The data folder ${dataDir} (DATA_DIR) cannot be used by this user (uid 65534): ${cause}. ` +
        'The folder and its files must belong to the user that runs OpenBaaS, who must be able to write in it; or choose another DATA_DIR.\n';
      const [before = '', after = ''] = expected.split('*');
      expect(result.stderr.startsWith(before) && result.stderr.endsWith(after) && !result.stderr.includes('\n    at '), `${result.stderr} is not ${expected}`).toBe(true);
    }
    // A command that refuses a folder holding no database tells the two apart: until 2026-12-08
    // `ledger verify` said there was no database in root's folder (nobody cannot look inside).
    const verify = await runAsNobody(['ledger', 'verify'], rootsFolder);
    expect([verify.code, verify.stderr]).toEqual([
      1,
      `openbaas: The data folder ${rootsFolder} (DATA_DIR) cannot be used by this user (uid 65534): ` +
        `EACCES: permission denied, open '${path.join(rootsFolder, 'openbaas.lock')}' (owned by uid 0). ` +
        'The folder and its files must belong to the user that runs OpenBaaS, who must be able to write in it; or choose another DATA_DIR.\n',
    ]);
  });
});

describe('a data folder whose first start was interrupted while it created the database', () => {
  const halfMade = (folder: string) =>
    `openbaas: The data folder ${folder} (DATA_DIR) was left half-made by a first start that was interrupted while it created the database: ` +
    'it holds no data yet. Delete the folder (or everything in it) and start again.\n';

  it('is refused in one line saying it holds no data and can be deleted, by every command', async () => {
    // Until 2026-12-07 such a folder failed every command with a stack from inside PGlite (found
    // by an audit): what an interrupted creation leaves, PG_VERSION and the marker of the creation.
    const folder = temporaryFolder('half-made');
    fs.writeFileSync(path.join(folder, 'PG_VERSION'), '18\n');
    fs.writeFileSync(path.join(folder, 'openbaas.creating'), '2026-12-07T00:00:00.000Z\n');
    for (const args of [['migrate'], ['ledger', 'verify'], ['serve', '--port', '0']]) {
      const result = await runCli(args, { DATA_DIR: folder });
      expect([result.code, result.stderr], args.join(' ')).toEqual([1, halfMade(folder)]);
    }
    expect(fs.existsSync(path.join(folder, 'openbaas.lock'))).toBe(false);
  });

  it('a real interruption as the database files appear: the marker is there first; the next start either opens it or says so in one line', async () => {
    const folder = temporaryFolder('half-made');
    const child = spawn(process.execPath, cliArgs('migrate'), {
      cwd: packageRoot,
      env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', DATA_DIR: folder },
      stdio: 'ignore',
    });
    let markerFirst: boolean | undefined;
    const watcher = fs.watch(folder, (_event, name) => {
      if (name !== 'PG_VERSION' || markerFirst !== undefined || !fs.existsSync(path.join(folder, 'PG_VERSION'))) return;
      markerFirst = fs.existsSync(path.join(folder, 'openbaas.creating'));
      child.kill('SIGKILL');
    });
    await new Promise((resolve) => child.on('close', resolve));
    watcher.close();
    expect(markerFirst).toBe(true);
    const next = await runCli(['migrate'], { DATA_DIR: folder });
    if (next.code === 0) expect(fs.existsSync(path.join(folder, 'openbaas.creating'))).toBe(false);
    else expect([next.code, next.stderr]).toEqual([1, halfMade(folder)]);
  });

  it('a database created completely leaves no marker', async () => {
    const folder = temporaryFolder('half-made');
    expect((await runCli(['migrate'], { DATA_DIR: folder })).code).toBe(0);
    expect(fs.existsSync(path.join(folder, 'PG_VERSION'))).toBe(true);
    expect(fs.existsSync(path.join(folder, 'openbaas.creating'))).toBe(false);
  });
});

describe('several processes taking a stale lock at once', () => {
  it('exactly one takes it; the others are refused', async () => {
    // Until 2026-12-07 each read the stale pid, removed the lock and made its own: one that
    // removed the lock after another had made its own went on too, and two or more processes
    // opened the database in about half of such starts (found by an audit).
    for (let trial = 0; trial < 8; trial++) {
      const folder = temporaryFolder('lock-race');
      fs.writeFileSync(path.join(folder, 'openbaas.lock'), '4000000');
      const said = await takeLockAtOnce(folder, 6);
      expectOneHolder(said, trial);
    }
  });
});
