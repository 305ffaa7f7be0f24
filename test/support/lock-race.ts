import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { builtModule } from './cli-command.js';
import { temporaryFolder } from './temp-folder.js';

/**
 * `processes` processes that each take the lock of `folder` at the same moment (once all are
 * loaded, each spinning until a file appears) and hold it `holdMs`: what each said, OK or the
 * refusal's name. `preload`: a CommonJS file each loads first (instrumentation).
 */
export async function takeLockAtOnce(folder: string, processes: number, options: { holdMs: number; preload?: string }): Promise<string[]> {
  const go = path.join(temporaryFolder('lock-race-go'), 'go');
  const script =
    "import fs from 'node:fs';" +
    `import { acquireDataFolderLock } from ${JSON.stringify(pathToFileURL(builtModule('src/platform/db/lock-file.ts')).href)};` +
    'const [folder, go] = [process.argv[1], process.argv[2]];' +
    "console.log('READY');" +
    'while (!fs.existsSync(go)) {}' +
    `try { const release = acquireDataFolderLock(folder); console.log('OK'); setTimeout(release, ${options.holdMs}); }` +
    'catch (error) { console.log(error.name); }';
  const preload = options.preload === undefined ? [] : ['--require', options.preload];
  let ready = 0;
  let allReady: () => void = () => undefined;
  const loaded = new Promise<void>((resolve) => (allReady = resolve));
  const runs = Array.from({ length: processes }, () =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [...preload, '--input-type=module', '-e', script, folder, go], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      child.stdout.on('data', (chunk) => {
        const before = output;
        output += String(chunk);
        if (!before.includes('READY') && output.includes('READY') && ++ready === processes) allReady();
      });
      child.on('error', reject);
      child.on('close', () => resolve(output.replace('READY', '').trim()));
    }),
  );
  await loaded;
  fs.writeFileSync(go, '');
  return Promise.all(runs);
}

/** What racing processes said (takeLockAtOnce): exactly one took the lock, the others were refused. */
export function expectOneHolder(said: string[], trial: number): void {
  expect(said.filter((word) => word === 'OK'), `trial ${trial}: ${said.join(' ')}`).toHaveLength(1);
  expect(said.filter((word) => word !== 'OK').every((word) => word === 'DataFolderLockedError'), said.join(' ')).toBe(true);
}
