import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { packageRoot } from '../src/paths.js';
import { cliArgs } from './support/cli-command.js';
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
    child.on('close', (code) => resolve({ code, output }));
  });
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, cliArgs('serve', '--memory', '--port', String(port)), {
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

describe('examples/credit-line.sh', () => {
  it('walks a credit line from its deposit through every LTV level to a liquidation', async () => {
    const { code, output } = await run('bash', ['examples/credit-line.sh'], { BASE: base, KEY: key });
    expect(code, output).toBe(0);
    const lines = output.trim().split('\n');
    expect(lines[0]).toBe('COMPLETED');
    expect(lines).toContain('spent: status ACTIVE, ltv 0.1500, level HEALTHY, collateral 1.00000000 BTC = 60000.00 USD, owed 9000.00, available 6000.00');
    expect(lines).toContain('BTC at 13500.00: status RESTRICTED, ltv 0.6666, level PURCHASE_RESTRICTED, collateral 1.00000000 BTC = 13500.00 USD, owed 9000.00, available 6000.00');
    expect(lines).toContain('57');
    expect(lines).toContain('BTC at 10500.00: status ACTIVE, ltv 0.4999, level HEALTHY, collateral 0.25595140 BTC = 2687.48 USD, owed 1343.74, available 13656.26');
    expect(lines.slice(-6).map((line) => line.split(' ')[0])).toEqual([
      'LTV_THRESHOLD_WARNING',
      'LTV_PURCHASE_RESTRICTED',
      'LTV_COLLATERAL_NEEDED',
      'LTV_URGENT_COLLATERAL_NEEDED',
      'LTV_LIQUIDATION_WARNING',
      'LTV_LIQUIDATED',
    ]);
    expect(lines.at(-1)).toBe('LTV_LIQUIDATED 0.8571 sold 0.72916762 BTC + penalty 0.01488098 BTC for 7656.26 USD, principal repaid 7656.26');
    // Exactly what docs/credit.md says it prints, to the character (until 2026-12-07 the five
    // warning lines ended in a space the docs do not show; found by an audit).
    const doc = fs.readFileSync(path.join(packageRoot, 'docs', 'credit.md'), 'utf8');
    const printed = /It prints:\n\n```text\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(output.trim().split('\n')).toEqual(printed?.trim().split('\n'));
  }, 60_000);

  it('is what docs/credit.md shows, line for line', () => {
    const script = fs.readFileSync(path.join(packageRoot, 'examples', 'credit-line.sh'), 'utf8');
    const body = script.slice(script.indexOf('# credit:start\n') + '# credit:start\n'.length, script.indexOf('# credit:end'));
    const doc = fs.readFileSync(path.join(packageRoot, 'docs', 'credit.md'), 'utf8');
    const blocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
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
