import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths.js';
import { freePort } from './support/free-port.js';
import { temporaryFolder } from './support/temp-folder.js';

// `npm start` behaves like a service (issue 26, item 5): the server is the very process npm waits
// on, so a SIGTERM or SIGINT sent to npm (by a process manager, `kill`, a terminal) stops the
// server gracefully and leaves nothing running; a first start says what it is doing, every start
// how long it took. It runs on the embedded database, the one `npm start` uses without
// DATABASE_URL; test/container-files.test.ts starts the built server on both databases.

const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Started {
  npm: ChildProcessWithoutNullStreams;
  serverPid: number;
  baseUrl: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `npm start` on a data folder and waits until /health/ready answers 200. */
async function npmStart(dataDir: string): Promise<Started> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const npm = spawn('npm', ['start'], {
    cwd: packageRoot,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: '', OPENBAAS_MODE: 'sandbox', OPENBAAS_API_KEY: '', LOG_LEVEL: 'info' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (chunk) => (output += String(chunk)));
  npm.stderr.on('data', (chunk) => (output += String(chunk)));
  // 'exit', not 'close': a server left running would hold npm's output pipes open.
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ready = await fetch(`${baseUrl}/health/ready`).then((response) => response.status === 200, () => false);
    if (ready) break;
    expect(npm.exitCode, `npm start exited:\n${output}`).toBeNull();
    expect(Date.now() < deadline, `the server did not become ready:\n${output}`).toBe(true);
    await sleep(100);
  }
  // The data folder's lock file names the process that holds the database: the server.
  const serverPid = Number.parseInt(fs.readFileSync(path.join(dataDir, 'openbaas.lock'), 'utf8'), 10);
  leftovers.push(serverPid);
  return { npm, serverPid, baseUrl, output: () => output, exited };
}

/** Sends a signal to npm (never to the server) and checks that everything stopped. */
async function stopThroughNpm(started: Started, signal: NodeJS.Signals, dataDir: string): Promise<void> {
  started.npm.kill(signal);
  const code = await started.exited;
  for (let attempt = 0; attempt < 50 && isAlive(started.serverPid); attempt++) await sleep(100);
  expect(isAlive(started.serverPid), `the server outlived npm:\n${started.output()}`).toBe(false);
  expect(code, started.output()).toBe(0);
  expect(started.output()).toContain('"msg":"shutting down"');
  expect(started.output()).toContain('"msg":"stopped"');
  expect(started.output()).not.toContain('DeprecationWarning');
  await expect(fetch(`${started.baseUrl}/health/live`)).rejects.toThrow();
  expect(fs.existsSync(path.join(dataDir, 'openbaas.lock'))).toBe(false);
}

describe('npm start', () => {
  const dataDir = temporaryFolder('start');

  it('a first start prints its progress and its time to ready; SIGTERM to npm stops the server', async () => {
    const started = await npmStart(dataDir);
    expect(isAlive(started.serverPid)).toBe(true);
    // No shell and no second node between npm and the server: npm's own child is the server.
    expect(childOf(started.npm.pid ?? -1)).toBe(started.serverPid);
    for (const line of [
      `openbaas: creating the embedded database in ${dataDir}…`,
      'openbaas: applying migrations 1/',
      'openbaas: creating the sandbox client…',
      'OpenBaaS sandbox: a client and an API key were created.',
    ]) {
      expect(started.output()).toContain(line);
    }
    expect(started.output()).toMatch(/openbaas: applying migrations (\d+)\/\1 /);
    expect(started.output()).toMatch(/openbaas: ready in \d+\.\d s on http:\/\/localhost:\d+/);
    // The console, served from the bundle the launcher built into dist/console/.
    expect(started.output()).toMatch(/Console: http:\/\/localhost:\d+\/console/);
    const consolePage = await fetch(`${started.baseUrl}/console`);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toContain('/console/app.js');
    const script = await fetch(`${started.baseUrl}/console/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect((await script.text()).length).toBeGreaterThan(10_000);
    await stopThroughNpm(started, 'SIGTERM', dataDir);
  }, 120_000);

  it('a restart on the same data creates nothing and applies nothing; SIGINT (Ctrl-C) to npm stops the server', async () => {
    const started = await npmStart(dataDir);
    expect(started.output()).not.toContain('creating the embedded database');
    expect(started.output()).not.toContain('applying migrations');
    expect(started.output()).not.toContain('creating the sandbox client');
    expect(started.output()).toMatch(/openbaas: ready in \d+\.\d s/);
    await stopThroughNpm(started, 'SIGINT', dataDir);
  }, 120_000);
});

/** The pid of the only child of a process (Linux /proc). */
function childOf(pid: number): number {
  const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  expect(children).toHaveLength(1);
  return Number(children[0]);
}

describe('the build check of npm start', () => {
  interface Launcher {
    buildIsCurrent: (root: string) => boolean;
  }
  const launcher = import(path.join(packageRoot, 'scripts', 'start.mjs')) as Promise<Launcher>;

  /** A package-shaped folder whose files get the given modification times (in seconds). */
  function tree() {
    const root = temporaryFolder('start');
    const touch = (file: string, seconds: number) => {
      const full = path.join(root, file);
      fs.mkdirSync(path.dirname(full), { recursive: true });
      if (!fs.existsSync(full)) fs.writeFileSync(full, '');
      fs.utimesSync(full, seconds, seconds);
    };
    return { root, touch };
  }

  it('builds when dist/ is missing or older than a source, data file or compiler setting, and only then', async () => {
    const { buildIsCurrent } = await launcher;
    const { root, touch } = tree();
    touch('src/cli.ts', 1000);
    touch('src/modules/data/table.json', 1000);
    expect(buildIsCurrent(root)).toBe(false); // nothing built

    touch('dist/cli.js', 2000);
    expect(buildIsCurrent(root)).toBe(false); // no stamp: built by neither tsc nor the launcher
    touch('dist/.build-stamp', 2000);
    expect(buildIsCurrent(root)).toBe(true);

    touch('src/modules/thing.test.ts', 3000);
    expect(buildIsCurrent(root)).toBe(true); // tests are not built
    touch('migrations/0099_new.sql', 3000);
    expect(buildIsCurrent(root)).toBe(true); // migrations are read at start, not built

    touch('src/modules/data/table.json', 3000);
    expect(buildIsCurrent(root)).toBe(false);
    touch('dist/.tsbuildinfo', 3000); // a later `npm run build` (tsc) counts as well
    expect(buildIsCurrent(root)).toBe(true);

    touch('src/modules/thing.ts', 4000);
    expect(buildIsCurrent(root)).toBe(false);
    touch('dist/.build-stamp', 4000);
    expect(buildIsCurrent(root)).toBe(true);

    touch('tsconfig.build.json', 5000);
    expect(buildIsCurrent(root)).toBe(false);
  });
});
