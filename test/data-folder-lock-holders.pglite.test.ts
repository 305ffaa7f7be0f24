import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/run-cli.js';
import { temporaryFolder } from './support/temp-folder.js';

// What a process killed at the embedded data folder's lock (src/platform/db/lock-file.ts) leaves.
// The other lock tests are in test/data-folder-lock.pglite.test.ts.

const secondsAgo = (seconds: number) => new Date(Date.now() - seconds * 1000);

describe('stale takeover files and leftovers', () => {
  it('files of a process killed at the lock (openbaas.lock.<pid>.<hex>): removed once a minute old and their pid is gone', async () => {
    // Until 2026-12-07 they stayed for good (found by an audit).
    const folder = temporaryFolder('lock-leftovers');
    const old = ['openbaas.lock.4000000.a161f5e087fe', 'openbaas.lock.takeover.4000001.3735f2f4bb3c'];
    const recent = 'openbaas.lock.4000002.0123456789ab'; // a process may be between its write and its link
    const oldButAlive = `openbaas.lock.${process.pid}.0123456789ab`;
    const notOurs = 'openbaas.lock.4000003.notours';
    const kept = [recent, oldButAlive, notOurs];
    for (const name of [...old, ...kept]) fs.writeFileSync(path.join(folder, name), '4000000');
    for (const name of [...old, oldButAlive, notOurs]) fs.utimesSync(path.join(folder, name), secondsAgo(120), secondsAgo(120));
    expect((await runCli(['migrate'], { DATA_DIR: folder })).code).toBe(0);
    expect(fs.readdirSync(folder).filter((name) => name.startsWith('openbaas.lock')).sort()).toEqual([...kept].sort());
  });
});
