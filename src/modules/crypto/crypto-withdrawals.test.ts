import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { balanceOf, expectLedgerClean } from '../../../test/bank/fixtures.js';
import { cryptoEventsOf, destinations, fundCrypto, mine, newWallet } from '../../../test/crypto/fixtures.js';
import { systemAccountBalance } from '../ledger/index.js';
import { validateTxHash } from './tx-hash.js';

let t: TestContext;
let walletId: string;

beforeAll(async () => {
  t = await createTestApp();
  walletId = await newWallet(t);
  await fundCrypto(t, walletId, 'BTC', '1.00000000');
  await fundCrypto(t, walletId, 'USDC', '1000.00', 'TRON');
  await fundCrypto(t, walletId, 'USDT', '100.00', 'SOLANA');
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  await expectLedgerClean(t);
});

const withdraw = (body: Record<string, unknown>, options: { idempotencyKey?: string; key?: string } = {}) =>
  t.request({ method: 'POST', url: '/v1/digital/withdrawal', body: { walletId, ...body }, ...options });

const group = async (id: string) => {
  const response = await t.request({ url: `/v1/baas/transactions?cryptoTransactionId=${id}` });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.data).toHaveLength(1);
  return response.body.data[0];
};

describe('withdrawals: reserved, broadcast, completed', () => {
  it('USDC on TRON: amount + fee reserved, completed at 19 confirmations; custody gets the amount, FEES the fee', async () => {
    const before = await balanceOf(t, walletId, 'USDC');
    const custodyBefore = await systemAccountBalance(t.deps.db, t.clientA.id, 'CRYPTO_CUSTODY', 'USDC');
    const feesBefore = await systemAccountBalance(t.deps.db, t.clientA.id, 'FEES', 'USDC');
    const response = await withdraw({ asset: 'USDC', network: 'TRON', amount: '25.00', address: destinations.TRON, memo: 'invoice 7', referenceNumber: 'ref-1', note: 'payout' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const data = response.body.data;
    expect(data).toMatchObject({
      type: 'CRYPTO_WITHDRAWAL_INITIATED',
      status: 'PENDING',
      direction: 'WITHDRAWAL',
      operation: 'DEBIT',
      asset: 'USDC',
      network: 'TRON',
      amount: '25.000000',
      netAmount: '25.000000',
      fee: '1.000000',
      feeAsset: 'USDC',
      grossAmount: false,
      address: destinations.TRON,
      memo: 'invoice 7',
      referenceNumber: 'ref-1',
      note: 'payout',
      confirmations: 0,
      confirmationsRequired: 19,
    });
    expect(data).not.toHaveProperty('currencyCode');
    expect(validateTxHash('TRON', data.txHash).ok).toBe(true);
    expect(before.AVAILABLE).toBe('1000.000000');
    expect(await balanceOf(t, walletId, 'USDC')).toEqual({ AVAILABLE: '974.000000', RESERVED: '26.000000', PENDING: '0.000000' });

    expect(await mine(t, 'TRON', 18)).toMatchObject({ completed: 0 });
    expect(await balanceOf(t, walletId, 'USDC')).toMatchObject({ RESERVED: '26.000000' });
    expect(await mine(t, 'TRON', 1)).toMatchObject({ completed: 1 });
    expect(await balanceOf(t, walletId, 'USDC')).toEqual({ AVAILABLE: '974.000000', RESERVED: '0.000000', PENDING: '0.000000' });
    // Custody pays the recipient out of the pool, so what leaves the wallet is booked to it; the fee is revenue.
    expect((await systemAccountBalance(t.deps.db, t.clientA.id, 'CRYPTO_CUSTODY', 'USDC')) - custodyBefore).toBe(25_000000n);
    expect((await systemAccountBalance(t.deps.db, t.clientA.id, 'FEES', 'USDC')) - feesBefore).toBe(1_000000n);

    const done = await group(data.id);
    expect(done).toMatchObject({ status: 'COMPLETED', type: 'CRYPTO_WITHDRAWAL_SUCCESS', confirmations: 19 });
    expect(done.children.map((child: { type: string }) => child.type)).toEqual(['CRYPTO_WITHDRAWAL_INITIATED', 'CRYPTO_WITHDRAWAL_SUCCESS']);
    const events = await cryptoEventsOf(t, data.parentCryptoTransactionId);
    expect(events.map((event) => event.type)).toEqual(['CRYPTO_WITHDRAWAL_TRANSACTION_PENDING', 'CRYPTO_WITHDRAWAL_TRANSACTION_COMPLETED']);
    expect(events[0].data).toMatchObject({ walletId, cryptoTransactionId: data.id, traceId: expect.any(String) });

    const history = await t.request({ url: `/v1/transactions?walletId=${walletId}&limit=200` });
    const linked = (history.body.data as { parentCryptoTransactionId: string | null; purpose: string }[]).filter(
      (entry) => entry.parentCryptoTransactionId === data.parentCryptoTransactionId,
    );
    expect(linked.map((entry) => entry.purpose)).toContain('WITHDRAWAL_FEE_REVENUE');
    // Every record of a completed withdrawal but its hold is COMPLETED: none is CANCELLED.
    const statuses = (linked as unknown as { purpose: string; status: string; amount: string }[]).map((entry) => `${entry.purpose} ${entry.status} ${entry.amount}`).sort();
    expect(statuses).toEqual(['CAPTURE COMPLETED 25.000000', 'HOLD PENDING 26.000000', 'RELEASE COMPLETED 1.000000', 'WITHDRAWAL_FEE_REVENUE COMPLETED 1.000000']);
  });

  it('grossAmount: the wallet pays the amount, the recipient gets amount − fee', async () => {
    const response = await withdraw({ asset: 'BTC', amount: '0.10000000', address: destinations.BITCOIN, grossAmount: true });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({ network: 'BITCOIN', amount: '0.10000000', netAmount: '0.09995000', fee: '0.00005000', grossAmount: true });
    const before = await balanceOf(t, walletId, 'BTC');
    expect(before.RESERVED).toBe('0.10000000');
    await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${response.body.data.id}/confirm` });
    const after = await balanceOf(t, walletId, 'BTC');
    expect(after).toMatchObject({ RESERVED: '0.00000000', AVAILABLE: before.AVAILABLE });
  });

  it('an off-curve Solana destination is accepted and flagged', async () => {
    const response = await withdraw({ asset: 'USDT', network: 'SOLANA', amount: '1.00', address: '4BJXYkfvg37zEmBbsacZjeQDpTNx91KppxFJxRqrz48e' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({ offCurve: true, fee: '0.100000' });
    await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${response.body.data.id}/fail` });
  });

  it('idempotent: the same key answers the same withdrawal and reserves once', async () => {
    const before = await balanceOf(t, walletId, 'USDT');
    const body = { asset: 'USDT', network: 'SOLANA', amount: '2.00', address: destinations.SOLANA };
    const first = await withdraw(body, { idempotencyKey: 'crypto-withdrawal-1' });
    const second = await withdraw(body, { idempotencyKey: 'crypto-withdrawal-1' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.data.id).toBe(first.body.data.id);
    const after = await balanceOf(t, walletId, 'USDT');
    expect(Number(before.AVAILABLE) - Number(after.AVAILABLE)).toBeCloseTo(2.1, 6);
    await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${first.body.data.id}/fail` });
  });
});

describe('withdrawals: failure', () => {
  it.each([
    ['BTC', 'BITCOIN', '0.00099900', 'BTC'],
    ['USDC', 'TRON', '9.99', 'USDC'],
  ])('magic amount %s %s %s fails at its first block with REJECTED_BY_NETWORK; everything returns to AVAILABLE', async (asset, network, amount) => {
    const before = await balanceOf(t, walletId, asset);
    const response = await withdraw({ asset, network, amount, address: destinations[network as 'BITCOIN' | 'TRON'] });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.status).toBe('PENDING');
    expect((await balanceOf(t, walletId, asset)).AVAILABLE).not.toBe(before.AVAILABLE);
    expect(await mine(t, network, 1)).toMatchObject({ failed: 1 });
    const done = await group(response.body.data.id);
    expect(done).toMatchObject({ status: 'FAILED', failureReason: 'REJECTED_BY_NETWORK', type: 'CRYPTO_WITHDRAWAL_FAILURE' });
    expect(await balanceOf(t, walletId, asset)).toEqual(before);
    const events = await cryptoEventsOf(t, response.body.data.parentCryptoTransactionId);
    expect(events.map((event) => event.type)).toEqual(['CRYPTO_WITHDRAWAL_TRANSACTION_PENDING', 'CRYPTO_WITHDRAWAL_TRANSACTION_FAILED']);
  });

  it('the fail control releases amount and fee', async () => {
    const before = await balanceOf(t, walletId, 'USDC');
    const response = await withdraw({ asset: 'USDC', network: 'TRON', amount: '5.00', address: destinations.TRON });
    const failed = await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${response.body.data.parentCryptoTransactionId}/fail` });
    expect(failed.status).toBe(200);
    expect(failed.body.data).toMatchObject({ status: 'FAILED', failureReason: 'REJECTED_BY_NETWORK' });
    expect(await balanceOf(t, walletId, 'USDC')).toEqual(before);
    // The wallet history ends FAILED, as a failed deposit's does.
    const history = await t.request({ url: `/v1/transactions?parentCryptoTransactionId=${response.body.data.parentCryptoTransactionId as string}` });
    expect(history.body.data.map((record: { purpose: string; status: string }) => `${record.purpose} ${record.status}`)).toEqual(['RELEASE FAILED', 'HOLD PENDING']);
  });
});

