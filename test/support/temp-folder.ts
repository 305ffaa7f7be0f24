import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
