import net from 'node:net';
import { ConfigError, type Config } from './platform/config.js';
import { systemClock, type Clock } from './platform/clock.js';
import { databaseUrlForDisplay, openDatabase, type DatabaseHandle } from './platform/db/database.js';
import { anyMigrationApplied, migrate } from './platform/db/migrate.js';
import type { Deps } from './platform/deps.js';
import { WorkerRunner } from './platform/workers.js';
import { buildApp } from './app.js';
import { checkModuleSettings } from './modules/routes.js';
import { bootstrapSandbox } from './modules/tenants/tenants.service.js';
import { clientSeeders } from './modules/routes.js';
import { workerTasks } from './modules/worker-tasks.js';
import { sealPlaintextWebhookSecrets } from './modules/webhooks/index.js';
import { cardVaultOf, seedMissingCardPrograms } from './modules/cards/index.js';
import { checkEncryptionKey, checkVaultKey } from './platform/crypto/key-check.js';
import { fieldCipherOf } from './platform/crypto/field-cipher.js';

/** Start-up progress for a person watching the terminal ("applying migrations 3/41 (0003_ledger)…"). */
export type ProgressReporter = (message: string) => void;

/**
 * Opens the database, applies the pending migrations and checks the keys. With `purpose` (what a
 * command that only reads or changes existing data would do), a database no migration was ever
 * applied to is refused instead of set up: until 2026-12-07 `ledger verify` pointed at an empty
 * PostgreSQL database (a wrong name in DATABASE_URL) created every table there and reported it
 * clean (found by an audit; the embedded database's folder is checked before it is opened, cli.ts).
 */
export async function openDeps(
  config: Config,
  options: { clock?: Clock; onProgress?: ProgressReporter; onMigrated?: (applied: readonly string[]) => void; purpose?: string } = {},
): Promise<Deps> {
  const { clock = systemClock, onProgress, onMigrated, purpose } = options;
  const database: DatabaseHandle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    memory: config.memory,
    poolMax: config.databasePoolMax,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    idleTimeoutMs: config.databasePoolIdleTimeoutMs,
    onProgress,
  });
  const deps: Deps = { config, database, db: database.db, clock, clientSeeders };
  try {
    if (purpose !== undefined && !(await anyMigrationApplied(database.pool))) {
      const where = config.databaseUrl === undefined ? `the embedded database in ${config.dataDir}` : `the database of DATABASE_URL (${databaseUrlForDisplay(config.databaseUrl)})`;
      throw new ConfigError(
        `${where} holds no OpenBaaS data (no migration was ever applied to it), so nothing to ${purpose}: ` +
          'point DATABASE_URL (or DATA_DIR) at the database you mean, or run `openbaas migrate` once to set one up there.',
      );
    }
    const applied = await migrate(database.pool, undefined, {
      onMigration: ({ position, total, migration }) => onProgress?.(`applying migrations ${position}/${total} (${migration})…`),
    });
    onMigrated?.(applied);
    // Before anything is encrypted: a process with another key than the database's is refused.
    await checkEncryptionKey(deps.db, fieldCipherOf(deps).keyId);
    await checkVaultKey(deps.db, cardVaultOf(deps).keyId);
    // Webhook secrets written in plain text before migration 0012 are encrypted now.
    await sealPlaintextWebhookSecrets(deps);
    // Clients created before card programs existed (migration 0024) get the default programs.
    await seedMissingCardPrograms(deps.db, clock.now());
  } catch (error) {
    await database.close();
    throw error;
  }
  return deps;
}

