import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/modules/ledger/index.js';
import { createTestApp, subscribeNowhere, type TestContext } from '../harness.js';
import { availableOf, fundWallet, newWallet } from './fixtures.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function funded(amountMinor: bigint): Promise<string> {
  const walletId = await newWallet(t);
  await fundWallet(t, t.clientA.id, walletId, amountMinor);
  return walletId;
}

function transfer(body: Record<string, unknown>, options: { idempotencyKey?: string; url?: string; key?: string } = {}) {
  return t.request({
    method: 'POST',
    url: options.url ?? '/internal-transfer',
    body,
    ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
    ...(options.key ? { key: options.key } : {}),
  });
}

async function expectLedgerClean() {
  const report = await verifyLedger(t.deps.db);
  expect(report.checks.filter((check) => check.violationCount > 0)).toEqual([]);
  expect(report.ok).toBe(true);
}

describe('201', () => {
  it('moves the money, answers the specification shape, records both events and both history records', async () => {
    const source = await funded(10_000n);
    const destination = await newWallet(t);
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '25.50', asset: 'USD' }, { key: t.clientA.key });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'message', 'traceId']);
    const data = response.body.data;
    expect(Object.keys(data).sort()).toEqual(['amount', 'asset', 'createdAt', 'destination', 'parentTransactionId', 'source', 'status', 'type']);
    expect(data).toMatchObject({ type: 'INTERNAL_TRANSFER', status: 'COMPLETED', amount: '25.50', asset: 'USD' });
    expect(data.source.walletId).toBe(source);
    expect(data.destination.walletId).toBe(destination);

    expect(await availableOf(t, source)).toBe('74.50');
    expect(await availableOf(t, destination)).toBe('25.50');

    const events = await t.deps.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('client_id', '=', t.clientA.id)
      .where('type', '=', 'INTERNAL_TRANSACTION_COMPLETED')
      .execute();
    const mine = events.map((event) => event.data).filter((payload) => payload.traceId === response.body.traceId);
    expect(mine).toHaveLength(2);
    expect(mine).toContainEqual({ walletId: source, transactionId: data.source.transactionId, traceId: response.body.traceId });
    expect(mine).toContainEqual({ walletId: destination, transactionId: data.destination.transactionId, traceId: response.body.traceId });

    const history = await t.request({ url: `/v1/transactions?parentTransactionId=${data.parentTransactionId}` });
    expect(history.status).toBe(200);
    const ids = history.body.data.map((record: { id: string }) => record.id).sort();
    expect(ids).toEqual([data.source.transactionId, data.destination.transactionId].sort());
    const debit = history.body.data.find((record: { id: string }) => record.id === data.source.transactionId);
    expect(debit).toMatchObject({ walletId: source, operation: 'DEBIT', amount: '25.50', asset: 'USD', parentTransactionId: data.parentTransactionId });

    const one = await t.request({ url: `/v1/transactions/${data.destination.transactionId}` });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ walletId: destination, operation: 'CREDIT' });
    await expectLedgerClean();
  });

  it('owes one webhook delivery per event to a subscription of INTERNAL_TRANSACTION_COMPLETED', async () => {
    const client = await t.newClient('Webhook subscriber');
    const subscription = await subscribeNowhere(t, client, 'transfers', ['INTERNAL_TRANSACTION_COMPLETED']);
    const source = await newWallet(t, client);
    const destination = await newWallet(t, client);
    await fundWallet(t, client.id, source, 1_000n);
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' }, { key: client.key });
    expect(response.status).toBe(201);
    const deliveries = await t.deps.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', (join) => join.onRef('e.client_id', '=', 'd.client_id').onRef('e.id', '=', 'd.event_id'))
      .select(['d.subscription_id', 'd.status', 'e.data'])
      .where('d.client_id', '=', client.id)
      .execute();
    expect(deliveries).toHaveLength(2);
    for (const delivery of deliveries) {
      expect(delivery.subscription_id).toBe(subscription.id);
      expect(delivery.status).toBe('PENDING');
    }
    expect(deliveries.map((delivery) => (delivery.data as { transactionId: string }).transactionId).sort()).toEqual(
      [response.body.data.source.transactionId, response.body.data.destination.transactionId].sort(),
    );
  });

  it('a note of null is the same as none; a note is kept on both records', async () => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const without = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD', note: null });
    expect(without.status, JSON.stringify(without.body)).toBe(201);
    const noted = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD', note: 'Rent share' });
    const records = await t.request({ url: `/v1/transactions?parentTransactionId=${noted.body.data.parentTransactionId as string}` });
    expect(records.body.data.map((record: { note: string | null }) => record.note)).toEqual(['Rent share', 'Rent share']);
    const plain = await t.request({ url: `/v1/transactions?parentTransactionId=${without.body.data.parentTransactionId as string}` });
    expect(plain.body.data.map((record: { note: string | null }) => record.note)).toEqual([null, null]);
  });

  it.each(['/v1/internal-transfer', '/v1/baas/transactions/internal-transfer'])('is also served at %s, with referenceWalletId accepted', async (url) => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const response = await transfer({ sourceWalletId: source, referenceWalletId: destination, amount: '1', asset: 'USD' }, { url });
    expect(response.status).toBe(201);
    expect(response.body.data.destination.walletId).toBe(destination);
    expect(await availableOf(t, destination)).toBe('1.00');
  });

  it('destinationWalletId and referenceWalletId naming one wallet in different letter case are one wallet; two wallets are a 400', async () => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const both = await transfer({ sourceWalletId: source, destinationWalletId: destination, referenceWalletId: destination.toUpperCase(), amount: '1.00', asset: 'USD' });
    expect(both.status, JSON.stringify(both.body)).toBe(201);
    expect(both.body.data.destination.walletId).toBe(destination);
    const other = await newWallet(t);
    const two = await transfer({ sourceWalletId: source, destinationWalletId: destination, referenceWalletId: other, amount: '1.00', asset: 'USD' });
    expect(two.status).toBe(400);
    expect(two.body.details[0].field).toBe('referenceWalletId');
  });
});

