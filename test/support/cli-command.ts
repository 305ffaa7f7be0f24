import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { inject } from 'vitest';
import { packageRoot } from '../../src/paths.js';

/** The built `openbaas` command (src/cli.ts transpiled by test/cli-build.global.ts): its file. */
export function cliFile(): string {
  return path.join(inject('cliBuild'), 'cli.js');
}

/**
 * The arguments of `node` that run `openbaas <args>` from this run's build of the sources: spawn
 * `process.execPath` with them.
 */
export function cliArgs(...args: string[]): string[] {
  return [cliFile(), ...args];
}

/** A module of the build, for a script run in a process of its own: `src/platform/db/lock-file.ts` → its built file. */
export function builtModule(sourcePath: string): string {
  return path.join(inject('cliBuild'), path.relative('src', sourcePath).replace(/\.ts$/, '.js'));
}

/** A running `openbaas <args>` (this run's build) with `env` over this process's: its output so far (stdout and stderr) and its exit code once closed. */
export function startCli(args: string[], env: Record<string, string>): { child: ChildProcessByStdio<null, Readable, Readable>; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, cliArgs(...args), { cwd: packageRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}