function printSandboxKey(key: string, clientId: string, baseUrl: string, consoleServed: boolean, started: boolean, memory: boolean): void {
  const line = '─'.repeat(72);
  // An in-memory database goes with the process: nothing is kept (until 2026-12-08 this said it was; found by an audit).
  const notStarted = `  The server did not start (the reason follows); ${memory ? 'the in-memory database is gone, and this key with it' : 'the key is kept for the next start'}.\n`;
  const howToUse = `  curl -H "Authorization: ${key}" ${baseUrl}/v1/assets\n` + (consoleServed ? `  Console: ${baseUrl}/console (paste the key to sign in)\n` : '');
  process.stdout.write(
    `\n${line}\n  OpenBaaS sandbox: a client and an API key were created.\n` +
      `  Client: ${clientId}\n  API key (shown once, keep it): ${key}\n\n` +
      (started ? howToUse : notStarted) +
      `${line}\n\n`,
  );
}

/** Progress lines on stdout for a person starting the server, unless logging is silenced. */
function startupReporter(config: Config): ProgressReporter | undefined {
  if (config.logLevel === 'silent') return undefined;
  return (message) => process.stdout.write(`openbaas: ${message}\n`);
}

/**
 * Ends the process once `stop` has finished, on the first SIGTERM or SIGINT. Later signals are
 * ignored rather than fatal: under `npm start` a Ctrl-C reaches the server twice (from the terminal
 * and forwarded by npm), and the second must not cut the shutdown short. A stop that fails or
 * hangs (a database that no longer answers) still ends the process, with code 1, at the latest
 * `deadlineMs` after the signal.
 */
export function exitOnSignal(
  stop: (signal: NodeJS.Signals) => Promise<void>,
  deadlineMs: number,
  logError: (object: object, message: string) => void,
  replacing?: (signal: NodeJS.Signals) => void,
): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      logError({ signal }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, deadlineMs).unref();
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logError({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // The listeners it takes over from are removed only now, once its own are on: removing a
  // signal's last listener closes Node's watcher of it, and a signal the watcher had caught but not
  // yet handed to a listener is lost with it. Until 2026-12-07 serve removed its start-time
  // listeners first: a Ctrl-C or SIGTERM while the app was built (without a pass of the event loop)
  // was lost, and the server went on to serve (found by an audit).
  if (replacing) stopListening(replacing);
}

/** Removes `listener` from SIGTERM and SIGINT. */
function stopListening(listener: (signal: NodeJS.Signals) => void): void {
  process.off('SIGTERM', listener);
  process.off('SIGINT', listener);
}

/**
 * HOST's refusals in one line naming it: a name that does not resolve (ENOTFOUND, EAI_AGAIN) or an
 * address that is not one of this machine's (EADDRNOTAVAIL); undefined for any other failure.
 */
function hostRefusal(host: string, error: unknown): ConfigError | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return new ConfigError(`HOST: the host name ${host} does not resolve to an address (${code}): set HOST to an address of this machine (such as 127.0.0.1 or 0.0.0.0)`);
  if (code === 'EADDRNOTAVAIL') return new ConfigError(`HOST: ${host} is not an address of this machine (EADDRNOTAVAIL): set HOST to one of its addresses (such as 127.0.0.1 or 0.0.0.0)`);
  return undefined;
}

/**
 * Opens and closes a listener on HOST (on a port the system picks), so a HOST the server could
 * never listen on is refused before the database and the sandbox client are made: until
 * 2026-12-07 it failed at the listener, after them, with a stack (found by an audit). The port
 * itself is checked when the server listens (another process may take it meanwhile anyway).
 */
async function checkHost(host: string): Promise<void> {
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(0, host, () => resolve());
    });
  } catch (error) {
    throw hostRefusal(host, error) ?? error;
  } finally {
    if (probe.listening) await new Promise((resolve) => probe.close(resolve));
  }
}

