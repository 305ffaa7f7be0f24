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
 * loaded, each spinning until a file appears): what each said, OK or the refusal's name. One that
 * takes the lock holds it until every process has said something, so a second OK means two
 * holders at once, never one that took the lock after the first let it go (until 2026-12-08 each
 * holder let go after a fixed time, which a process slowed past it on a busy machine outlived: a
 * run with three test files at once saw two OKs). `preload`: a CommonJS file each loads first
 * (instrumentation).
 */
export async function takeLockAtOnce(folder: string, processes: number, options: { preload?: string } = {}): Promise<string[]> {
  const signals = temporaryFolder('lock-race-go');
  const go = path.join(signals, 'go');
  const done = path.join(signals, 'done');
  const script =
    "import fs from 'node:fs';" +
    `import { acquireDataFolderLock } from ${JSON.stringify(pathToFileURL(builtModule('src/platform/db/lock-file.ts')).href)};` +
    'const [folder, go, done] = [process.argv[1], process.argv[2], process.argv[3]];' +
    "console.log('READY');" +
    'while (!fs.existsSync(go)) {}' +
    "try { const release = acquireDataFolderLock(folder); console.log('OK');" +
    ' const wait = setInterval(() => { if (fs.existsSync(done)) { clearInterval(wait); release(); } }, 20); }' +
    'catch (error) { console.log(error.name); }';
  const preload = options.preload === undefined ? [] : ['--require', options.preload];
  let ready = 0;
  let answered = 0;
  let allReady: () => void = () => undefined;
  let allAnswered: () => void = () => undefined;
  const loaded = new Promise<void>((resolve) => (allReady = resolve));
  const everyAnswer = new Promise<void>((resolve) => (allAnswered = resolve));
  const runs = Array.from({ length: processes }, () =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [...preload, '--input-type=module', '-e', script, folder, go, done], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      let sawReady = false;
      let sawAnswer = false;
      child.stdout.on('data', (chunk) => {
        output += String(chunk);
        if (!sawReady && output.includes('READY')) {
          sawReady = true;
          if (++ready === processes) allReady();
        }
        if (!sawAnswer && output.replace('READY', '').trim() !== '') {
          sawAnswer = true;
          if (++answered === processes) allAnswered();
        }
      });
      child.on('error', reject);
      child.on('close', () => {
        // One that ended without a word still counts, so the holders are not kept waiting.
        if (!sawAnswer && ++answered === processes) allAnswered();
        resolve(output.replace('READY', '').trim());
      });
    }),
  );
  await loaded;
  fs.writeFileSync(go, '');
  await everyAnswer;
  fs.writeFileSync(done, '');
  return Promise.all(runs);
}

/** What racing processes said (takeLockAtOnce): exactly one took the lock, the others were refused. */
export function expectOneHolder(said: string[], trial: number): void {
  expect(said.filter((word) => word === 'OK'), `trial ${trial}: ${said.join(' ')}`).toHaveLength(1);
  expect(said.filter((word) => word !== 'OK').every((word) => word === 'DataFolderLockedError'), said.join(' ')).toBe(true);
}
