import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths.js';
import { acquireDataFolderLock, DataFolderLockedError } from '../src/platform/db/lock-file.js';
import { temporaryFolder } from './support/temp-folder.js';

// The embedded data folder's lock file (src/platform/db/lock-file.ts): which locks are taken over
// and which refused. PostgreSQL has no data folder, so this file runs in the pglite project only.

/** Runs `openbaas <args>` through bash, whose `exec` gives node the pid bash wrote into the lock file first. */
function runWithOwnPidInLock(dataDir: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const lockPath = path.join(dataDir, 'openbaas.lock');
  const command = `echo $$ > "$LOCK_PATH"; exec "$NODE" --import tsx src/cli.ts ${args.join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: packageRoot,
      env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', DATA_DIR: dataDir, LOCK_PATH: lockPath, NODE: process.execPath },
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
    expect(fs.readFileSync(lockPath, 'utf8')).toBe(String(process.pid));
    // Opened twice by one process: still refused.
    expect(() => acquireDataFolderLock(folder)).toThrow(new DataFolderLockedError(`The data folder ${folder} is already open in this process.`));
    release();
    expect(fs.existsSync(lockPath)).toBe(false);
    // Released, it can be taken again.
    acquireDataFolderLock(folder)();
  });

  it('left by an earlier process with the pid the command gets (a container restarted after kill -9): the command runs', async () => {
    const folder = temporaryFolder('lock');
    const result = await runWithOwnPidInLock(folder, ['migrate']);
    expect(result.output).toMatch(/^Applied \d+ migrations/);
    expect(result.code).toBe(0);
    expect(fs.existsSync(path.join(folder, 'openbaas.lock'))).toBe(false);
  });
});