/** config → database → migrations → app → listen → workers; graceful shutdown on SIGTERM/SIGINT. */
export async function serve(config: Config): Promise<void> {
  checkModuleSettings(config);
  await checkHost(config.host);
  const progress = startupReporter(config);
  const deps = await openDeps(config, { onProgress: progress });
  let bootstrap: Awaited<ReturnType<typeof bootstrapSandbox>>;
  // The key of a sandbox client made by this start is shown once: when the server is ready, or
  // before the reason it did not start (until 2026-12-07 a start that failed after making the
  // client, on a port in use say, never showed it, and the next start made none; found by an audit).
  let keyShown = false;
  const showNewKey = (started: boolean, baseUrl = config.publicBaseUrl) => {
    if (keyShown) return;
    keyShown = true;
    if (bootstrap && !config.sandboxApiKey) printSandboxKey(bootstrap.key.key, bootstrap.client.id, baseUrl, config.console, started, config.memory);
  };
  // A SIGTERM or SIGINT from the making of the sandbox client until the server's own handlers
  // take over (exitOnSignal, below) shows the key first: until 2026-12-07 the signal's default
  // action ended the process there, and a Ctrl-C during a slow first start lost the key of a
  // client already made (found by an audit). A signal while the client is being made waits for
  // that transaction (at most SHUTDOWN_TIMEOUT_MS), so a key committed is never lost. The process
  // then ends as the signal ends it (status 130 or 143 in a shell).
  const bootstrapping = bootstrapSandbox(deps, progress).then((made) => (bootstrap = made));
  let signalledDuringStart = false;
  const stopHandlingSignalsDuringStart = () => stopListening(onSignalDuringStart);
  const onSignalDuringStart = (signal: NodeJS.Signals) => {
    if (signalledDuringStart) return;
    signalledDuringStart = true;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(deadline);
      showNewKey(false);
      process.stderr.write(`openbaas: ${signal}: stopped before the server was ready\n`);
      stopHandlingSignalsDuringStart();
      process.kill(process.pid, signal);
    };
    const deadline = setTimeout(end, config.shutdownTimeoutMs);
    bootstrapping.then(end, end);
  };
  process.on('SIGTERM', onSignalDuringStart);
  process.on('SIGINT', onSignalDuringStart);
  await bootstrapping.catch((error: unknown) => {
    stopHandlingSignalsDuringStart();
    throw error;
  });
  const { app, markShuttingDown, markDraining } = await buildApp(deps).catch((error: unknown) => {
    stopHandlingSignalsDuringStart();
    showNewKey(false);
    throw error;
  });
  // A signal came while the app was being built: the process is ending (onSignalDuringStart).
  if (signalledDuringStart) return new Promise<void>(() => undefined);
  const workers = new WorkerRunner(config.runWorkers ? workerTasks(deps, app.log) : [], app.log);

  let closing: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    closing ??= (async () => {
      // Stopped before it was ready (while it starts to listen): the key of a client it made is shown first.
      if (!keyShown) {
        showNewKey(false);
        process.stderr.write(`openbaas: ${signal}: stopped before the server was ready\n`);
      }
      // Only a SIGTERM drains (a process manager or a load balancer's orchestrator sends it):
      // Ctrl-C (SIGINT) is a person at a terminal, who wants the server stopped now.
      if (config.shutdownDrainMs > 0 && signal === 'SIGTERM') {
        // A load balancer that polls /health/ready stops sending traffic before the listener
        // closes (until 2026-12-07 the listener closed at once, so the probe was refused rather
        // than answered 503; found by an audit). A second SIGTERM or a SIGINT ends the drain early.
        app.log.info({ signal, drainMs: config.shutdownDrainMs }, 'draining: /health/ready answers 503, requests are still served');
        progress?.(`SIGTERM: draining for ${config.shutdownDrainMs} ms (/health/ready answers 503) before stopping; send SIGTERM or SIGINT again to stop now`);
        markDraining();
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            stopListening(done);
            resolve();
          };
          const timer = setTimeout(done, config.shutdownDrainMs);
          process.on('SIGTERM', done);
          process.on('SIGINT', done);
        });
      }
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
  exitOnSignal(shutdown, config.shutdownDrainMs + 2 * config.shutdownTimeoutMs, (object, message) => app.log.error(object, message), onSignalDuringStart);

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await workers.stop();
    await deps.database.close();
    showNewKey(false);
    // A port in use or not allowed is the operator's to change: one line, as for a bad setting
    // (until 2026-12-07 the listener's error with its stack; found by a re-audit).
    const code = (error as NodeJS.ErrnoException).code;
    const refusal = hostRefusal(config.host, error);
    if (refusal) throw refusal;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      const why = code === 'EADDRINUSE' ? 'is in use by another process' : 'may not be opened by this user';
      throw new ConfigError(`${config.host}:${config.port} ${why} (${code}): stop that process or choose another port (--port or PORT)`);
    }
    throw error;
  }
  workers.start();
  // Port 0 listens on a port the system picks: the ready line and the key's curl line name that
  // one (until 2026-12-07 they said port 0; found by an audit). The links the API hands out were
  // made from PUBLIC_BASE_URL before the port was known: with port 0, set PUBLIC_BASE_URL (README).
  const address = app.server.address();
  const listenedOn = typeof address === 'object' && address !== null ? address.port : config.port;
  const baseUrl = config.port === 0 && config.publicBaseUrl === `http://localhost:0` ? `http://localhost:${listenedOn}` : config.publicBaseUrl;
  showNewKey(true, baseUrl);
  // performance.now() counts from the start of the process, so module loading (and a build by
  // `npm start`) is included.
  const readySeconds = (performance.now() / 1000).toFixed(1);
  // A PUBLIC_BASE_URL is where clients reach the server (a proxy, say), not where it listens: the
  // line names both (until 2026-12-07 only the former, unless the port was 0).
  const listening = baseUrl === `http://localhost:${listenedOn}` ? '' : ` (listening on ${config.host.includes(':') ? `[${config.host}]` : config.host}:${listenedOn})`;
  progress?.(`ready in ${readySeconds} s on ${baseUrl}${listening}`);
  app.log.info({ database: deps.database.kind, mode: config.mode, readySeconds: Number(readySeconds) }, 'OpenBaaS is ready');
}