describe('400', () => {
  it.each([
    ['the same wallet on both sides', (w: string) => ({ sourceWalletId: w, destinationWalletId: w, amount: '1.00', asset: 'USD' })],
    ['an unknown asset', (w: string, d: string) => ({ sourceWalletId: w, destinationWalletId: d, amount: '1.00', asset: 'DOGE' })],
    ['too many decimals', (w: string, d: string) => ({ sourceWalletId: w, destinationWalletId: d, amount: '1.001', asset: 'USD' })],
    ['a JSON number amount', (w: string, d: string) => ({ sourceWalletId: w, destinationWalletId: d, amount: 1, asset: 'USD' })],
    ['a zero amount', (w: string, d: string) => ({ sourceWalletId: w, destinationWalletId: d, amount: '0.00', asset: 'USD' })],
    ['no destination', (w: string) => ({ sourceWalletId: w, amount: '1.00', asset: 'USD' })],
  ])('for %s, and nothing moves', async (_name, build) => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const response = await transfer(build(source, destination));
    expect(response.status).toBe(400);
    expect(response.body.details?.length ?? 0).toBeGreaterThan(0);
    expect(await availableOf(t, source)).toBe('10.00');
  });

  it.each([
    ['an empty string', '', 'VALIDATION_ERROR'],
    ['over 40 characters', '1'.repeat(41), 'VALIDATION_ERROR'],
    ['letters', 'ten', 'INVALID_AMOUNT'],
    ['16 integer digits', '1'.repeat(16), 'INVALID_AMOUNT'],
  ])('an amount that is %s: 400 %s naming amount (the schema bounds its length first, docs/api-design.md), and nothing moves', async (_name, amount, code) => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount, asset: 'USD' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code, details: [{ field: 'amount' }] });
    expect(await availableOf(t, source)).toBe('10.00');
  });

  it.each([
    ['a right-to-left override', 'Rent \u202eerahs', 'U+202E'],
    ['a zero-width space', 'Rent\u200bshare', 'U+200B'],
    ['a line break', 'Rent\nshare', 'U+000A'],
    ['a NEL control (C1)', 'Rent\u0085share', 'U+0085'],
  ])('for a note holding %s, naming note and the character, and nothing moves', async (_name, note, shown) => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD', note });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'note' }] });
    expect(response.body.details[0].message).toContain(shown);
    expect(await availableOf(t, source)).toBe('10.00');
  });

  it.each([
    ['empty', '', 'must not be empty or only white space'],
    ['only spaces', '   ', 'must not be empty or only white space'],
    // Until 2026-12-05 these were told they were empty or white space (found by an audit).
    ['a Hangul filler that shows nothing', '\u3164', 'must show something: it holds only characters that show nothing (combining marks, fillers)'],
    ['combining marks alone', '\u0301\u0301', 'must show something: it holds only characters that show nothing (combining marks, fillers)'],
  ])('for a note that is %s: 400 naming note (leave it out or send null for none), and nothing moves', async (_name, note, message) => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD', note });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'note', message }] });
    expect(await availableOf(t, source)).toBe('10.00');
  });

  // Until 2026-12-07 a body the schema refused named its missing fields but not the destination,
  // which only the route's own check (after the schema) asked for (found by an audit).
  it('an empty body names every missing field, the destination too; a body missing only the destination names it alone', async () => {
    const empty = await transfer({});
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual([
      { field: 'sourceWalletId', message: 'is required' },
      { field: 'amount', message: 'is required' },
      { field: 'asset', message: 'is required' },
      { field: 'destinationWalletId', message: 'is required (or referenceWalletId)' },
    ]);
    const withReference = await transfer({ referenceWalletId: await newWallet(t) });
    expect(withReference.body.details.map((detail: { field: string }) => detail.field)).toEqual(['sourceWalletId', 'amount', 'asset']);
    const source = await funded(1_000n);
    const onlyDestinationMissing = await transfer({ sourceWalletId: source, amount: '1.00', asset: 'USD' });
    expect(onlyDestinationMissing.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'destinationWalletId', message: 'is required (or referenceWalletId)' }] });
  });

  it('takes a note in any script, with accents and emoji, as sent', async () => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const note = 'Loyer partagé · 家賃 · إيجار 🏠';
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD', note });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const records = await t.request({ url: `/v1/transactions?parentTransactionId=${response.body.data.parentTransactionId as string}` });
    expect(records.body.data.map((record: { note: string | null }) => record.note)).toEqual([note, note]);
  });
});

