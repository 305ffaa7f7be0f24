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
  }
}

/**
 * Global setup of the pglite project: creates one embedded database, applies the migrations and
 * writes its data folder to a temporary file. Each test file's database starts from that file
 * instead of running initdb and every migration again (seconds per file on a busy two-core
 * machine). The file is made afresh by every run, so it always holds the current migrations.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const database = await openDatabase({ memory: true, poolMax: 1, connectTimeoutMs: 60_000 });
  let file: string;
  try {
    await migrate(database.pool);
    if (!database.dumpDataDir) throw new Error('the embedded database cannot dump its data folder');
    const dump = await database.dumpDataDir();
    file = path.join(os.tmpdir(), `openbaas-pglite-template-${crypto.randomBytes(6).toString('hex')}.tar`);
    fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await database.close();
  }
  project.provide('pgliteTemplate', file);
  return () => fs.rmSync(file, { force: true });
}
