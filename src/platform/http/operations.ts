import type { App } from './app-type.js';
import type { Deps } from '../deps.js';
import { migrationsAreCurrent } from '../db/migrate.js';
import { AppError } from './errors.js';
import { withinTime } from '../time-limit.js';
import type { Registry } from 'prom-client';

/**
 * How long the readiness probe waits for the database. A connection whose database stopped
 * answering without closing it (a network partition) holds a statement for as long as that lasts:
 * until 2026-12-07 the probe waited with it, past a load balancer's own timeout or forever (found
 * by an audit). The statement goes on; the probe answers 503.
 */
const readyTimeoutMs = 5_000;

/** A reason of our own the process is not ready, which the probe may say publicly. */
class NotReady extends Error {}

/** Health, metrics and the OpenAPI document: public (the metrics unless OPENBAAS_METRICS_TOKEN is set), not rate limited, hidden from the reference. */
/** `notReadyBecause` names why the process takes no new traffic ('draining', 'shutting down'), or is undefined. */
export function registerOperationRoutes(app: App, deps: Deps, registry: Registry, notReadyBecause: () => string | undefined): void {
  const config = { public: true, rateLimit: false } as const;
  let migrationsChecked = false;

  app.get('/health/live', { config, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/health/ready', { config, schema: { hide: true } }, async (request, reply) => {
    try {
      const stopping = notReadyBecause();
      if (stopping !== undefined) throw new NotReady(stopping);
      const answered = await withinTime(deps.database.pool.query('SELECT 1').then(() => true), readyTimeoutMs, false);
      if (!answered) throw new NotReady(`the database did not answer within ${readyTimeoutMs / 1000} s`);
      if (!migrationsChecked) migrationsChecked = await migrationsAreCurrent(deps.database.pool);
      if (!migrationsChecked) throw new NotReady('migrations pending');
      return reply.send({ status: 'ready', database: deps.database.kind });
    } catch (error) {
      if (error instanceof NotReady) throw new AppError('SERVICE_UNAVAILABLE', `Not ready: ${error.message}`);
      // The probe is public: the database's error (naming its host and port, say) goes to the log
      // only (until 2026-12-07 the answer read "Not ready: connect ECONNREFUSED 10.0.0.5:5432";
      // found by an audit).
      request.log.warn({ err: error }, 'readiness probe: the database query failed');
      throw new AppError('SERVICE_UNAVAILABLE', 'Not ready: the database cannot be reached');
    }
  });

  app.get('/metrics', { config: { ...config, metrics: true }, schema: { hide: true } }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });

  app.get('/openapi.json', { config, schema: { hide: true } }, async () => app.swagger());
  // The same document as YAML (what Stainless and many generators take by default).
  app.get('/openapi.yaml', { config, schema: { hide: true } }, async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })));
}
