import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { createTestApp, testEncryptionKey, type TestContext } from '../harness.js';
import { cliArgs } from './cli-command.js';
import { freePort } from './free-port.js';

/**
 * The program in processes of its own (this run's build of the sources) on the test app's PostgreSQL
 * database, for the tests of what several processes do at once. PostgreSQL only: a second process
 * cannot open the embedded database.
 */
export class ProgramProcesses {
  private readonly spawned = new Set<ChildProcess>();

  private constructor(private readonly databaseUrl: string) {}

  /** Processes on `t`'s database. */
  static on(t: TestContext): ProgramProcesses {
    if (t.databaseUrl === undefined) throw new Error('processes of the program need the test app on PostgreSQL');
    return new ProgramProcesses(t.databaseUrl);
  }

  /**
   * Starts `openbaas <args>` in the sandbox mode with a small pool; its errors are printed if it
   * fails. `route` gives the address it connects to from the database's (a relay in front of it);
   * `progress` receives its progress lines (`workers running in … s`), which it then prints.
   */
  start(args: string[], options: { route?: (url: string) => string; progress?: (line: string) => void } = {}): ChildProcess {
    const { route = (url: string) => url, progress } = options;
    const child = spawn(process.execPath, cliArgs(...args), {
      cwd: packageRoot,
      env: {
        ...process.env,
        LOG_LEVEL: progress ? 'error' : 'silent',
        DATABASE_URL: route(this.databaseUrl),
        OPENBAAS_ENCRYPTION_KEY: testEncryptionKey,
        DB_POOL_MAX: '5',
        OPENBAAS_MODE: 'sandbox',
      },
      stdio: ['ignore', progress ? 'pipe' : 'ignore', 'pipe'],
    });
    // Whole lines only: a chunk may end inside one.
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('openbaas: ')) progress?.(line);
    });
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString('utf8');
    });
    child.on('exit', (code, signal) => {
      this.spawned.delete(child);
      if (code !== 0 && signal === null) console.error(`process ${child.pid} (${args.join(' ')}) exited with ${code}: ${errors}`);
    });
    this.spawned.add(child);
    return child;
  }

  /** Starts `openbaas serve` on a free port; answers its base address once it is ready. */
  async startServer(): Promise<string> {
    const port = await freePort();
    this.start(['serve', '--port', String(port)]);
    const base = `http://127.0.0.1:${port}`;
    await vi.waitFor(
      async () => {
        const response = await fetch(`${base}/health/ready`);
        expect(response.status).toBe(200);
      },
      { timeout: 60_000, interval: 100 },
    );
    return base;
  }

  /** Kills every process still running and waits for them to exit. */
  async stopAll(): Promise<void> {
    const running = [...this.spawned];
    for (const child of running) child.kill('SIGKILL');
    await Promise.all(running.map(exited));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * The file's test app and its processes, made before its tests and stopped after them. The app's
 * clock moves with the wall clock, which the processes read. (Until 2026-12-07 it stood still at
 * the time the file started: once a file had run a minute, a deposit the app made was already due
 * by the processes' clocks, and their timer workers settled it before the test's own `/settle`,
 * which answered 409; seen on a busy machine.)
 */
export function programProcessesSuite(): { readonly t: TestContext; readonly processes: ProgramProcesses } {
  const suite: { t?: TestContext; processes?: ProgramProcesses } = {};
  beforeAll(async () => {
    suite.t = await createTestApp({ clockFollowsWallClock: true });
    suite.processes = ProgramProcesses.on(suite.t);
  }, 120_000);
  afterAll(async () => {
    await suite.processes?.stopAll();
    await suite.t?.close();
  });
  return {
    get t() {
      if (!suite.t) throw new Error('the test app is made before the tests');
      return suite.t;
    },
    get processes() {
      if (!suite.processes) throw new Error('the processes are made before the tests');
      return suite.processes;
    },
  };
}
