import crypto from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { loadConsoleAssets, type ConsoleAssets } from './console-assets.js';

/** Where the console lives. */
export const consolePath = '/console';

/**
 * Nothing but its own script and style sheet, API calls to its own origin, never framed: the
 * page holds an API key (in session storage), so no other origin may run code in it or frame it.
 */
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const securityHeaders = {
  'content-security-policy': contentSecurityPolicy,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function page(version: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>OpenBaaS console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${consolePath}/app.css?v=${version}">
</head>
<body>
<div id="app"><p class="loading">Loading the console…</p></div>
<noscript>The OpenBaaS console needs JavaScript.</noscript>
<script type="module" src="${consolePath}/app.js?v=${version}"></script>
</body>
</html>
`;
}

/**
 * The sandbox console: one HTML page and its bundle (console/src, Preact), public routes (the
 * page asks for an API key and sends it with each API call; nothing here reads data). Served in
 * sandbox mode, and in production only with OPENBAAS_CONSOLE=on.
 */
export function registerConsoleRoutes(app: App, deps: Pick<Deps, 'config'>, load: () => Promise<ConsoleAssets | undefined> = loadConsoleAssets): void {
  if (!deps.config.console) return;
  let loading: Promise<{ assets: ConsoleAssets; version: string } | undefined> | undefined;
  // A bundle found is kept for the life of the process; none found (not built yet) or a failed read
  // is looked for again by the next request, so building the console needs no restart (until
  // 2026-12-02 the first miss was kept, found by a docs audit).
  const assets = () =>
    (loading ??= load().then(
      (loaded) => {
        if (!loaded) {
          loading = undefined;
          return undefined;
        }
        const hash = crypto.createHash('sha256');
        for (const contents of loaded.values()) hash.update(contents);
        return { assets: loaded, version: hash.digest('hex').slice(0, 12) };
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  const notBuilt = (reply: FastifyReply) =>
    reply.code(503).headers(securityHeaders).type('text/plain; charset=utf-8').send('The console was not built: run `npm run build` (or `npm run build:console`).\n');

  const config = { public: true, rateLimit: false } as const;
  // The router ignores a trailing slash: /console and /console/ are this one route.
  app.get(consolePath, { config, schema: { hide: true } }, async (_request, reply) => {
    const loaded = await assets();
    if (!loaded) return notBuilt(reply);
    return reply.headers({ ...securityHeaders, 'cache-control': 'no-cache' }).type('text/html; charset=utf-8').send(page(loaded.version));
  });
  for (const name of ['app.js', 'app.css'] as const) {
    app.get(`${consolePath}/${name}`, { config, schema: { hide: true } }, async (_request, reply) => {
      const loaded = await assets();
      const contents = loaded?.assets.get(name);
      if (!contents) return notBuilt(reply);
      return reply
        .headers({ ...securityHeaders, 'cache-control': 'public, max-age=300' })
        .type(name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8')
        .send(Buffer.from(contents));
    });
  }
}
