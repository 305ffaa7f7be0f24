import path from 'node:path';
import { inject } from 'vitest';

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
