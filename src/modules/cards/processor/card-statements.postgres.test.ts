import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../../test/harness.js';
import { authorize, balances, fundedCard, onParent, panOf } from '../../../../test/cards/card-network.js';

// How many statements one card message costs on PostgreSQL (docs/cards.md, "The authorization
// processor"): each is a round trip inside the message's transaction, and their number is what the
// card-auth benchmark pays for. Counted as the database's answers (ReadyForQuery) on the
// connections the pool hands out while the message runs.

let t: TestContext;
beforeAll(async () => {
  // Without the request log: its writes take pool connections of their own, every 100 ms. With the
  // API key trusted for a minute: past half its life (1 s by default, a slow machine's warm-up) a
  // request looks its key up again in the background, on a pool connection of its own.
  t = await createTestApp({ env: { OPENBAAS_REQUEST_LOG: 'off', AUTH_CACHE_TTL_MS: '60000' } });
});
afterAll(async () => {
  await t.close();
});

/** Runs `body`, counting the statements answered on the pool's connections meanwhile. */
async function statementsOf<T>(body: () => Promise<T>): Promise<{ value: T; statements: number }> {
  let statements = 0;
  const count = () => statements++;
  // Each connection counted once, however often it is acquired meanwhile (a second listener on one
  // counted each of its answers twice: 11 statements for 5, seen twice in CI).
  const connections = new Set<NodeJS.EventEmitter>();
  const onAcquire = (client: pg.PoolClient) => {
    const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    if (connections.has(connection)) return;
    connection.on('readyForQuery', count);
    connections.add(connection);
  };
  t.database.pool.on('acquire', onAcquire);
  try {
    return { value: await body(), statements };
  } finally {
    t.database.pool.off('acquire', onAcquire);
    for (const connection of connections) connection.off('readyForQuery', count);
  }
}

describe('statements per card message on PostgreSQL', () => {
  it('an approved 0100 and the 0220 completing its hold cost 5 and 6 statements through the message-level endpoint, BEGIN and COMMIT included', async () => {
    const card = await fundedCard(t, '100.00');
    // Warm: the API key is known and the wallet's accounts exist before counting.
    const warm = await authorize(t, card.cardId, { amount: 1 });
    await onParent(t, warm.parentCardTransactionId, 'completions', { amount: 1 });

    const pan = await panOf(t, card.cardId);
    const template = warm.iso.request.fields as Record<string, string>;
    // A lifecycle reference of its own in DE63 positions 9–24, the rest of the field as built.
    const networkData = template['63'] ?? '';
    const reference = `${networkData.slice(0, 8)}${'7'.repeat(16)}${networkData.slice(24)}`;
    const message = (mti: string, stan: string, rrn: string) => ({ ...template, '0': mti, '2': pan, '4': '000000000250', '11': stan, '37': rrn, '63': reference });

    const authorization = await statementsOf(() => t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: message('0100', '000901', '700000000901') } }));
    expect(authorization.value.status, JSON.stringify(authorization.value.body)).toBe(200);
    expect(authorization.value.body.data.response['39']).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '96.50', RESERVED: '2.50' });

    const completion = await statementsOf(() => t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: message('0220', '000902', '700000000902') } }));
    expect(completion.value.status, JSON.stringify(completion.value.body)).toBe(200);
    expect(completion.value.body.data.response['39']).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '96.50', RESERVED: '0.00' });

    // BEGIN; the card with its program; the lookups with the wallet's account, locked; the hold's
    // lock (0220 only); the posting with the lifecycle, timer, record and event; COMMIT. It was 14
    // each before the reads and the writes were combined, 8 while the ledger's posting was a
    // statement of its own, 7 while the balance and the account's lock were two more reads.
    expect(authorization.statements).toBe(5);
    expect(completion.statements).toBe(6);
  });
});
