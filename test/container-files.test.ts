import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { environmentVariables } from '../src/platform/config.js';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.js';
import { packageRoot } from '../src/paths.js';
import { testDatabase } from './harness.js';
import { freePort } from './support/free-port.js';
import { migratedDataFolder, temporaryFolder } from './support/temp-folder.js';

// No image can be built here (no registry to pull node:20-slim from), so the container files are
// tested against the program itself (issue 26, item 6): the image's command, run with the image's
// environment, starts a server that its own HEALTHCHECK finds ready on /health/ready and that
// stops on SIGTERM as `docker stop` sends it; compose's `serve --no-workers` and `worker` commands
// run with compose's environment on PostgreSQL. The image's /app is the package folder here; its
// /app/data volume is a temporary folder; its port is a free one.

const read = (file: string) => fs.readFileSync(path.join(packageRoot, file), 'utf8');

interface Instruction {
  name: string;
  args: string;
}

/** The Dockerfile's instructions, stage by stage (continuation lines joined, comments dropped). */
function dockerfileStages(text: string): Instruction[][] {
  const joined = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const stages: Instruction[][] = [];
  for (const line of joined.split('\n')) {
    const match = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!match?.[1] || match[2] === undefined) continue;
    if (match[1] === 'FROM') stages.push([]);
    stages.at(-1)?.push({ name: match[1], args: match[2].trim() });
  }
  return stages;
}

/** An ENV instruction's `NAME=value` pairs (the Dockerfile's values have no spaces). */
function envPairs(args: string): Record<string, string> {
  return Object.fromEntries([...args.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)].map((match) => [match[1], match[2]]));
}

const stages = dockerfileStages(read('Dockerfile'));
const runtime = stages.at(-1) ?? [];
const instructions = (name: string) => runtime.filter((entry) => entry.name === name);
const imageEnv = Object.assign({}, ...instructions('ENV').map((entry) => envPairs(entry.args))) as Record<string, string>;
const imageCommand = JSON.parse(instructions('CMD').at(-1)?.args ?? '[]') as string[];
const healthcheckArgs = instructions('HEALTHCHECK').at(-1)?.args ?? '';
const healthcheckCommand = JSON.parse(healthcheckArgs.slice(healthcheckArgs.indexOf('CMD') + 3).trim() || '[]') as string[];

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
}
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> };

/** The node flags `npm start` gives the server (package.json: `exec node <flags> scripts/start.mjs`). */
function npmStartNodeFlags(): string[] {
  const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start ?? '';
  const words = start.split(/\s+/).filter((word) => word !== 'exec');
  expect(words[0]).toBe('node');
  expect(words.at(-1)).toBe('scripts/start.mjs');
  return words.slice(1, -1);
}

const knownVariables = new Set(environmentVariables.map(([name]) => name));
const children = new Set<ChildProcess>();

/**
 * Replaces the image's /app with the package folder and its /app/data volume with a temporary
 * folder: an empty one (a first start), or with `migrated` on the embedded database one holding a
 * migrated database, for a test that is not about the first start (initdb and the migrations take
 * seconds of CPU).
 */
function onThisMachine(env: Record<string, string>, options: { migrated?: boolean } = {}): Record<string, string> {
  const dataDir = options.migrated && testDatabase === 'pglite' ? migratedDataFolder('image-data') : temporaryFolder('image-data');
  return { ...env, ...(env.DATA_DIR === '/app/data' ? { DATA_DIR: dataDir } : {}) };
}

/** A process started the way the container starts it: `command` in /app with exactly `env`. */
function run(command: readonly string[], env: Record<string, string>) {
  const [program, ...args] = command;
  expect(program).toBe('node');
  const child = spawn(process.execPath, args, { cwd: packageRoot, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, exited, output: () => output };
}

/** The image's HEALTHCHECK command, run beside the server with the container's environment: its exit code. */
function healthcheck(env: Record<string, string>): number | null {
  const [program, ...args] = healthcheckCommand;
  expect(program).toBe('node');
  return spawnSync(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 10_000 }).status;
}

async function waitUntilHealthy(env: Record<string, string>, started: ReturnType<typeof run>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (healthcheck(env) !== 0) {
    expect(started.child.exitCode, `the server exited:\n${started.output()}`).toBeNull();
    expect(Date.now() < deadline, `never healthy:\n${started.output()}`).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// The postgres project runs the servers in a schema of their own on TEST_DATABASE_URL.
let admin: DatabaseHandle | undefined;
let schema: string | undefined;
let databaseUrl: string | undefined;
// One key for every server of this file's schema: a process with another key than the database's is refused at start.
const encryptionKey = crypto.randomBytes(32).toString('hex');

beforeAll(async () => {
  // The image runs dist/, built from the sources: build it now if it is missing or older.
  const launcher = (await import(path.join(packageRoot, 'scripts', 'start.mjs'))) as { buildIsCurrent: () => boolean; build: () => Promise<void> };
  if (!launcher.buildIsCurrent()) await launcher.build();
  if (testDatabase === 'postgres') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is required for the postgres test project');
    schema = `container_${crypto.randomBytes(5).toString('hex')}`;
    admin = await openDatabase({ databaseUrl: url, poolMax: 1, connectTimeoutMs: 10_000 });
    await admin.pool.query(`CREATE SCHEMA ${schema}`);
    databaseUrl = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  }
}, 120_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (admin && schema) await admin.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.close();
});