describe('withdrawals: refused', () => {
  it.each([
    [{ asset: 'USD', amount: '1.00', address: destinations.BITCOIN }, 400, 'VALIDATION_ERROR', 'asset'],
    [{ asset: 'BTC', network: 'TRON', amount: '1', address: destinations.TRON }, 400, 'VALIDATION_ERROR', 'network'],
    [{ asset: 'BTC', amount: '0', address: destinations.BITCOIN }, 400, 'INVALID_AMOUNT', 'amount'],
    [{ asset: 'BTC', amount: '0.000000001', address: destinations.BITCOIN }, 400, 'INVALID_AMOUNT', 'amount'],
    [{ asset: 'BTC', amount: '0.1', address: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsy' }, 400, 'INVALID_ADDRESS', 'address'],
    [{ asset: 'BTC', amount: '0.1', address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }, 400, 'ADDRESS_WRONG_NETWORK', 'address'],
    [{ asset: 'ETH', amount: '0.1', address: '0x0000000000000000000000000000000000000000' }, 400, 'ADDRESS_NOT_ALLOWED', 'address'],
    [{ asset: 'ETH', amount: '0.1', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' }, 400, 'INVALID_ADDRESS', 'address'],
    [{ asset: 'BTC', amount: '0.1', address: destinations.BITCOIN, memo: 'x' }, 400, 'MEMO_NOT_SUPPORTED', 'memo'],
    // The documented order: the address first, then the memo; a memo where the network has none, whatever its length.
    [{ asset: 'ETH', amount: '0.1', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', memo: '' }, 400, 'INVALID_ADDRESS', 'address'],
    [{ asset: 'BTC', amount: '0.1', address: '', memo: 'x' }, 400, 'INVALID_ADDRESS', 'address'],
    [{ asset: 'BTC', amount: '0.1', address: destinations.BITCOIN, memo: '' }, 400, 'MEMO_NOT_SUPPORTED', 'memo'],
    [{ asset: 'BTC', amount: '0.1', address: destinations.BITCOIN, memo: 'x'.repeat(300) }, 400, 'MEMO_NOT_SUPPORTED', 'memo'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, memo: 'x'.repeat(257) }, 400, 'VALIDATION_ERROR', 'memo'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, memo: 'a\u0085b' }, 400, 'VALIDATION_ERROR', 'memo'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, memo: 'a\u202eb' }, 400, 'VALIDATION_ERROR', 'memo'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, note: 'Rent\u200b' }, 400, 'VALIDATION_ERROR', 'note'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, referenceNumber: 'R-1\n' }, 400, 'VALIDATION_ERROR', 'referenceNumber'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, note: '   ' }, 400, 'VALIDATION_ERROR', 'note'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, referenceNumber: ' ' }, 400, 'VALIDATION_ERROR', 'referenceNumber'],
    [{ asset: 'USDC', network: 'TRON', amount: '1.00', address: destinations.TRON, grossAmount: true }, 422, 'AMOUNT_BELOW_FEE', 'amount'],
    [{ asset: 'USDC', network: 'TRON', amount: '0.50', address: destinations.TRON, grossAmount: true }, 422, 'AMOUNT_BELOW_FEE', 'amount'],
    [{ asset: 'BTC', amount: '5', address: destinations.BITCOIN }, 422, 'INSUFFICIENT_FUNDS', undefined],
    [{ asset: 'ETH', amount: '0.1', address: destinations.ETHEREUM }, 422, 'INSUFFICIENT_FUNDS', undefined],
  ])('%j → %i %s naming %s; nothing reserved', async (body, status, code, field) => {
    const before = await balanceOf(t, walletId, body.asset);
    const response = await withdraw(body);
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body.code).toBe(code);
    if (field !== undefined) expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    // The fee is written at the asset's scale, as everywhere else (USDC: six decimals).
    if (code === 'AMOUNT_BELOW_FEE') expect(response.body.details[0].message).toMatch(/the fee \(\d+\.\d{6} USDC\)/);
    expect(await balanceOf(t, walletId, body.asset)).toEqual(before);
  });

  it.each([
    ['a 5,000-character memo on BITCOIN', { asset: 'BTC', amount: '0.1', address: destinations.BITCOIN, memo: 'x'.repeat(5000) }, 'MEMO_NOT_SUPPORTED', 'memo'],
    ['a bad address with a 5,000-character memo', { asset: 'USDC', network: 'TRON', amount: '1.00', address: 'bad', memo: 'x'.repeat(5000) }, 'INVALID_ADDRESS', 'address'],
    ['a 5,000-character address', { asset: 'BTC', amount: '0.1', address: 'x'.repeat(5000) }, 'INVALID_ADDRESS', 'address'],
  ])('%s is judged by the destination rules in their order (%s), whatever its length', async (_name, body, code, field) => {
    const response = await withdraw(body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(code);
    expect(response.body.details[0].field).toBe(field);
  });

  it('404 for an unknown wallet and for another client\'s wallet', async () => {
    const theirs = await newWallet(t, t.clientB);
    for (const id of ['0190f1f2-0000-7000-8000-000000000000', theirs, 'not-an-id']) {
      const response = await t.request({ method: 'POST', url: '/v1/digital/withdrawal', body: { walletId: id, asset: 'BTC', amount: '0.1', address: destinations.BITCOIN } });
      expect(response.status, id).toBe(404);
    }
  });

  it('400 for a body field that is not in the contract (currencyCode)', async () => {
    const response = await withdraw({ asset: 'BTC', amount: '0.1', address: destinations.BITCOIN, currencyCode: 'BTC' });
    expect(response.status).toBe(400);
  });
});

