import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { packageRoot } from '../src/paths.js';
import { freePort } from './support/free-port.js';

/**
 * The README's quick start and the recipes of examples/ run against a real server (`openbaas serve
 * --memory`, a throwaway embedded database), as a newcomer runs them, so they can never rot. The
 * embedded database is enough: the journey is the same on PostgreSQL.
 */
const key = 'sk_test_examples0123456789abcdef';
let server: ChildProcess;
let base: string;


function run(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: packageRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ['--import', 'tsx', path.join(packageRoot, 'src', 'cli.ts'), 'serve', '--memory', '--port', String(port)], {
    cwd: packageRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', OPENBAAS_API_KEY: key, OPENBAAS_MODE: 'sandbox', DATABASE_URL: '' },
    stdio: 'ignore',
  });
  await vi.waitFor(async () => expect((await fetch(`${base}/health/ready`)).status).toBe(200), { timeout: 90_000, interval: 200 });
}, 120_000);

afterAll(() => {
  server?.kill('SIGTERM');
});

describe('examples/quickstart.sh', () => {
  it('runs the whole journey and ends with a verified webhook', async () => {
    const { code, output } = await run('bash', ['examples/quickstart.sh'], { BASE: base, KEY: key, RECEIVER_PORT: String(await freePort()) });
    expect(code, output).toBe(0);
    const lines = output.trim().split('\n');
    expect(lines[0]).toBe('APPROVED');
    expect(lines).toContain('100.00');
    expect(lines).toContain('COMPLETED');
    expect(lines).toContain('45.00');
    expect(lines[lines.length - 1]).toMatch(/^verified BANK_WITHDRAWAL_TRANSACTION_COMPLETED \S+ \{.*"amount":"25.00"/);
  }, 60_000);

  it('is what the README shows, line for line', () => {
    const script = fs.readFileSync(path.join(packageRoot, 'examples', 'quickstart.sh'), 'utf8');
    const body = script.slice(script.indexOf('# quickstart:start\n') + '# quickstart:start\n'.length, script.indexOf('# quickstart:end'));
    const readme = fs.readFileSync(path.join(packageRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Your first payment in one minute'));
    const block = /```sh\n([\s\S]*?)```/g;
    const blocks = [...section.matchAll(block)].map((match) => match[1] ?? '');
    expect(blocks.some((text) => text.includes(body.trim()))).toBe(true);
  });
});

describe('examples/webhook-receiver.mjs', () => {
  it('refuses a delivery whose signature does not verify', async () => {
    const port = await freePort();
    const receiver = spawn(process.execPath, ['examples/webhook-receiver.mjs', String(port)], {
      cwd: packageRoot,
      env: { ...process.env, WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await vi.waitFor(async () => expect((await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).catch(() => undefined))?.status).toBe(400), {
        timeout: 10_000,
        interval: 100,
      });
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
        body: '{"type":"CUSTOMER_CREATED"}',
      });
      expect(forged.status).toBe(400);
    } finally {
      receiver.kill();
    }
  });
});