describe('404', () => {
  it("for an unknown, malformed or other client's wallet on either side, with one message", async () => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const foreign = await newWallet(t, t.clientB);
    const bodies = [
      { sourceWalletId: source, destinationWalletId: foreign },
      { sourceWalletId: foreign, destinationWalletId: destination },
      { sourceWalletId: source, destinationWalletId: '01900000-0000-7000-8000-000000000000' },
      { sourceWalletId: source, destinationWalletId: 'not-a-wallet' },
    ];
    for (const body of bodies) {
      const response = await transfer({ ...body, amount: '1.00', asset: 'USD' });
      expect(response.status, JSON.stringify(body)).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
    expect(await availableOf(t, source)).toBe('10.00');
  });
});

describe('422', () => {
  it('for more than the AVAILABLE balance, and nothing moves', async () => {
    const source = await funded(1_000n);
    const destination = await newWallet(t);
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '10.01', asset: 'USD' });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(response.body.details).toEqual([{ field: 'amount', message: 'exceeds the AVAILABLE balance of sourceWalletId' }]);
    expect(await availableOf(t, source)).toBe('10.00');
    // A refused transfer leaves nothing behind: the destination never held USD.
    expect(await availableOf(t, destination)).toBeUndefined();
  });
});

describe('concurrency', () => {
  it('50 concurrent transfers of 10.00 from a wallet holding 100.00: exactly 10 succeed', async () => {
    const source = await funded(10_000n);
    const destinations = await Promise.all(Array.from({ length: 5 }, () => newWallet(t)));
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        transfer({ sourceWalletId: source, destinationWalletId: destinations[index % 5], amount: '10.00', asset: 'USD' }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 422)).toHaveLength(40);
    for (const refused of responses.filter((response) => response.status === 422)) expect(refused.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(await availableOf(t, source)).toBe('0.00');
    await expectLedgerClean();
  });

  it('A→B and B→A fired at once never fail with a 500', async () => {
    const a = await funded(100_000n);
    const b = await funded(100_000n);
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        transfer(index % 2 === 0 ? { sourceWalletId: a, destinationWalletId: b, amount: '1.00', asset: 'USD' } : { sourceWalletId: b, destinationWalletId: a, amount: '1.00', asset: 'USD' }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array.from({ length: 40 }, () => 201));
    expect(await availableOf(t, a)).toBe('1000.00');
    expect(await availableOf(t, b)).toBe('1000.00');
    await expectLedgerClean();
  });

  it('20 concurrent requests with one Idempotency-Key move the money once', async () => {
    const source = await funded(10_000n);
    const destination = await newWallet(t);
    const body = { sourceWalletId: source, destinationWalletId: destination, amount: '7.00', asset: 'USD' };
    const responses = await Promise.all(Array.from({ length: 20 }, () => transfer(body, { idempotencyKey: `once-${source}` })));
    for (const response of responses) expect([201, 409]).toContain(response.status);
    const created = responses.filter((response) => response.status === 201);
    expect(new Set(created.map((response) => response.body.data.parentTransactionId)).size).toBe(1);
    expect(await availableOf(t, source)).toBe('93.00');
    expect(await availableOf(t, destination)).toBe('7.00');
    const replay = await transfer(body, { idempotencyKey: `once-${source}` });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await availableOf(t, source)).toBe('93.00');
  });
});

