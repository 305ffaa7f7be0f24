import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { fundWallet, newWallet } from '../../../test/ledger/fixtures.js';
import { destinations, fundCrypto, mine, cryptoDeposit, addressOf } from '../../../test/crypto/fixtures.js';
import { expectLedgerClean } from '../../../test/bank/fixtures.js';
import { packageRoot } from '../../paths.js';
import { walletTransactionPurposes } from './transactions.js';

// GET /v1/transactions's asset and purpose filters: alone, with each other, with the other filters
// and the linking filters, across pages; refused values; and one client's records never in
// another's lists.

interface HistoryRecord {
  id: string;
  parentTransactionId: string;
  walletId: string;
  type: string;
  purpose: string;
  operation: string;
  balanceType: string;
  status: string;
  asset: string;
  parentCryptoTransactionId: string | null;
  createdAt: string;
}

let t: TestContext;

/** Client A's wallet with records in BTC and USD under many purposes, and the wallet it paid. */
let walletId: string;
let payee: string;
/** Every record of `walletId`, newest first, as the unfiltered list gives them. */
let all: HistoryRecord[];
/** The parent of one BTC internal transfer (a record on each wallet). */
let btcTransferParent: string;
/** The parent crypto transaction of the BTC withdrawal (HOLD, CAPTURE, RELEASE, WITHDRAWAL_FEE_REVENUE). */
let withdrawalParent: string;
/** Client B's wallet, with BTC and USD records of its own. */
let otherWallet: string;
let otherIds: string[];

