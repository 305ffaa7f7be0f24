import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../paths.js';

/** The two files of the console's bundle, by name. */
export type ConsoleAssets = ReadonlyMap<'app.js' | 'app.css', Uint8Array>;

/** True when this module runs from src/ (tsx, vitest), false from the built dist/. */
const runningFromSource = import.meta.url.endsWith('.ts');

/**
 * Where the bundle comes from. Built (dist/): the files `npm run build` or the `npm start`
 * launcher wrote to dist/console/. From the sources (tests, `npm run dev`): bundled in memory by
 * scripts/build-console.mjs from console/src, so what is served is always the current source.
 * Undefined when there is no bundle (a production install whose build left it out).
 */
export async function loadConsoleAssets(): Promise<ConsoleAssets | undefined> {
  if (runningFromSource) {
    const script = pathToFileURL(path.join(packageRoot, 'scripts', 'build-console.mjs')).href;
    const { bundleConsole } = (await import(script)) as { bundleConsole: () => Promise<Record<string, Uint8Array>> };
    return assetsOf(await bundleConsole());
  }
  const folder = path.join(packageRoot, 'dist', 'console');
  try {
    return assetsOf({ 'app.js': await fs.readFile(path.join(folder, 'app.js')), 'app.css': await fs.readFile(path.join(folder, 'app.css')) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function assetsOf(files: Record<string, Uint8Array | undefined>): ConsoleAssets | undefined {
  const js = files['app.js'];
  const css = files['app.css'];
  return js && css ? new Map([['app.js', js], ['app.css', css]] as const) : undefined;
}
