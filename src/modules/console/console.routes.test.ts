import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../platform/deps.js';
import type { ConsoleAssets } from './console-assets.js';
import { registerConsoleRoutes } from './console.routes.js';

/** The console's routes on an app of their own, with a bundle read through `found` (absent, or a failed read, until the test says). */
async function consoleApp(found: () => ConsoleAssets | undefined | Error) {
  const app = Fastify();
  let reads = 0;
  const load = () => {
    reads += 1;
    const result = found();
    return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
  };
  registerConsoleRoutes(app, { config: { console: true } } as unknown as Pick<Deps, 'config'>, load);
  await app.ready();
  return { app, reads: () => reads };
}

const bundle: ConsoleAssets = new Map([
  ['app.js', new TextEncoder().encode('console.log(1)')],
  ['app.css', new TextEncoder().encode('body{}')],
] as const);

describe('the console bundle', () => {
  it('built after the server started: 503 until then, served from the next request, no restart', async () => {
    let built = false;
    const { app, reads } = await consoleApp(() => (built ? bundle : undefined));
    try {
      expect((await app.inject({ url: '/console' })).statusCode).toBe(503);
      expect((await app.inject({ url: '/console/app.js' })).statusCode).toBe(503);
      built = true;
      const page = await app.inject({ url: '/console' });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('/console/app.js?v=');
      expect((await app.inject({ url: '/console/app.js' })).body).toBe('console.log(1)');
      // Found once, kept: no further reads.
      const before = reads();
      await app.inject({ url: '/console/app.css' });
      expect(reads()).toBe(before);
    } finally {
      await app.close();
    }
  });

  it('a failed read is tried again by the next request', async () => {
    let fail = true;
    const { app } = await consoleApp(() => (fail ? new Error('EIO') : bundle));
    try {
      expect((await app.inject({ url: '/console' })).statusCode).toBe(500);
      fail = false;
      expect((await app.inject({ url: '/console' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