describe('the image, as written in the Dockerfile', () => {
  it('is built in a stage of its own and runs on a slim Node.js 20 image, production dependencies only, as an unprivileged user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const build = (stages[0] ?? []).map((entry) => `${entry.name} ${entry.args}`);
    expect(build).toEqual(expect.arrayContaining(['RUN npm ci', 'RUN npm run build']));
    expect(instructions('FROM')[0]?.args).toMatch(/^node:20-slim\b/);
    expect((JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node).toMatch(/^>=20\./);
    expect(instructions('RUN').map((entry) => entry.args).join(' ')).toContain('npm ci --omit=dev');
    expect(instructions('COPY').map((entry) => entry.args)).toEqual(expect.arrayContaining(['--from=build /app/dist ./dist', 'migrations ./migrations']));
    const user = instructions('USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(instructions('WORKDIR').at(-1)?.args).toBe('/app');
  });

  it('runs the server `npm start` runs, with its node flags, on variables the program reads, listening on every interface', () => {
    expect(imageCommand).toEqual(['node', ...npmStartNodeFlags(), 'dist/cli.js', 'serve']);
    expect(imageEnv.HOST).toBe('0.0.0.0');
    expect(instructions('EXPOSE').map((entry) => entry.args)).toContain(imageEnv.PORT);
    for (const name of Object.keys(imageEnv)) if (name !== 'NODE_ENV') expect(knownVariables, name).toContain(name);
  });

  it('leaves the local build, data, dependencies and repository out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', 'data', '.git']));
  });
});

describe('the image command, run with the image environment', () => {
  it('starts a server its HEALTHCHECK finds ready; SIGTERM (docker stop) stops it cleanly and the check then fails', async () => {
    const port = String(await freePort());
    // On PostgreSQL the container is given DATABASE_URL and the encryption key, as compose does.
    const extra: Record<string, string> =
      testDatabase === 'postgres' && databaseUrl ? { DATABASE_URL: databaseUrl, OPENBAAS_ENCRYPTION_KEY: encryptionKey } : {};
    const env = onThisMachine({ ...imageEnv, PORT: port, ...extra });
    expect(healthcheck(env)).toBe(1); // nothing listens yet
    const server = run(imageCommand, env);
    await waitUntilHealthy(env, server);

    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(ready.status).toBe(200);
    // The sandbox client and its key are printed once, for `docker logs`.
    expect(server.output()).toContain('OpenBaaS sandbox: a client and an API key were created.');
    if (testDatabase === 'pglite') expect(fs.existsSync(path.join(env.DATA_DIR ?? '', 'PG_VERSION'))).toBe(true);

    server.child.kill('SIGTERM');
    expect(await server.exited, server.output()).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
    expect(server.output()).not.toContain('DeprecationWarning');
    expect(healthcheck(env)).toBe(1);
  }, 150_000);

  // Until 2026-12-07 the listener closed on SIGTERM at once, so a load balancer's probe was refused
  // rather than told 503 (found by an audit); SHUTDOWN_DRAIN_MS gives it that window.
  it('with SHUTDOWN_DRAIN_MS, on SIGTERM /health/ready answers 503 for that long while requests are still served, then the server stops', async () => {
    const port = String(await freePort());
    const extra: Record<string, string> =
      testDatabase === 'postgres' && databaseUrl ? { DATABASE_URL: databaseUrl, OPENBAAS_ENCRYPTION_KEY: encryptionKey } : {};
    const env = onThisMachine({ ...imageEnv, PORT: port, SHUTDOWN_DRAIN_MS: '3000', OPENBAAS_API_KEY: 'sk_test_drainingKey00000001', LOG_LEVEL: 'info', ...extra }, { migrated: true });
    const server = run(imageCommand, env);
    await waitUntilHealthy(env, server);
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await vi.waitFor(() => expect(server.output()).toContain('"msg":"draining: /health/ready answers 503, requests are still served"'), { timeout: 2000, interval: 20 });
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { message: string }).message).toBe('Not ready: draining');
    expect(healthcheck(env)).toBe(1);
    const served = await fetch(`http://127.0.0.1:${port}/v1/assets`, { headers: { authorization: 'sk_test_drainingKey00000001' } });
    expect(served.status).toBe(200);
    expect(Date.now() - signalled).toBeLessThan(3000);
    expect(await server.exited, server.output()).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(3000);
    expect(server.output()).toContain('"msg":"stopped"');
  }, 150_000);

  it('a second SIGTERM ends the drain at once, and SIGINT (Ctrl-C) does not drain', async () => {
    const extra: Record<string, string> =
      testDatabase === 'postgres' && databaseUrl ? { DATABASE_URL: databaseUrl, OPENBAAS_ENCRYPTION_KEY: encryptionKey } : {};
    for (const signals of [['SIGTERM', 'SIGTERM'], ['SIGINT']] as const) {
      const port = String(await freePort());
      const env = onThisMachine({ ...imageEnv, PORT: port, SHUTDOWN_DRAIN_MS: '60000', LOG_LEVEL: 'info', ...extra }, { migrated: true });
      const server = run(imageCommand, env);
      await waitUntilHealthy(env, server);
      const signalled = Date.now();
      server.child.kill(signals[0]);
      if (signals.length === 2) {
        await vi.waitFor(() => expect(server.output()).toContain('"msg":"draining: /health/ready answers 503, requests are still served"'), { timeout: 2000, interval: 20 });
        server.child.kill(signals[1]);
      }
      expect(await server.exited, server.output()).toBe(0);
      // Far less than the 60 s drain.
      expect(Date.now() - signalled, signals.join(' ')).toBeLessThan(20_000);
      if (signals.length === 1) expect(server.output()).not.toContain('draining');
      expect(server.output()).toContain('"msg":"stopped"');
    }
  }, 150_000);
});