async function transfer(client: TestClient, source: string, destination: string, amount: string, asset: string) {
  t.clock.advance(1000);
  const response = await t.request({ method: 'POST', url: '/internal-transfer', key: client.key, body: { sourceWalletId: source, destinationWalletId: destination, amount, asset } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data as { parentTransactionId: string };
}

async function list(query: string, client: TestClient = t.clientA) {
  const response = await t.request({ url: `/v1/transactions?${query}`, key: client.key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as { data: HistoryRecord[]; pagination: { totalResults: number; totalResultsExact: boolean; hasMoreResults: boolean; nextStartAfterId: string | null } };
}

/** Every record of a wallet (or a linking filter's records), newest first: one page of 200. */
async function everything(query: string, client: TestClient = t.clientA): Promise<HistoryRecord[]> {
  const body = await list(`${query}&limit=200`, client);
  expect(body.pagination.hasMoreResults).toBe(false);
  return body.data;
}

/** Walks every page of `query` with `limit` records a page, by cursor or by offset; checks each page's pagination. */
async function pages(query: string, limit: number, by: 'cursor' | 'offset'): Promise<{ ids: string[]; pageCount: number }> {
  const ids: string[] = [];
  let pageCount = 0;
  let cursor: string | null = null;
  let total: number | undefined;
  for (;;) {
    const paging: string = by === 'cursor' ? (cursor === null ? '' : `&startAfterId=${cursor}`) : `&offset=${ids.length}`;
    const body = await list(`${query}&limit=${limit}${paging}`);
    pageCount += 1;
    total ??= body.pagination.totalResults;
    // totalResults counts every match whatever the page.
    expect(body.pagination.totalResults).toBe(total);
    expect(body.data.length).toBeLessThanOrEqual(limit);
    ids.push(...body.data.map((record) => record.id));
    if (!body.pagination.hasMoreResults) {
      expect(body.pagination.nextStartAfterId).toBeNull();
      break;
    }
    expect(body.data).toHaveLength(limit);
    expect(body.pagination.nextStartAfterId).toBe(body.data[limit - 1]?.id);
    cursor = body.pagination.nextStartAfterId;
    if (pageCount > 50) throw new Error('paging does not end');
  }
  expect(ids).toHaveLength(total ?? 0);
  return { ids, pageCount };
}

const idsOf = (records: readonly HistoryRecord[]) => records.map((record) => record.id);

beforeAll(async () => {
  t = await createTestApp();
  walletId = await newWallet(t);
  payee = await newWallet(t);
  // BTC by a crypto deposit (PENDING_CREDIT, then CLEARING), USD by a bank deposit as the ledger
  // fixture writes it (TRANSFER).
  await fundCrypto(t, walletId, 'BTC', '1.00000000');
  t.clock.advance(1000);
  await fundWallet(t, t.clientA.id, walletId, 100_000n);
  // Internal transfers in both assets, alternating (TRANSFER, type INTERNAL_TRANSFER).
  for (let index = 0; index < 3; index++) {
    await transfer(t.clientA, walletId, payee, '1.00', 'USD');
    const btc = await transfer(t.clientA, walletId, payee, '0.00100000', 'BTC');
    btcTransferParent = btc.parentTransactionId;
  }
  // A BTC withdrawal, confirmed: HOLD, then CAPTURE, the fee's RELEASE and its WITHDRAWAL_FEE_REVENUE.
  t.clock.advance(1000);
  const withdrawal = await t.request({ method: 'POST', url: '/v1/digital/withdrawal', body: { walletId, asset: 'BTC', amount: '0.10000000', address: destinations.BITCOIN } });
  expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(201);
  withdrawalParent = withdrawal.body.data.parentCryptoTransactionId;
  t.clock.advance(1000);
  await mine(t, 'BITCOIN', 3);
  // A BTC deposit still unconfirmed: PENDING_CREDIT only.
  t.clock.advance(1000);
  const pending = await cryptoDeposit(t, { address: await addressOf(t, walletId, 'BTC'), asset: 'BTC', amount: '0.01000000', confirmations: 0 });
  expect(pending.status, JSON.stringify(pending.body)).toBe(201);
  all = await everything(`walletId=${walletId}`);

  // Client B: a wallet with records in both assets, some of the same purposes and types.
  otherWallet = await newWallet(t, t.clientB);
  const otherPayee = await newWallet(t, t.clientB);
  await fundCrypto(t, otherWallet, 'BTC', '1.00000000', undefined, t.clientB);
  await fundWallet(t, t.clientB.id, otherWallet, 100_000n);
  await transfer(t.clientB, otherWallet, otherPayee, '0.00100000', 'BTC');
  await transfer(t.clientB, otherWallet, otherPayee, '1.00', 'USD');
  otherIds = [...idsOf(await everything(`walletId=${otherWallet}`, t.clientB)), ...idsOf(await everything(`walletId=${otherPayee}`, t.clientB))];
});
afterAll(async () => {
  await t.close();
});

describe('200: the records of one asset or one purpose, newest first', () => {
  it('the wallet has the records the filters are tried on (both assets, seven purposes)', async () => {
    expect(new Set(all.map((record) => record.asset))).toEqual(new Set(['BTC', 'USD']));
    expect(new Set(all.map((record) => record.purpose))).toEqual(
      new Set(['PENDING_CREDIT', 'CLEARING', 'TRANSFER', 'HOLD', 'CAPTURE', 'RELEASE', 'WITHDRAWAL_FEE_REVENUE']),
    );
    expect(idsOf(all)).toEqual([...idsOf(all)].sort().reverse());
    await expectLedgerClean(t);
  });

  it.each(['BTC', 'USD'])('asset=%s: exactly the wallet’s records in that asset, in the same order', async (asset) => {
    const body = await list(`walletId=${walletId}&asset=${asset}&limit=200`);
    const expected = all.filter((record) => record.asset === asset);
    expect(expected.length).toBeGreaterThan(2);
    expect(idsOf(body.data)).toEqual(idsOf(expected));
    expect(body.pagination).toEqual({ totalResults: expected.length, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });
  });

  it('purpose=…: exactly the wallet’s records with that purpose, for each purpose it has', async () => {
    for (const purpose of new Set(all.map((record) => record.purpose))) {
      const body = await list(`walletId=${walletId}&purpose=${purpose}&limit=200`);
      const expected = all.filter((record) => record.purpose === purpose);
      expect(idsOf(body.data), purpose).toEqual(idsOf(expected));
      expect(body.pagination.totalResults, purpose).toBe(expected.length);
    }
    // The withdrawal's steps, one record each (the fee paid to FEES out of AVAILABLE).
    for (const purpose of ['HOLD', 'CAPTURE', 'WITHDRAWAL_FEE_REVENUE']) {
      const [record, ...rest] = (await list(`walletId=${walletId}&purpose=${purpose}`)).data;
      expect(rest, purpose).toEqual([]);
      expect(record, purpose).toMatchObject({ purpose, asset: 'BTC', operation: 'DEBIT', parentCryptoTransactionId: withdrawalParent });
    }
  });

  it('a known asset or a listed purpose no record has answers an empty page', async () => {
    for (const query of ['asset=ETH', 'asset=USD_TEST', 'purpose=COLLATERAL_LIQUIDATION', 'purpose=HOLD_INCREMENT', 'asset=USD&purpose=HOLD']) {
      const body = await list(`walletId=${walletId}&${query}`);
      expect(body, query).toEqual({ message: 'Transactions retrieved', data: [], pagination: { totalResults: 0, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null }, traceId: expect.any(String) });
    }
  });

  it('asset and purpose together, and with operation, status, balanceType, type and the dates', async () => {
    const cases: [string, (record: HistoryRecord) => boolean][] = [
      ['asset=BTC&purpose=TRANSFER', (r) => r.asset === 'BTC' && r.purpose === 'TRANSFER'],
      ['asset=USD&purpose=TRANSFER', (r) => r.asset === 'USD' && r.purpose === 'TRANSFER'],
      ['asset=BTC&purpose=TRANSFER&operation=DEBIT&type=INTERNAL_TRANSFER', (r) => r.asset === 'BTC' && r.purpose === 'TRANSFER' && r.operation === 'DEBIT' && r.type === 'INTERNAL_TRANSFER'],
      ['asset=BTC&status=PENDING', (r) => r.asset === 'BTC' && r.status === 'PENDING'],
      ['asset=BTC&balanceType=RESERVED', (r) => r.asset === 'BTC' && r.balanceType === 'RESERVED'],
      ['purpose=PENDING_CREDIT&status=COMPLETED', (r) => r.purpose === 'PENDING_CREDIT' && r.status === 'COMPLETED'],
      ['purpose=PENDING_CREDIT&status=PENDING&balanceType=PENDING', (r) => r.purpose === 'PENDING_CREDIT' && r.status === 'PENDING' && r.balanceType === 'PENDING'],
      ['asset=USD&operation=CREDIT', (r) => r.asset === 'USD' && r.operation === 'CREDIT'],
    ];
    for (const [query, keep] of cases) {
      const body = await list(`walletId=${walletId}&${query}&limit=200`);
      const expected = all.filter(keep);
      expect(idsOf(body.data), query).toEqual(idsOf(expected));
      expect(body.pagination.totalResults, query).toBe(expected.length);
    }
    expect((await list(`walletId=${walletId}&asset=BTC&purpose=TRANSFER&operation=DEBIT&type=INTERNAL_TRANSFER`)).pagination.totalResults).toBe(3);

    // createdAfter inclusive, createdBefore exclusive, as without the filters.
    const btcTransfers = all.filter((record) => record.asset === 'BTC' && record.purpose === 'TRANSFER');
    const [, middle, oldest] = btcTransfers;
    if (!middle || !oldest) throw new Error('three BTC transfers expected');
    const window = `createdAfter=${encodeURIComponent(oldest.createdAt)}&createdBefore=${encodeURIComponent(btcTransfers[0]?.createdAt ?? '')}`;
    const body = await list(`walletId=${walletId}&asset=BTC&purpose=TRANSFER&${window}`);
    expect(idsOf(body.data)).toEqual([middle.id, oldest.id]);
    expect(body.pagination.totalResults).toBe(2);
  });

  it('with the linking filters: a parent’s records of one asset or purpose, on every wallet it touched', async () => {
    // The BTC internal transfer: its debit here and its credit on the payee.
    const both = await list(`parentTransactionId=${btcTransferParent}&asset=BTC`);
    expect(both.data.map((record) => [record.walletId, record.operation]).sort()).toEqual([[payee, 'CREDIT'], [walletId, 'DEBIT']].sort());
    expect((await list(`parentTransactionId=${btcTransferParent}&asset=USD`)).data).toEqual([]);
    expect((await list(`parentTransactionId=${btcTransferParent}&purpose=TRANSFER&walletId=${payee}`)).data.map((record) => record.operation)).toEqual(['CREDIT']);
    expect((await list(`parentTransactionId=${btcTransferParent}&purpose=HOLD`)).data).toEqual([]);

    // The BTC withdrawal's records, by purpose.
    const steps = all.filter((record) => record.parentCryptoTransactionId === withdrawalParent);
    expect(steps.map((record) => record.purpose).sort()).toEqual(['CAPTURE', 'HOLD', 'RELEASE', 'WITHDRAWAL_FEE_REVENUE']);
    for (const record of steps) {
      const body = await list(`parentCryptoTransactionId=${withdrawalParent}&asset=BTC&purpose=${record.purpose}`);
      expect(idsOf(body.data), record.purpose).toEqual([record.id]);
    }
    const held = await list(`parentCryptoTransactionId=${withdrawalParent}&purpose=HOLD&status=PENDING&asset=BTC`);
    expect(held.data.map((record) => record.purpose)).toEqual(['HOLD']);
  });

  it('pages through one asset, one purpose and both, by cursor and by offset, with totalResults on every page', async () => {
    const queries: [string, (record: HistoryRecord) => boolean][] = [
      ['asset=BTC', (r) => r.asset === 'BTC'],
      ['purpose=TRANSFER', (r) => r.purpose === 'TRANSFER'],
      ['asset=BTC&purpose=TRANSFER', (r) => r.asset === 'BTC' && r.purpose === 'TRANSFER'],
      ['asset=USD&operation=DEBIT', (r) => r.asset === 'USD' && r.operation === 'DEBIT'],
    ];
    for (const [query, keep] of queries) {
      const expected = idsOf(all.filter(keep));
      for (const by of ['cursor', 'offset'] as const) {
        const walked = await pages(`walletId=${walletId}&${query}`, 2, by);
        expect(walked.ids, `${query} by ${by}`).toEqual(expected);
        expect(walked.pageCount, `${query} by ${by}`).toBe(Math.max(1, Math.ceil(expected.length / 2)));
      }
    }
    // A cursor from the unfiltered list works with the filters too: the records after it, filtered.
    const cursor = all[2]?.id ?? '';
    const body = await list(`walletId=${walletId}&asset=BTC&startAfterId=${cursor}&limit=200`);
    expect(idsOf(body.data)).toEqual(idsOf(all.slice(3).filter((record) => record.asset === 'BTC')));
  });
});

describe('400: a value the filters do not take, naming the parameter', () => {
  it.each([
    ['XYZ', 'unknown asset'],
    ['btc', 'unknown asset'],
    ['BITCOIN', 'unknown asset'],
    // As on the routes that move money: no code, or one longer than any, is an unknown asset too.
    ['', 'empty'],
    ['ABCDEFGHIJKLMNOPQ', 'longer than any code'],
  ])('asset=%s: 400 UNKNOWN_ASSET naming asset (%s)', async (asset) => {
    const response = await t.request({ url: `/v1/transactions?walletId=${walletId}&asset=${asset}` });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ code: 'UNKNOWN_ASSET', details: [{ field: 'asset' }] });
    expect(response.body.message).toContain('asset');
  });

  it.each([
    ['purpose=FOO', 'purpose'],
    ['purpose=transfer', 'purpose'],
    ['purpose=INTERNAL_TRANSFER', 'purpose'],
    ['purpose=', 'purpose'],
    ['purpose=HOLD&purpose=CAPTURE', 'purpose'],
    ['asset=BTC&asset=USD', 'asset'],
  ])('%s: 400 VALIDATION_ERROR naming %s', async (query, field) => {
    const response = await t.request({ url: `/v1/transactions?walletId=${walletId}&${query}` });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual([field]);
  });

  it('a purpose not in the list is told the purposes there are', async () => {
    const response = await t.request({ url: `/v1/transactions?walletId=${walletId}&purpose=FOO` });
    expect(response.body.details).toEqual([{ field: 'purpose', message: `must be one of ${walletTransactionPurposes.map((purpose) => JSON.stringify(purpose)).join(', ')}` }]);
  });

  it('docs/internal-transfers.md lists the same closed list of purposes (until 2026-12-07 it lacked DEPOSIT_RETURN; found by an audit)', () => {
    const doc = fs.readFileSync(path.join(packageRoot, 'docs', 'internal-transfers.md'), 'utf8');
    const paragraph = /- `purpose`: the records of one kind of movement[\s\S]*?Any other value/.exec(doc)?.[0] ?? '';
    const listed = [...paragraph.matchAll(/`([A-Z][A-Z_]+)`/g)].map((match) => match[1]);
    expect(listed).toEqual([...walletTransactionPurposes]);
  });

  it('asset and purpose do not stand in for walletId or a linking filter', async () => {
    for (const query of ['asset=BTC', 'purpose=TRANSFER', 'asset=BTC&purpose=TRANSFER']) {
      const response = await t.request({ url: `/v1/transactions?${query}` });
      expect(response.status, query).toBe(400);
      expect(response.body.details[0].field, query).toBe('walletId');
    }
  });

  it('an unknown asset is refused before the wallet is looked up, and the paging is still checked', async () => {
    const unknownWallet = await t.request({ url: `/v1/transactions?walletId=${crypto.randomUUID()}&asset=XYZ` });
    expect(unknownWallet.status).toBe(400);
    expect(unknownWallet.body.details[0].field).toBe('asset');
    const cursor = await t.request({ url: `/v1/transactions?walletId=${walletId}&asset=BTC&purpose=TRANSFER&startAfterId=garbage` });
    expect(cursor.status).toBe(400);
    expect(cursor.body.details[0].field).toBe('startAfterId');
  });

  it('outside the sandbox USD_TEST is an unknown asset, as on the routes that move money', async () => {
    const production = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
    try {
      const refused = await production.request({ url: `/v1/transactions?parentTransactionId=${crypto.randomUUID()}&asset=USD_TEST` });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body).toMatchObject({ code: 'UNKNOWN_ASSET', details: [{ field: 'asset' }] });
      expect((await production.request({ url: `/v1/transactions?parentTransactionId=${crypto.randomUUID()}&asset=USD` })).status).toBe(200);
    } finally {
      await production.close();
    }
  });
});

describe('one client’s records never in another’s lists', () => {
  it('client A’s lists by asset and purpose hold none of client B’s records, and B’s none of A’s', async () => {
    expect(otherIds.length).toBeGreaterThan(3);
    const mine = new Set(idsOf(all));
    for (const query of ['asset=BTC', 'asset=USD', 'purpose=TRANSFER', 'purpose=CLEARING', 'asset=BTC&purpose=TRANSFER']) {
      const ours = idsOf((await list(`walletId=${walletId}&${query}&limit=200`)).data);
      expect(ours.filter((id) => otherIds.includes(id)), query).toEqual([]);
      const theirs = idsOf((await list(`walletId=${otherWallet}&${query}&limit=200`, t.clientB)).data);
      expect(theirs.length, query).toBeGreaterThan(0);
      expect(theirs.filter((id) => mine.has(id)), query).toEqual([]);
    }
  });

  it('another client naming A’s wallet gets 404, and A’s parents with asset or purpose an empty page', async () => {
    const wallet = await t.request({ url: `/v1/transactions?walletId=${walletId}&asset=BTC&purpose=TRANSFER`, key: t.clientB.key });
    expect(wallet.status).toBe(404);
    for (const query of [`parentTransactionId=${btcTransferParent}&asset=BTC`, `parentCryptoTransactionId=${withdrawalParent}&purpose=HOLD`, `parentCryptoTransactionId=${withdrawalParent}&asset=BTC&purpose=CAPTURE`]) {
      const body = await list(query, t.clientB);
      expect(body.data, query).toEqual([]);
      expect(body.pagination.totalResults, query).toBe(0);
    }
  });
});