describe('one round trip when nothing needs reading first', () => {
  /** The count of batched internal-transfer writes done one way with one result, from /metrics. */
  async function batches(path: 'unchecked' | 'checked', result: 'committed' | 'retried'): Promise<number> {
    const response = await t.request({ url: '/metrics', key: null });
    const line = String(response.body)
      .split('\n')
      .find((entry) => entry.startsWith(`openbaas_write_batches_total{route="/internal-transfer",path="${path}",result="${result}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  async function counts() {
    return { unchecked: await batches('unchecked', 'committed'), retried: await batches('unchecked', 'retried'), checked: await batches('checked', 'committed') };
  }

  it('a transfer between wallets that hold the asset commits without reading first', async () => {
    const source = await funded(1_000n);
    const destination = await funded(1n);
    const before = await counts();
    const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '2.50', asset: 'USD' }, { idempotencyKey: `fast-${source}` });
    expect(response.status).toBe(201);
    expect(await counts()).toEqual({ ...before, unchecked: before.unchecked + 1 });
    expect([await availableOf(t, source), await availableOf(t, destination)]).toEqual(['7.50', '2.51']);
    await expectLedgerClean();
  });

  it('is retried the checked way when the write refuses: a first credit, a short source, a stored key', async () => {
    const source = await funded(1_000n);
    const fresh = await newWallet(t);
    let before = await counts();
    const opened = await transfer({ sourceWalletId: source, destinationWalletId: fresh, amount: '1.00', asset: 'USD' }, { idempotencyKey: `first-${fresh}` });
    expect(opened.status).toBe(201);
    expect(await counts()).toEqual({ ...before, retried: before.retried + 1, checked: before.checked + 1 });
    expect(await availableOf(t, fresh)).toBe('1.00');

    before = await counts();
    const short = await transfer({ sourceWalletId: source, destinationWalletId: fresh, amount: '9.01', asset: 'USD' });
    expect(short.status).toBe(422);
    expect(short.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(await counts()).toEqual({ ...before, retried: before.retried + 1, checked: before.checked + 1 });

    before = await counts();
    const replay = await transfer({ sourceWalletId: source, destinationWalletId: fresh, amount: '1.00', asset: 'USD' }, { idempotencyKey: `first-${fresh}` });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data).toEqual(opened.body.data);
    expect(await counts()).toEqual({ ...before, retried: before.retried + 1, checked: before.checked + 1 });
    expect([await availableOf(t, source), await availableOf(t, fresh)]).toEqual(['9.00', '1.00']);
    await expectLedgerClean();
  });
});

describe('wallet balance and history', () => {
  it('GET /v1/wallets/:id/balance answers AVAILABLE, RESERVED and PENDING', async () => {
    const walletId = await funded(12_345n);
    const response = await t.request({ url: `/v1/wallets/${walletId}/balance` });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual(['AVAILABLE', 'PENDING', 'RESERVED']);
    expect(response.body.data.AVAILABLE).toEqual([{ asset: 'USD', amount: '123.45' }]);
  });

  it('404 for the balance and history of another client', async () => {
    const walletId = await funded(100n);
    expect((await t.request({ url: `/v1/wallets/${walletId}/balance`, key: t.clientB.key })).status).toBe(404);
    expect((await t.request({ url: `/v1/transactions?walletId=${walletId}`, key: t.clientB.key })).status).toBe(404);
  });

  it('GET /v1/transactions needs walletId or a linking filter', async () => {
    const response = await t.request({ url: '/v1/transactions' });
    expect(response.status).toBe(400);
  });

  it('lists a wallet history newest first, filtered by operation', async () => {
    const source = await funded(5_000n);
    const destination = await newWallet(t);
    for (let index = 0; index < 3; index++) {
      t.clock.advance(1000);
      expect((await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' })).status).toBe(201);
    }
    const debits = await t.request({ url: `/v1/transactions?walletId=${source}&operation=DEBIT` });
    expect(debits.status).toBe(200);
    expect(debits.body.data).toHaveLength(3);
    expect(debits.body.pagination.totalResults).toBe(3);
    const ids = debits.body.data.map((record: { id: string }) => record.id);
    expect([...ids].sort().reverse()).toEqual(ids);
  });

  it('filters the history by createdAfter (inclusive) and createdBefore (exclusive)', async () => {
    const source = await funded(5_000n);
    const destination = await newWallet(t);
    const moments: string[] = [];
    for (let index = 0; index < 3; index++) {
      t.clock.advance(60_000);
      const response = await transfer({ sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' });
      expect(response.status).toBe(201);
      moments.push(response.body.data.createdAt);
    }
    const [first, second, third] = moments;
    const after = await t.request({ url: `/v1/transactions?walletId=${destination}&createdAfter=${encodeURIComponent(second ?? '')}` });
    expect(after.status).toBe(200);
    expect(after.body.data.map((record: { createdAt: string }) => record.createdAt)).toEqual([third, second]);
    const before = await t.request({ url: `/v1/transactions?walletId=${destination}&createdBefore=${encodeURIComponent(third ?? '')}` });
    expect(before.body.data.map((record: { createdAt: string }) => record.createdAt)).toEqual([second, first]);
    expect((await t.request({ url: `/v1/transactions?walletId=${destination}&createdAfter=yesterday` })).status).toBe(400);
  });
});