/** Background workers only (no HTTP), for operators who scale them separately. */
export async function runWorkersOnly(config: Config): Promise<void> {
  const progress = startupReporter(config);
  const deps = await openDeps(config, { onProgress: progress });
  // An Error as its name, message, code and stack (JSON.stringify wrote it as {}, the cause lost; found by an audit).
  const line = (level: 'error' | 'warn') => (object: object, message: string) => process.stderr.write(`${JSON.stringify({ level, msg: message, ...object }, errorsAsObjects)}\n`);
  const logger = { error: line('error'), warn: line('warn') };
  const workers = new WorkerRunner(workerTasks(deps, logger), logger);
  workers.start();
  // The tasks' timers do not hold the process open (in `serve` the listener does): without this,
  // a worker whose pool lost every connection while the database refused new ones had nothing
  // left to wait for and ended with status 0, delivering nothing once the database came back
  // (until 2026-12-07; found by an audit). It now runs until a signal stops it, its tasks failing
  // and trying again meanwhile, as `serve`'s do.
  const keepAlive = setInterval(() => undefined, 2 ** 31 - 1);
  // As `serve` says it is ready (until 2026-12-05 the worker said nothing once started; found by an audit).
  progress?.(`workers running in ${(performance.now() / 1000).toFixed(1)} s (timers, webhook deliveries and the other background tasks)`);
  exitOnSignal(
    async (signal) => {
      // As `serve` logs its shutdown (until 2026-12-07 the worker stopped without a word; found by an audit).
      progress?.(`${signal}: stopping the workers (waiting for the tasks they are running)…`);
      clearInterval(keepAlive);
      await workers.stop();
      await deps.database.close();
      progress?.('stopped');
    },
    2 * config.shutdownTimeoutMs,
    logger.error,
  );
}

/** A JSON.stringify replacer that writes an Error as its fields (its own properties are not enumerable). */
export function errorsAsObjects(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return { type: value.name, message: value.message, ...(code === undefined ? {} : { code }), stack: value.stack };
}
