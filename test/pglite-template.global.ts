import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';

declare module 'vitest' {
  interface ProvidedContext {
    /** A tar of a migrated, empty embedded database's data folder (see harness.ts). */
    pgliteTemplate: string;
    /** A data folder on disk holding the same database, for migratedDataFolder (test/support/temp-folder.ts). */
    pgliteDataFolder: string;
  }
}

/**
 * Global setup of the pglite project: creates one embedded database in a data folder, applies the
 * migrations and writes the folder to a temporary file too (lightened: below). Each test file's
 * in-memory database starts from that file, and each command test that needs a database but is not about creating one
 * copies the folder, instead of running initdb and every migration again (seconds of CPU each on a
 * busy two-core machine: 2.6 s for initdb alone). Both are made afresh by every run, so they always
 * hold the current migrations.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-pglite-folder-'));
  const file = path.join(os.tmpdir(), `openbaas-pglite-template-${crypto.randomBytes(6).toString('hex')}.tar`);
  const remove = () => {
    fs.rmSync(file, { force: true });
    fs.rmSync(folder, { recursive: true, force: true });
  };
  // A setup that fails leaves neither behind.
  try {
    const database = await openDatabase({ dataDir: folder, poolMax: 1, connectTimeoutMs: 60_000 });
    let dump: Blob;
    try {
      await migrate(database.pool);
      if (!database.dumpDataDir) throw new Error('the embedded database cannot dump its data folder');
      dump = await database.dumpDataDir();
    } finally {
      await database.close();
    }
    // The in-memory copy without the template0 and template1 databases, which no test uses: a
    // third smaller (29 MB instead of 44), it loads in about 0.4 s instead of 0.55-0.6 s, once per
    // test app (150-odd a run). The folder keeps them, as a real data folder has them.
    const memory = await openDatabase({ memory: true, poolMax: 1, connectTimeoutMs: 60_000, memoryDataDump: dump });
    try {
      for (const name of ['template0', 'template1']) {
        await memory.pool.query(`ALTER DATABASE ${name} IS_TEMPLATE false`);
        await memory.pool.query(`DROP DATABASE ${name}`);
      }
      await memory.pool.query('CHECKPOINT');
      if (!memory.dumpDataDir) throw new Error('the embedded database cannot dump its data folder');
      fs.writeFileSync(file, Buffer.from(await (await memory.dumpDataDir()).arrayBuffer()));
    } finally {
      await memory.close();
    }
  } catch (error) {
    remove();
    throw error;
  }
  project.provide('pgliteTemplate', file);
  project.provide('pgliteDataFolder', folder);
  return remove;
}