describe('compose.yaml', () => {
  const services = compose.services;

  it('runs PostgreSQL 15 with a health check, and one serve and one worker that wait for it, share its URL and the key', () => {
    expect(services.postgres?.image).toBe('postgres:15');
    expect(services.postgres?.healthcheck?.test?.join(' ')).toContain('pg_isready');
    const flags = npmStartNodeFlags();
    expect(services.serve?.command).toEqual(['node', ...flags, 'dist/cli.js', 'serve', '--no-workers']);
    expect(services.worker?.command).toEqual(['node', ...flags, 'dist/cli.js', 'worker']);
    expect(services.serve?.environment?.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\/\w+$/);
    for (const service of [services.serve, services.worker]) {
      expect(service?.environment?.DATABASE_URL).toBe(services.serve?.environment?.DATABASE_URL);
      expect(service?.environment?.OPENBAAS_ENCRYPTION_KEY).toMatch(/^\$\{OPENBAAS_ENCRYPTION_KEY:\?/);
      expect(service?.depends_on?.postgres?.condition).toBe('service_healthy');
      for (const variable of Object.keys(service?.environment ?? {})) expect(knownVariables, variable).toContain(variable);
    }
    // The worker serves no HTTP: the image's health check would call it unhealthy.
    expect(services.worker?.healthcheck?.disable).toBe(true);
  });

  // Compose runs them on PostgreSQL: this test exists in the postgres project only (an embedded
  // data folder takes one process at a time).
  const onPostgres = testDatabase === 'postgres' ? it : undefined;
  onPostgres?.(
    "serve --no-workers and worker, started with compose's commands on one database at once, both come up and stop on SIGTERM",
    async () => {
      const port = String(await freePort());
      const env = onThisMachine({
        ...imageEnv,
        PORT: port,
        DATABASE_URL: databaseUrl ?? '',
        OPENBAAS_ENCRYPTION_KEY: encryptionKey,
        OPENBAAS_MODE: 'sandbox',
        LOG_LEVEL: 'info',
      });
      // Both apply the migrations at start, under the advisory lock: started together, as compose does.
      const serve = run(services.serve?.command ?? [], env);
      const worker = run(services.worker?.command ?? [], env);
      await waitUntilHealthy(env, serve);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(worker.child.exitCode, worker.output()).toBeNull();
      // The worker says when it runs, as the server says it is ready.
      await vi.waitFor(() => expect(worker.output()).toMatch(/openbaas: workers running in \d+\.\d s/), { timeout: 20_000, interval: 100 });

      worker.child.kill('SIGTERM');
      serve.child.kill('SIGTERM');
      expect(await worker.exited, worker.output()).toBe(0);
      expect(await serve.exited, serve.output()).toBe(0);
      // The worker says it stops, and when it has (as serve logs "shutting down" and "stopped").
      expect(worker.output()).toContain('openbaas: SIGTERM: stopping the workers (waiting for the tasks they are running)…\nopenbaas: stopped\n');
    },
    150_000,
  );
});
