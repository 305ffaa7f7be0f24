import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { balanceOf, expectLedgerClean } from '../../../test/bank/fixtures.js';
import { addressOf, cryptoDeposit, newWallet } from '../../../test/crypto/fixtures.js';
import { workerTasks } from '../worker-tasks.js';
import { mineDueBlocks } from './block-worker.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp({ env: { OPENBAAS_SANDBOX_BLOCK_SECONDS: '10' } });
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  await expectLedgerClean(t);
});

const statusOf = async (id: string, key = t.clientA.key) => (await t.request({ url: `/v1/digital/transactions?cryptoTransactionId=${id}`, key })).body.data[0];

describe('the block worker', () => {
  it('is a worker task only when OPENBAAS_SANDBOX_BLOCK_SECONDS is set', async () => {
    expect(workerTasks(t.deps).map((task) => task.name)).toContain('mine-sandbox-blocks');
    const off = await createTestApp();
    try {
      expect(off.config.sandboxBlockSeconds).toBe(0);
      expect(workerTasks(off.deps).map((task) => task.name)).not.toContain('mine-sandbox-blocks');
    } finally {
      await off.close();
    }
  });

  it('mines one block per period of each client\'s own clock; a clock advance mines the blocks it covers', async () => {
    const walletA = await newWallet(t);
    const walletB = await newWallet(t, t.clientB);
    const depositA = (await cryptoDeposit(t, { address: await addressOf(t, walletA, 'BTC'), asset: 'BTC', amount: '0.30000000' })).body.data;
    const depositB = (await cryptoDeposit(t, { address: await addressOf(t, walletB, 'BTC', undefined, t.clientB), asset: 'BTC', amount: '0.40000000' }, t.clientB)).body.data;

    // Less than one period: nothing.
    t.clock.advance(9_000);
    expect(await mineDueBlocks(t.deps, 10)).toBe(0);
    expect((await statusOf(depositA.id)).confirmations).toBe(0);

    t.clock.advance(1_000);
    expect(await mineDueBlocks(t.deps, 10)).toBe(2);
    expect((await statusOf(depositA.id)).confirmations).toBe(1);
    // The same period is not mined twice.
    expect(await mineDueBlocks(t.deps, 10)).toBe(0);

    // Client A moves its clock 20 seconds on: two more blocks for A only, mined before the advance answers, which completes its deposit.
    const advanced = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 20 } });
    expect(advanced.status).toBe(200);
    expect(await mineDueBlocks(t.deps, 10)).toBe(0);
    expect(await statusOf(depositA.id)).toMatchObject({ status: 'COMPLETED', confirmations: 3 });
    expect(await balanceOf(t, walletA, 'BTC')).toMatchObject({ AVAILABLE: '0.30000000', PENDING: '0.00000000' });
    expect(await statusOf(depositB.id, t.clientB.key)).toMatchObject({ status: 'PENDING', confirmations: 1 });
  });

  it('an advance mines the blocks it covers before it answers, each transfer completing at the time of its block', async () => {
    const client = await t.newClient('advance mines');
    const wallet = await newWallet(t, client);
    const address = await addressOf(t, wallet, 'BTC', undefined, client);
    const deposit = (await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.25000000' }, client)).body.data;
    const createdAt = new Date(deposit.createdAt as string).getTime();
    // 60 periods: BITCOIN needs 3 confirmations, so the deposit completes at the third block, 30 s after it arrived.
    const advanced = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 600 } });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    const parent = (await t.request({ url: `/v1/baas/transactions?cryptoTransactionId=${deposit.id as string}`, key: client.key })).body.data[0];
    expect(parent).toMatchObject({ status: 'COMPLETED', confirmations: 3 });
    const success = parent.children.find((child: { type: string }) => child.type === 'CRYPTO_DEPOSIT_SUCCESS');
    expect(new Date(success.createdAt as string).getTime()).toBe(createdAt + 30_000);
    expect(await balanceOf(t, wallet, 'BTC', client)).toMatchObject({ AVAILABLE: '0.25000000', PENDING: '0.00000000' });
    // Nothing is left for the worker.
    expect(await mineDueBlocks(t.deps, 10, { clientId: client.id })).toBe(0);
  });

  it('a catch-up never confirms a transfer with a block dated before it was made', async () => {
    const client = await t.newClient('catch-up');
    const wallet = await newWallet(t, client);
    const address = await addressOf(t, wallet, 'BTC', undefined, client);
    const first = (await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.10000000' }, client)).body.data;
    const madeAt = new Date(first.createdAt as string).getTime();
    // The worker is late: two blocks are due (at +10 s and +20 s) when a second deposit arrives at +25 s.
    t.clock.advance(25_000);
    const second = (await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.20000000' }, client)).body.data;
    t.clock.advance(1_000);
    expect(await mineDueBlocks(t.deps, 10, { clientId: client.id })).toBe(1);
    expect(await statusOf(first.id, client.key)).toMatchObject({ status: 'PENDING', confirmations: 2 });
    expect(await statusOf(second.id, client.key)).toMatchObject({ status: 'PENDING', confirmations: 0 });

    // The block at +30 s completes the first and is the second's first confirmation.
    t.clock.advance(4_000);
    expect(await mineDueBlocks(t.deps, 10, { clientId: client.id })).toBe(1);
    const done = await statusOf(first.id, client.key);
    expect(done).toMatchObject({ status: 'COMPLETED', confirmations: 3 });
    expect(new Date(done.updatedAt as string).getTime()).toBe(madeAt + 30_000);
    const later = await statusOf(second.id, client.key);
    expect(later).toMatchObject({ status: 'PENDING', confirmations: 1 });
    expect(new Date(later.updatedAt as string).getTime()).toBeGreaterThanOrEqual(new Date(second.createdAt as string).getTime());

    // Its own third block (+50 s) completes it, with its records in order.
    t.clock.advance(20_000);
    expect(await mineDueBlocks(t.deps, 10, { clientId: client.id })).toBe(1);
    const parent = (await t.request({ url: `/v1/baas/transactions?cryptoTransactionId=${second.id as string}`, key: client.key })).body.data[0];
    expect(parent).toMatchObject({ status: 'COMPLETED', confirmations: 3, type: 'CRYPTO_DEPOSIT_SUCCESS' });
    expect(parent.children.map((child: { type: string }) => child.type)).toEqual(['CRYPTO_DEPOSIT_INITIATED', 'CRYPTO_DEPOSIT_SUCCESS']);
    expect(new Date(parent.children[1].createdAt as string).getTime()).toBe(madeAt + 50_000);
  });

  it('in one catch-up, a transfer made after the others completed starts its own period', async () => {
    const client = await t.newClient('fresh period');
    const wallet = await newWallet(t, client);
    const address = await addressOf(t, wallet, 'BTC', undefined, client);
    const first = (await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.10000000' }, client)).body.data;
    const madeAt = new Date(first.createdAt as string).getTime();
    // The first completes at its third block (+30 s); the second arrives at +45 s; the worker runs only at +80 s.
    t.clock.advance(45_000);
    const second = (await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.20000000' }, client)).body.data;
    t.clock.advance(35_000);
    expect(await mineDueBlocks(t.deps, 10, { clientId: client.id })).toBe(1);
    const firstDone = await statusOf(first.id, client.key);
    expect(firstDone).toMatchObject({ status: 'COMPLETED', confirmations: 3 });
    expect(new Date(firstDone.updatedAt as string).getTime()).toBe(madeAt + 30_000);
    // Nothing was pending from +30 s to +45 s: the second's blocks are at +55 s, +65 s and +75 s.
    const secondDone = await statusOf(second.id, client.key);
    expect(secondDone).toMatchObject({ status: 'COMPLETED', confirmations: 3 });
    expect(new Date(secondDone.updatedAt as string).getTime()).toBe(madeAt + 75_000);
  });

  it('does nothing with a period of 0', async () => {
    expect(await mineDueBlocks(t.deps, 0)).toBe(0);
  });
});
