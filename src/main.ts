import type { Config } from './platform/config.js';
import { systemClock, type Clock } from './platform/clock.js';
import { openDatabase, type DatabaseHandle } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import type { Deps } from './platform/deps.js';
import { WorkerRunner } from './platform/workers.js';
import { buildApp } from './app.js';
import { bootstrapSandbox } from './modules/tenants/tenants.service.js';
import { clientSeeders } from './modules/routes.js';
import { workerTasks } from './modules/worker-tasks.js';
import { sealPlaintextWebhookSecrets } from './modules/webhooks/index.js';

export async function openDeps(config: Config, clock: Clock = systemClock): Promise<Deps> {
  const database: DatabaseHandle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    memory: config.memory,
    poolMax: config.databasePoolMax,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  });
  const deps: Deps = { config, database, db: database.db, clock, clientSeeders };
  try {
    await migrate(database.pool);
    // Webhook secrets written in plain text before migration 0012 are encrypted now.
    await sealPlaintextWebhookSecrets(deps);
  } catch (error) {
    await database.close();
    throw error;
  }
  return deps;
}

function printSandboxKey(key: string, clientId: string, baseUrl: string): void {
  const line = '─'.repeat(72);
  process.stdout.write(
    `\n${line}\n  OpenBaaS sandbox: a client and an API key were created.\n` +
      `  Client: ${clientId}\n  API key (shown once, keep it): ${key}\n\n` +
      `  curl -H "Authorization: ${key}" ${baseUrl}/v1/assets\n${line}\n\n`,
  );
}

/** config → database → migrations → app → listen → workers; graceful shutdown on SIGTERM/SIGINT. */
export async function serve(config: Config): Promise<void> {
  const deps = await openDeps(config);
  const bootstrap = await bootstrapSandbox(deps);
  const { app, markShuttingDown } = await buildApp(deps);
  const workers = new WorkerRunner(config.runWorkers ? workerTasks(deps) : [], app.log);

  let closing: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    closing ??= (async () => {
      app.log.info({ signal }, 'shutting down');
      markShuttingDown();
      const forceClose = setTimeout(() => app.server.closeAllConnections(), config.shutdownTimeoutMs);
      forceClose.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(forceClose);
        await workers.stop();
        await deps.database.close();
        app.log.info('stopped');
      }
    })();
    return closing;
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM').then(() => process.exit(0)));
  process.once('SIGINT', () => void shutdown('SIGINT').then(() => process.exit(0)));

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await workers.stop();
    await deps.database.close();
    throw error;
  }
  workers.start();
  if (bootstrap && !config.sandboxApiKey) printSandboxKey(bootstrap.key.key, bootstrap.client.id, config.publicBaseUrl);
  app.log.info({ database: deps.database.kind, mode: config.mode }, 'OpenBaaS is ready');
}

/** Background workers only (no HTTP), for operators who scale them separately. */
export async function runWorkersOnly(config: Config): Promise<void> {
  const deps = await openDeps(config);
  const logger = {
    error: (object: object, message: string) => process.stderr.write(`${JSON.stringify({ level: 'error', msg: message, ...object })}\n`),
  };
  const workers = new WorkerRunner(workerTasks(deps), logger);
  workers.start();
  const stop = async () => {
    await workers.stop();
    await deps.database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}
