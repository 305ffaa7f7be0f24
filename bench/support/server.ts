import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { packageRoot } from '../../src/paths.js';

export interface RunningServer {
  url: string;
  pid: number;
  /** Highest resident memory of the server process so far (VmHWM), in MiB. */
  peakRssMiB(): number;
  /** The last lines the server wrote (for diagnosing a failed run). */
  logTail(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function peakRssMiBOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match?.[1] ? Number(match[1]) / 1024 : Number.NaN;
}

/** Builds dist/ once per bench run, so servers start from compiled JavaScript like `npm start`. */
let built = false;
export async function buildOnce(): Promise<void> {
  if (built) return;
  await runCommand(process.execPath, [path.join(packageRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
  built = true;
}

export async function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: packageRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`))));
  });
}

async function waitUntilReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${log()}`);
    try {
      const response = await fetch(`${url}/health/ready`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server did not become ready:\n${log()}`);
}

/**
 * The node flags `npm start` gives the server (read from package.json, so the bench measures the
 * server as it is started): a larger young generation, which makes the request path's many
 * short-lived objects cheaper to collect.
 */
export function startScriptNodeFlags(): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const match = /\bnode((?: --[^\s]+)*) scripts\/start\.mjs\b/.exec(manifest.scripts?.start ?? '');
  if (!match) throw new Error('package.json "start" no longer runs `node … scripts/start.mjs`; update startScriptNodeFlags');
  return (match[1] ?? '').split(' ').filter(Boolean);
}

/** Starts `openbaas serve` (compiled) as its own process with the given environment. */
export async function startServer(env: Record<string, string>, script = path.join('dist', 'cli.js'), args = ['serve']): Promise<RunningServer> {
  const port = await freePort();
  // BENCH_NODE_ARGS passes flags to the server's node, for example "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = [...(script.endsWith('cli.js') ? startScriptNodeFlags() : []), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  // TypeScript helpers (the hello-world anchor) run through tsx; the server runs compiled.
  if (script.endsWith('.ts')) nodeArgs.push('--import', 'tsx');
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd: packageRoot,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url, child, () => log);
  const pid = child.pid ?? 0;
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, peakRssMiBOf(pid));
    } catch {
      // the process is gone
    }
  }, 250);
  return {
    url,
    pid,
    peakRssMiB: () => {
      try {
        peak = Math.max(peak, peakRssMiBOf(pid));
      } catch {
        // keep the last sample
      }
      return peak;
    },
    logTail: () => log,
    stop: async () => {
      clearInterval(sampler);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Ends a child process the bench started (SIGTERM) and waits for it to exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

/** `error` with the last lines of the server's log appended, for a scenario that failed while the server ran. */
export function withServerLog(error: unknown, server: Pick<RunningServer, 'logTail'>): Error {
  return new Error(`${error instanceof Error ? error.message : String(error)}\nserver log (last lines):\n${server.logTail().split('\n').slice(-20).join('\n')}`, { cause: error });
}
