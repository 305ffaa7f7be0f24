import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/modules/ledger/index.js';
import { createTestApp, type TestContext } from '../harness.js';
import { availableOf, fundWallet, newWallet } from './fixtures.js';

// On PostgreSQL, batches of internal transfers that read nothing first go one behind the other on
// one connection (a TransactionLane, pipelined-transaction.ts), at most two in flight.

let t: TestContext;
beforeAll(async () => {
  // Batches of two, so that a burst makes many of them.
  // Without the request log: its writes take pool connections of their own, every 100 ms.
  t = await createTestApp({ env: { WRITE_BATCH_SIZE_MAX: '2', OPENBAAS_REQUEST_LOG: 'off' } });
});
afterAll(async () => {
  await t.close();
});

/** Runs `body`, counting the pool's connections handed out and the transactions answered on them. */
async function watching<T>(body: () => Promise<T>): Promise<{ value: T; acquired: number; answered: number }> {
  let acquired = 0;
  let answered = 0;
  const count = () => answered++;
  const connections: NodeJS.EventEmitter[] = [];
  const onAcquire = (client: pg.PoolClient) => {
    acquired++;
    const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    connection.on('readyForQuery', count);
    connections.push(connection);
  };
  t.database.pool.on('acquire', onAcquire);
  try {
    return { value: await body(), acquired, answered };
  } finally {
    t.database.pool.off('acquire', onAcquire);
    for (const connection of connections) connection.off('readyForQuery', count);
  }
}

describe('a burst of internal transfers on PostgreSQL', () => {
  it('writes its batches one behind the other on one connection, each once, and moves every transfer once', async () => {
    const sources = await Promise.all(Array.from({ length: 24 }, () => newWallet(t)));
    for (const source of sources) await fundWallet(t, t.clientA.id, source, 1_000n);
    const destination = await newWallet(t);
    // Warm: the API key and the wallets' accounts are known before the burst.
    await t.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: sources[0], destinationWalletId: destination, amount: '1.00', asset: 'USD' } });

    const { value: responses, acquired, answered } = await watching(() =>
      Promise.all(
        sources.map((source, index) =>
          t.request({
            method: 'POST',
            url: '/internal-transfer',
            idempotencyKey: `lane-${index}-${source}`,
            body: { sourceWalletId: source, destinationWalletId: destination, amount: '2.00', asset: 'USD' },
          }),
        ),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(sources.map(() => 201));
    // 24 transfers in batches of at most two: at least 12 transactions, on connections the lane
    // took from the pool only when it had none in use, so fewer connections than batches (each
    // batch took one of its own before the lane). How many answers they make is not fixed: each
    // connection the lane takes also answers its plan setting and its reset, and under CPU load
    // the lane runs dry mid-burst and batches go the checked way, a round trip per statement
    // (measured: 18 to 43 answers on 3 to 6 connections, with two busy loops beside the test or
    // in a CI pre-check; an upper bound on the answers failed there, so the connections are what
    // is checked).
    expect(answered).toBeGreaterThanOrEqual(12);
    expect(acquired).toBeLessThan(12);
    expect(acquired).toBeLessThan(answered / 2);
    expect(await availableOf(t, destination)).toBe('49.00');
    expect(await availableOf(t, sources[1] ?? '')).toBe('8.00');
    const report = await verifyLedger(t.deps.db);
    expect(report.ok).toBe(true);
  });
});

describe('batches the lane\'s database refuses', () => {
  it('run the checked way beside the lane, within twice WRITE_BATCH_CONCURRENCY batches in all, and each gets its own answer', async () => {
    const single = await createTestApp({ env: { WRITE_BATCH_SIZE_MAX: '1', OPENBAAS_REQUEST_LOG: 'off' } });
    try {
      const empty = await newWallet(single);
      const destination = await newWallet(single);
      let out = 0;
      let mostOut = 0;
      const onAcquire = () => {
        out++;
        mostOut = Math.max(mostOut, out);
      };
      const onRelease = () => out--;
      single.database.pool.on('acquire', onAcquire);
      single.database.pool.on('release', onRelease);
      let responses;
      try {
        // Every transfer of an empty wallet is refused on the lane and written again the checked way.
        responses = await Promise.all(
          Array.from({ length: 30 }, () =>
            single.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: empty, destinationWalletId: destination, amount: '1.00', asset: 'USD' } }),
          ),
        );
      } finally {
        single.database.pool.off('acquire', onAcquire);
        single.database.pool.off('release', onRelease);
      }
      expect(responses.map((response) => response.body.code)).toEqual(responses.map(() => 'INSUFFICIENT_FUNDS'));
      // At most twice WRITE_BATCH_CONCURRENCY (2) batches at once, on the lane and the checked way
      // together, each on one connection.
      expect(mostOut).toBeLessThanOrEqual(4);
    } finally {
      await single.close();
    }
  });
});

describe('with a pool of one connection (DB_POOL_MAX=1)', () => {
  it('does not keep a connection for a lane: every batch takes one from the pool and gives it back', async () => {
    const single = await createTestApp({ env: { WRITE_BATCH_SIZE_MAX: '2', DB_POOL_MAX: '1' } });
    try {
      const sources = await Promise.all(Array.from({ length: 24 }, () => newWallet(single)));
      for (const source of sources) await fundWallet(single, single.clientA.id, source, 1_000n);
      const destination = await newWallet(single);
      // Warm, as above.
      await single.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: sources[0], destinationWalletId: destination, amount: '1.00', asset: 'USD' } });
      let acquired = 0;
      const onAcquire = () => acquired++;
      single.database.pool.on('acquire', onAcquire);
      try {
        const responses = await Promise.all(
          sources.map((source) =>
            single.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' } }),
          ),
        );
        expect(responses.map((response) => response.status)).toEqual(sources.map(() => 201));
      } finally {
        single.database.pool.off('acquire', onAcquire);
      }
      // 24 transfers in batches of at most two: at least 12 batches, each with its own.
      expect(acquired).toBeGreaterThanOrEqual(12);
      expect(await availableOf(single, destination)).toBe('25.00');
    } finally {
      await single.close();
    }
  });
});
