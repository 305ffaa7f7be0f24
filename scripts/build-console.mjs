// Bundles the sandbox console (console/src, Preact) into one script and one style sheet with
// esbuild. `npm run build` and the `npm start` launcher write them to dist/console/; the server,
// when it runs from src/ (tsx, vitest), bundles in memory on the first request instead, so the
// console it serves is always the one in the sources. Run directly: `node scripts/build-console.mjs`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The console's bundle as `{ 'app.js': Uint8Array, 'app.css': Uint8Array }`, built from console/src. */
export async function bundleConsole(root = packageRoot) {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(root, 'console', 'src', 'main.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    legalComments: 'none',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: 'out',
    entryNames: 'app',
    logLevel: 'silent',
  });
  const files = {};
  for (const file of result.outputFiles) files[path.basename(file.path)] = file.contents;
  if (!files['app.js'] || !files['app.css']) throw new Error('the console bundle lacks app.js or app.css');
  return files;
}

/** Writes the bundle to dist/console/ (each file written beside and renamed, so a reader never sees half a file). */
export async function buildConsole(root = packageRoot) {
  const outdir = path.join(root, 'dist', 'console');
  fs.mkdirSync(outdir, { recursive: true });
  const files = await bundleConsole(root);
  for (const [name, contents] of Object.entries(files)) {
    const target = path.join(outdir, name);
    const temporary = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, contents);
    fs.renameSync(temporary, target);
  }
  return outdir;
}

/** The newest modification time of the console's sources, to tell whether dist/console is current. */
export function consoleSourcesModifiedMs(root = packageRoot) {
  const folder = path.join(root, 'console', 'src');
  return Math.max(
    0,
    ...fs
      .readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs),
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = await buildConsole();
  process.stdout.write(`console bundle written to ${path.relative(packageRoot, outdir)}\n`);
}