describe('records: cross-client', () => {
  it('another client sees none of it: 404 on GET and the controls, an empty page on the filter', async () => {
    const response = await withdraw({ asset: 'USDC', network: 'TRON', amount: '3.00', address: destinations.TRON });
    const id = response.body.data.id as string;
    const key = t.clientB.key;
    expect((await t.request({ url: `/v1/digital/transactions/${id}`, key })).status).toBe(404);
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${id}/confirm`, key })).status).toBe(404);
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${id}/fail`, key })).status).toBe(404);
    const list = await t.request({ url: `/v1/baas/transactions?cryptoTransactionId=${id}`, key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    expect((await t.request({ url: `/v1/digital/transactions?walletId=${walletId}`, key })).status).toBe(404);
    // Client B's blocks do not confirm it.
    await mine(t, 'TRON', 50, t.clientB);
    expect((await group(id)).status).toBe('PENDING');
    await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${id}/fail` });
  });

  it('the bank filters cannot be combined with cryptoTransactionId; the bank list is unchanged', async () => {
    const response = await t.request({ url: `/v1/baas/transactions?cryptoTransactionId=0190f1f2-0000-7000-8000-000000000000&bankNetwork=ACH` });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('bankNetwork');
    const bank = await t.request({ url: '/v1/baas/transactions' });
    expect(bank.status).toBe(200);
    expect(bank.body.data).toEqual([]);
  });
});
