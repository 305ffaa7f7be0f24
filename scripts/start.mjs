// The launcher behind `npm start`. It runs `openbaas serve` inside its own process, and the npm
// script starts it with `exec`, so the process npm waits on is the server itself: the SIGTERM or
// SIGINT that npm forwards to its child reaches the server, which stops gracefully, and nothing
// is left running. (Before, `npm run build && node dist/cli.js serve` put a shell between npm and
// the server; the shell took the signal and died, the server stayed.) Arguments are passed on:
// `npm start -- --port 9090 --no-workers`.
//
// dist/ is rebuilt only when it is missing or older than the sources. That build transpiles each
// source file with esbuild (a dev dependency, the compiler tsx uses for the tests: well under a
// second where tsc takes several) and does not type-check; `npm run typecheck` and `npm run build`
// (tsc) do. After an `npm ci --omit=dev` install there is no esbuild, so dist/ must be built.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Written by this launcher after each build; `tsc -p tsconfig.build.json` writes dist/.tsbuildinfo. */
const buildStamps = ['dist/.build-stamp', 'dist/.tsbuildinfo'];
/** Besides src/, what changes the build: the compiler settings and the package's dependencies. */
const buildSettings = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];

function modifiedTimeMs(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** The files the build reads from src/: TypeScript (tests excluded) and the JSON data files. */
function buildInputs(srcFolder, extension) {
  return fs
    .readdirSync(srcFolder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension) && !entry.name.endsWith('.test.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * True when dist/ holds a build at least as new as every input. Migrations are not part of the
 * build (the server reads migrations/ when it starts), so a new migration never asks for one.
 */
export function buildIsCurrent(root = packageRoot) {
  if (!fs.existsSync(path.join(root, 'dist', 'cli.js'))) return false;
  const builtMs = Math.max(...buildStamps.map((file) => modifiedTimeMs(path.join(root, file))));
  if (builtMs === 0) return false;
  const src = path.join(root, 'src');
  const inputs = [...buildInputs(src, '.ts'), ...buildInputs(src, '.json'), ...buildSettings.map((file) => path.join(root, file))];
  return inputs.every((file) => modifiedTimeMs(file) <= builtMs);
}

/**
 * Transpiles src/ file by file with esbuild into `outFolder` (a folder directly under the package
 * root, as dist/ is: the built src/paths.js finds the root as its folder's parent), and copies the
 * JSON data files next to them. Returns false when esbuild (a dev dependency) is not installed.
 */
export async function transpile(root, outFolder) {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return false;
  }
  const src = path.join(root, 'src');
  await esbuild.build({
    entryPoints: buildInputs(src, '.ts'),
    outdir: outFolder,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    sourcemap: true,
    tsconfig: path.join(root, 'tsconfig.build.json'),
    logLevel: 'warning',
  });
  for (const file of buildInputs(src, '.json')) {
    const target = path.join(outFolder, path.relative(src, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(file, target);
  }
  return true;
}

/** Transpiles src/ into dist/ (see transpile). */
export async function build(root = packageRoot) {
  const startedMs = performance.now();
  process.stdout.write('openbaas: building dist/ (missing or older than src/)…\n');
  const dist = path.join(root, 'dist');
  // Written into a folder of its own, then each file renamed into dist/: a server already running
  // from dist/ (or a second `npm start` building at the same moment) never reads a half-written file.
  const staging = fs.mkdtempSync(path.join(root, '.dist-build-'));
  let transpiled;
  try {
    transpiled = await transpile(root, staging);
    const files = transpiled ? fs.readdirSync(staging, { recursive: true, withFileTypes: true }) : [];
    for (const entry of files) {
      if (!entry.isFile()) continue;
      const built = path.join(entry.parentPath, entry.name);
      const target = path.join(dist, path.relative(staging, built));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.renameSync(built, target);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  if (!transpiled) {
    process.stderr.write('openbaas: dist/ is missing or out of date, and esbuild (a dev dependency) is not installed: run `npm run build` first\n');
    process.exit(1);
  }
  fs.writeFileSync(path.join(dist, '.build-stamp'), `${new Date().toISOString()}\n`);
  process.stdout.write(`openbaas: built in ${((performance.now() - startedMs) / 1000).toFixed(1)} s\n`);
}

/**
 * The browser console's bundle (dist/console/) is rebuilt when it is missing or older than
 * console/src or package.json. Without esbuild (an `npm ci --omit=dev` install) a missing bundle
 * is reported and the server starts anyway: /console then answers that it was not built.
 */
export async function buildConsoleIfStale(root = packageRoot) {
  const bundle = path.join(root, 'dist', 'console', 'app.js');
  const { buildConsole, consoleSourcesModifiedMs } = await import('./build-console.mjs');
  const newestInput = Math.max(consoleSourcesModifiedMs(root), modifiedTimeMs(path.join(root, 'package.json')));
  if (modifiedTimeMs(bundle) >= newestInput) return;
  try {
    await buildConsole(root);
    process.stdout.write('openbaas: console bundle built into dist/console/\n');
  } catch (error) {
    process.stderr.write(`openbaas: the console bundle could not be built (${error instanceof Error ? error.message : String(error)}); run \`npm run build\`\n`);
  }
}

async function start() {
  const args = process.argv.slice(2);
  // `npm start` alone serves; `npm start -- migrate` (or any other command) runs that command.
  const command = args.length === 0 || args[0]?.startsWith('-') ? ['serve', ...args] : args;
  if (!buildIsCurrent()) await build();
  await buildConsoleIfStale();
  const entry = path.join(packageRoot, 'dist', 'cli.js');
  // dist/cli.js reads its command line as if it had been started as `node dist/cli.js serve …`.
  process.argv = [process.argv[0] ?? process.execPath, entry, ...command];
  await import(pathToFileURL(entry).href);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await start();
