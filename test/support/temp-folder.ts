import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

// A folder of its own under the system's temporary directory for one test, removed when its test
// file ends (test/setup-file.ts calls removeTemporaryFolders after each file), so a run leaves no
// data folders, key files or directory files behind.
const made = new Set<string>();

export function temporaryFolder(name: string): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), `openbaas-${name}-`));
  made.add(folder);
  return folder;
}

export function removeTemporaryFolders(): void {
  for (const folder of made) {
    fs.rmSync(folder, { recursive: true, force: true });
    made.delete(folder);
  }
}

/**
 * A temporary folder (as temporaryFolder) holding a migrated embedded database with no client and
 * no key file yet: a copy of the one the pglite project's global setup made
 * (test/pglite-template.global.ts). For a test of what a command does with a database, not of how
 * a first start creates one: copying takes a few milliseconds, where creating takes seconds of CPU
 * (PGlite's initdb, then every migration).
 */
export function migratedDataFolder(name: string): string {
  const folder = temporaryFolder(name);
  fs.cpSync(inject('pgliteDataFolder'), folder, { recursive: true });
  return folder;
}
