import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TestProject } from 'vitest/node';
import { packageRoot } from '../src/paths.js';

declare module 'vitest' {
  interface ProvidedContext {
    /** A folder holding src/ transpiled to JavaScript, for the tests that run the program in processes of their own. */
    cliBuild: string;
  }
}

/**
 * Global setup of both projects: transpiles src/ once into a folder of this run (with esbuild,
 * as `npm start` builds dist/; under a second), which the tests that start `openbaas` processes
 * run (test/support/cli-command.ts). Each such process ran the sources through tsx, which cost
 * about 1.5 s more CPU per start (`ledger verify`: 4.8 s through tsx, 3.3 s built), and a `serve`
 * from the sources bundled the console as it started. The folder sits directly under the package
 * root, as dist/ does, so the program finds its migrations; it is removed when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const folder = fs.mkdtempSync(path.join(packageRoot, '.test-build-'));
  // mkdtemp makes it readable by its owner only; a test runs the command as another user.
  fs.chmodSync(folder, 0o755);
  const launcher = pathToFileURL(path.join(packageRoot, 'scripts', 'start.mjs')).href;
  const { transpile } = (await import(launcher)) as { transpile: (root: string, outFolder: string) => Promise<boolean> };
  if (!(await transpile(packageRoot, folder))) throw new Error('esbuild (a dev dependency) is not installed: run npm ci');
  project.provide('cliBuild', folder);
  return () => fs.rmSync(folder, { recursive: true, force: true });
}
