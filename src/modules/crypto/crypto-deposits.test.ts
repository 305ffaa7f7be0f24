import crypto from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { balanceOf, expectLedgerClean } from '../../../test/bank/fixtures.js';
import { addressOf, cryptoDeposit, cryptoEventsOf, destinations, fundCrypto, mine, newWallet } from '../../../test/crypto/fixtures.js';
import { validateWithdrawalDestination } from './address-validation.js';
import { validateTxHash } from './tx-hash.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  await expectLedgerClean(t);
});

const records = async (id: string) => {
  const response = await t.request({ url: `/v1/baas/transactions?cryptoTransactionId=${id}` });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
};

describe('addresses: get or create', () => {
  it('201 then 200 with the same address; one per network, shared by the network\'s assets; valid on its chain', async () => {
    const walletId = await newWallet(t);
    const first = await t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId, asset: 'USDC' } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.data).toMatchObject({ walletId, asset: 'USDC', network: 'ETHEREUM', memo: null });
    const again = await t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId, asset: 'USDC', network: 'ETHEREUM' } });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    const eth = await t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId, asset: 'ETH' } });
    expect(eth.status).toBe(200);
    expect(eth.body.data).toMatchObject({ id: first.body.data.id, asset: 'ETH', address: first.body.data.address });
    for (const [asset, network] of [['BTC', 'BITCOIN'], ['USDT', 'TRON'], ['USDC', 'SOLANA']] as const) {
      const created = await t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId, asset, network } });
      expect(created.status).toBe(201);
      expect(validateWithdrawalDestination({ network, address: created.body.data.address, bitcoinNetwork: 'testnet' }).ok).toBe(true);
    }
    expect(first.body.data.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const list = await t.request({ url: `/v1/digital/addresses?walletId=${walletId}` });
    expect(list.status).toBe(200);
    expect(list.body.data.map((entry: { network: string }) => entry.network)).toEqual(['ETHEREUM', 'BITCOIN', 'TRON', 'SOLANA']);
    expect(list.body.data[1].address).toMatch(/^tb1q/);
  });

  it('two first requests at once make one address: one 201, one 200, the same record', async () => {
    const walletId = await newWallet(t);
    const answers = await Promise.all([0, 1].map(() => t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId, asset: 'USDT', network: 'TRON' } })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 201]);
    expect(answers[0]?.body.data.id).toBe(answers[1]?.body.data.id);
  });

  it('two wallets get different addresses; the same wallet always the same', async () => {
    const a = await newWallet(t);
    const b = await newWallet(t);
    expect(await addressOf(t, a, 'BTC')).not.toBe(await addressOf(t, b, 'BTC'));
    expect(await addressOf(t, a, 'BTC')).toBe(await addressOf(t, a, 'BTC'));
  });

  it.each([
    [{ asset: 'USD' }, 'asset'],
    [{ asset: 'DOGE' }, 'asset'],
    [{ asset: 'BTC', network: 'ETHEREUM' }, 'network'],
    [{ asset: 'USDC', network: 'bitcoin' }, 'network'],
  ])('400 for %j naming %s', async (body, field) => {
    const walletId = await newWallet(t);
    const response = await t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId, ...body } });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('404 for an unknown wallet, on POST and GET', async () => {
    const unknown = '0190f1f2-0000-7000-8000-000000000000';
    expect((await t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId: unknown, asset: 'BTC' } })).status).toBe(404);
    expect((await t.request({ url: `/v1/digital/addresses?walletId=${unknown}` })).status).toBe(404);
  });
});

describe('deposits: pending, confirmed by blocks, completed', () => {
  it('BTC: PENDING balance, confirmations by blocks, AVAILABLE at 3 with COMPLETED; records and history linked', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'BTC');
    const response = await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.01500000' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const data = response.body.data;
    expect(data).toMatchObject({
      type: 'CRYPTO_DEPOSIT_INITIATED',
      status: 'PENDING',
      direction: 'DEPOSIT',
      walletId,
      asset: 'BTC',
      network: 'BITCOIN',
      amount: '0.01500000',
      fee: '0.00000000',
      feeAsset: 'BTC',
      address,
      confirmations: 0,
      confirmationsRequired: 3,
      blockNumber: null,
    });
    expect(data).not.toHaveProperty('currencyCode');
    expect(validateTxHash('BITCOIN', data.txHash).ok).toBe(true);
    expect(await balanceOf(t, walletId, 'BTC')).toEqual({ AVAILABLE: '0.00000000', RESERVED: '0.00000000', PENDING: '0.01500000' });

    expect(await mine(t, 'BITCOIN', 2)).toMatchObject({ network: 'BITCOIN', confirmed: 1, completed: 0 });
    expect(await balanceOf(t, walletId, 'BTC')).toMatchObject({ AVAILABLE: '0.00000000', PENDING: '0.01500000' });
    const [group] = await records(data.id);
    expect(group).toMatchObject({ status: 'PENDING', confirmations: 2 });
    expect(group.blockNumber).toBeGreaterThanOrEqual(1);

    expect(await mine(t, 'BITCOIN', 1)).toMatchObject({ completed: 1 });
    expect(await balanceOf(t, walletId, 'BTC')).toEqual({ AVAILABLE: '0.01500000', RESERVED: '0.00000000', PENDING: '0.00000000' });
    const [done] = await records(data.id);
    expect(done).toMatchObject({ id: data.parentCryptoTransactionId, status: 'COMPLETED', type: 'CRYPTO_DEPOSIT_SUCCESS', confirmations: 3 });
    expect(done.children.map((child: { type: string }) => child.type)).toEqual(['CRYPTO_DEPOSIT_INITIATED', 'CRYPTO_DEPOSIT_SUCCESS']);
    // Each child as it was written: the first, at 0 confirmations, was in no block yet; the last in the transfer's.
    expect(done.children.map((child: { confirmations: number; blockNumber: number | null }) => [child.confirmations, child.blockNumber])).toEqual([
      [0, null],
      [3, done.blockNumber],
    ]);
    const initiated = await t.request({ url: `/v1/digital/transactions/${data.id as string}` });
    expect(initiated.body.data).toMatchObject({ confirmations: 0, blockNumber: null });
    const events = await cryptoEventsOf(t, data.parentCryptoTransactionId);
    expect(events.map((event) => event.type)).toEqual(['CRYPTO_DEPOSIT_TRANSACTION_PENDING', 'CRYPTO_DEPOSIT_TRANSACTION_COMPLETED']);
    expect(events[1].data).toMatchObject({ walletId, cryptoTransactionId: done.children[1].id, traceId: expect.any(String) });

    const history = await t.request({ url: `/v1/transactions?walletId=${walletId}` });
    expect(history.status).toBe(200);
    const linked = (history.body.data as { parentCryptoTransactionId: string | null; cryptoTransactionId: string | null }[]).filter(
      (entry) => entry.parentCryptoTransactionId === data.parentCryptoTransactionId,
    );
    expect(linked.length).toBeGreaterThanOrEqual(2);
    expect(linked.map((entry) => entry.cryptoTransactionId)).toEqual(expect.arrayContaining([data.id, done.children[1].id]));
  });

  it('a deposit sent with enough confirmations is COMPLETED at once; the record GET answers it by child and parent id', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDT', 'TRON');
    const response = await cryptoDeposit(t, { address, asset: 'USDT', amount: '250.50', confirmations: 19 });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ type: 'CRYPTO_DEPOSIT_SUCCESS', status: 'COMPLETED', confirmations: 19, network: 'TRON' });
    expect(await balanceOf(t, walletId, 'USDT')).toMatchObject({ AVAILABLE: '250.500000', PENDING: '0.000000' });
    const byChild = await t.request({ url: `/v1/digital/transactions/${response.body.data.id}` });
    expect(byChild.body.data.type).toBe('CRYPTO_DEPOSIT_SUCCESS');
    const byParent = await t.request({ url: `/v1/digital/transactions/${response.body.data.parentCryptoTransactionId}` });
    expect(byParent.body.data.id).toBe(response.body.data.id);
  });

  it('the confirm control completes one deposit (default: the confirmations it still needs); a second call is 409', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDC', 'SOLANA');
    const deposit = (await cryptoDeposit(t, { address, asset: 'USDC', amount: '10.00', fromAddress: '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY' })).body.data;
    expect(deposit.fromAddress).toBe('5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY');
    expect(deposit.txHash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    const partial = await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/confirm`, body: { confirmations: 5 } });
    expect(partial.status, JSON.stringify(partial.body)).toBe(200);
    expect(partial.body.data).toMatchObject({ status: 'PENDING' });
    expect((await records(deposit.id))[0].confirmations).toBe(5);
    const confirmed = await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.parentCryptoTransactionId}/confirm` });
    expect(confirmed.body.data).toMatchObject({ type: 'CRYPTO_DEPOSIT_SUCCESS', status: 'COMPLETED', confirmations: 32 });
    expect(await balanceOf(t, walletId, 'USDC')).toMatchObject({ AVAILABLE: '10.000000', PENDING: '0.000000' });
    const again = await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/confirm` });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CRYPTO_TRANSACTION_NOT_PENDING');
  });

  it('one blocks call completes many deposits at once (two on one wallet too), counts the others up, and completes a withdrawal beside them', async () => {
    const client = await t.newClient();
    const wallets = [await newWallet(t, client), await newWallet(t, client), await newWallet(t, client)];
    const early: string[] = [];
    for (const [index, walletId] of [...wallets, wallets[0] ?? ''].entries()) {
      const response = await cryptoDeposit(t, { address: await addressOf(t, walletId, 'BTC', undefined, client), asset: 'BTC', amount: `0.0${index + 1}000000` }, client);
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      early.push(response.body.data.parentCryptoTransactionId);
    }
    const spender = await newWallet(t, client);
    await fundCrypto(t, spender, 'BTC', '0.50000000', undefined, client);
    const withdrawal = await t.request({ method: 'POST', url: '/v1/digital/withdrawal', key: client.key, body: { walletId: spender, asset: 'BTC', amount: '0.1', address: destinations.BITCOIN } });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(201);
    expect(await mine(t, 'BITCOIN', 1, client)).toMatchObject({ confirmed: 5, completed: 0 });
    const late = await cryptoDeposit(t, { address: await addressOf(t, wallets[1] ?? '', 'BTC', undefined, client), asset: 'BTC', amount: '0.00500000' }, client);
    expect(late.status).toBe(201);

    expect(await mine(t, 'BITCOIN', 2, client)).toMatchObject({ confirmed: 6, completed: 5, failed: 0 });
    expect(await balanceOf(t, wallets[0] ?? '', 'BTC', client)).toEqual({ AVAILABLE: '0.05000000', RESERVED: '0.00000000', PENDING: '0.00000000' });
    expect(await balanceOf(t, wallets[1] ?? '', 'BTC', client)).toEqual({ AVAILABLE: '0.02000000', RESERVED: '0.00000000', PENDING: '0.00500000' });
    expect(await balanceOf(t, wallets[2] ?? '', 'BTC', client)).toMatchObject({ AVAILABLE: '0.03000000', PENDING: '0.00000000' });
    expect((await balanceOf(t, spender, 'BTC', client)).RESERVED).toBe('0.00000000');
    for (const id of early) {
      const events = await cryptoEventsOf(t, id, client);
      expect(events.map((event) => event.type)).toEqual(['CRYPTO_DEPOSIT_TRANSACTION_PENDING', 'CRYPTO_DEPOSIT_TRANSACTION_COMPLETED']);
      expect(events[1].data).toMatchObject({ status: 'COMPLETED', confirmations: 3 });
    }
    const groupOf = async (id: string) => (await t.request({ url: `/v1/baas/transactions?cryptoTransactionId=${id}`, key: client.key })).body.data[0];
    const lateGroup = await groupOf(late.body.data.id);
    expect(lateGroup).toMatchObject({ status: 'PENDING', confirmations: 2 });
    const withdrawn = await groupOf(withdrawal.body.data.id);
    expect(withdrawn).toMatchObject({ status: 'COMPLETED', confirmations: 3 });
  });

  it('blocks only touch the named network and the calling client', async () => {
    const walletId = await newWallet(t);
    const btc = (await cryptoDeposit(t, { address: await addressOf(t, walletId, 'BTC'), asset: 'BTC', amount: '0.00010000' })).body.data;
    const eth = (await cryptoDeposit(t, { address: await addressOf(t, walletId, 'ETH'), asset: 'ETH', amount: '0.5' })).body.data;
    await mine(t, 'ETHEREUM', 12, t.clientB);
    await mine(t, 'BITCOIN', 3);
    expect((await records(btc.id))[0].status).toBe('COMPLETED');
    expect((await records(eth.id))[0]).toMatchObject({ status: 'PENDING', confirmations: 0 });
    await mine(t, 'ETHEREUM', 12);
    expect((await records(eth.id))[0].status).toBe('COMPLETED');
    expect(await balanceOf(t, walletId, 'ETH')).toMatchObject({ AVAILABLE: '0.500000000000000000' });
  });
});

describe('a confirm or fail call that waited for the transfer behind another process\'s change is dated after it (2026-12-06)', () => {
  // The call's moment is read when it arrives; these call the service with a moment before the
  // transfer's last change (confirmations counted up), as a call that arrived first on another
  // process and waited for the row lock meanwhile has (the clock never moves back).
  it.each(['confirm', 'fail', 'blocks'] as const)('%s', async (action) => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'BTC');
    const deposit = (await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.10000000' })).body.data;
    t.clock.advance(10_000);
    const counted = await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/confirm`, body: { confirmations: 1 } });
    expect(counted.body.data).toMatchObject({ status: 'PENDING' });
    const countedAt = Date.parse((await records(deposit.id))[0].updatedAt);
    const { confirmCryptoTransaction, failCryptoTransaction, mineBlocks } = await import('./crypto-transfers.service.js');
    const { withTransaction } = await import('../../platform/db/transaction.js');
    const context = { clientId: t.clientA.id, traceId: `late-${action}`, now: new Date(countedAt - 5_000) };
    if (action === 'blocks') {
      // A blocks call whose moment is before the confirm's change completes the deposit.
      await withTransaction(t.deps.db, (tx) => mineBlocks(tx, context, 'BITCOIN', 5));
    }
    const record =
      action === 'blocks'
        ? (await records(deposit.id))[0].children.at(-1)
        : await withTransaction(t.deps.db, (tx) =>
            action === 'confirm' ? confirmCryptoTransaction(tx, context, deposit.id, undefined) : failCryptoTransaction(tx, context, deposit.id, undefined),
          );
    expect(record.status).toBe(action === 'fail' ? 'FAILED' : 'COMPLETED');
    expect(Date.parse(record.createdAt)).toBeGreaterThan(countedAt);
    const [transfer] = await records(deposit.id);
    expect(Date.parse(transfer.updatedAt)).toBeGreaterThan(countedAt);
    expect(transfer.children.map((child: { id: string }) => child.id)).toEqual([deposit.id, record.id]);
  });
});

describe('deposits: failure', () => {
  it('the fail control removes the PENDING balance and emits FAILED with the reason', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'BTC');
    const deposit = (await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.20000000' })).body.data;
    const failed = await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/fail`, body: { reason: 'chain reorganisation' } });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body.data).toMatchObject({ type: 'CRYPTO_DEPOSIT_FAILURE', status: 'FAILED', failureReason: 'chain reorganisation' });
    expect(await balanceOf(t, walletId, 'BTC')).toEqual({ AVAILABLE: '0.00000000', RESERVED: '0.00000000', PENDING: '0.00000000' });
    const events = await cryptoEventsOf(t, deposit.parentCryptoTransactionId);
    expect(events.map((event) => event.type)).toEqual(['CRYPTO_DEPOSIT_TRANSACTION_PENDING', 'CRYPTO_DEPOSIT_TRANSACTION_FAILED']);
    // A failed deposit gains nothing from later blocks.
    expect(await mine(t, 'BITCOIN', 5)).toMatchObject({ completed: 0 });
    expect(await balanceOf(t, walletId, 'BTC')).toMatchObject({ AVAILABLE: '0.00000000' });
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/fail` })).status).toBe(409);
  });

  it('422 ASSET_NETWORK_MISMATCH: BTC sent to an Ethereum address is refused, kept FAILED for support, no balance', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDC');
    const response = await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.10000000' });
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    expect(response.body.code).toBe('ASSET_NETWORK_MISMATCH');
    expect(response.body.details[0].field).toBe('asset');
    const recordId = /crypto transaction ([0-9a-f-]{36})/.exec(response.body.details[0].message)?.[1];
    expect(recordId).toBeDefined();
    const [kept] = await records(recordId as string);
    expect(kept).toMatchObject({ status: 'FAILED', failureReason: 'ASSET_NETWORK_MISMATCH', asset: 'BTC', network: 'ETHEREUM', walletId, type: 'CRYPTO_DEPOSIT_FAILURE' });
    expect(await balanceOf(t, walletId, 'BTC')).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
  });

  it('422 with its sender and hash in the sending chain\'s format (a Bitcoin address and hash to an Ethereum address): kept FAILED as sent', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDC');
    const fromAddress = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
    const txHash = 'ab'.repeat(32);
    const response = await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.5', fromAddress, txHash });
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    expect(response.body.code).toBe('ASSET_NETWORK_MISMATCH');
    const recordId = /crypto transaction ([0-9a-f-]{36})/.exec(response.body.details[0].message)?.[1];
    const [kept] = await records(recordId as string);
    expect(kept).toMatchObject({ status: 'FAILED', failureReason: 'ASSET_NETWORK_MISMATCH', fromAddress, txHash });
    // Not letters and digits: no chain writes that, refused naming the field.
    const odd = await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.5', fromAddress: 'tb1q-w508' });
    expect(odd.status).toBe(400);
    expect(odd.body.details[0]).toEqual({ field: 'fromAddress', message: 'holds only letters and digits' });
  });

  it('409 for the same refused chain transaction sent again (same txHash): it names the FAILED record kept the first time', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDC');
    const txHash = `0x${'cd'.repeat(32)}`;
    const first = await cryptoDeposit(t, { address, asset: 'BTC', amount: '1', txHash });
    expect(first.status).toBe(422);
    const keptId = /crypto transaction ([0-9a-f-]{36})/.exec(first.body.details[0].message)?.[1];
    const again = await cryptoDeposit(t, { address, asset: 'BTC', amount: '1', txHash });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body.details[0].field).toBe('txHash');
    expect(again.body.message).toContain(`crypto transaction ${keptId as string}`);
    expect(await records(keptId as string)).toHaveLength(1);
    // Hex has no case, and Bitcoin writes it without 0x: the same chain transaction, each way.
    for (const spelling of [txHash.toUpperCase().replace('0X', '0x'), txHash.slice(2), txHash.slice(2).toUpperCase()]) {
      const respelled = await cryptoDeposit(t, { address, asset: 'BTC', amount: '1', txHash: spelling });
      expect(respelled.status, spelling).toBe(409);
      expect(respelled.body.message).toContain(`crypto transaction ${keptId as string}`);
    }
    // Sent again as a deposit the address takes (USDC on Ethereum, whose hashes are written with 0x): still that chain transaction.
    for (const spelling of [txHash, txHash.toUpperCase().replace('0X', '0x')]) {
      const valid = await cryptoDeposit(t, { address, asset: 'USDC', amount: '1', txHash: spelling });
      expect(valid.status, spelling).toBe(409);
      expect(valid.body.message).toContain(`crypto transaction ${keptId as string}`);
    }
    const failed = await t.request({ url: `/v1/digital/transactions?walletId=${walletId}&status=FAILED` });
    expect(failed.status).toBe(200);
    expect(failed.body.data).toHaveLength(1);
    const all = await t.request({ url: `/v1/digital/transactions?walletId=${walletId}` });
    expect(all.body.data).toHaveLength(1);
  });

  it('409 for a refused chain transaction sent again, spelled as the address\'s network writes it, as a deposit the address takes (nothing credited)', async () => {
    // Until 2026-12-03 only a refused deposit's hash was looked up under both spellings: kept without
    // 0x and sent again with it to an Ethereum address (or the other way on Tron), it was credited (found by an audit).
    const walletId = await newWallet(t);
    for (const [network, bare, keptAs, sentAs] of [
      ['ETHEREUM', 'ef'.repeat(32), 'ef'.repeat(32), `0x${'ef'.repeat(32)}`],
      ['TRON', 'ab'.repeat(32), `0x${'ab'.repeat(32)}`, 'ab'.repeat(32)],
    ] as const) {
      const address = await addressOf(t, walletId, 'USDT', network);
      expect((await cryptoDeposit(t, { address, asset: 'BTC', amount: '1', txHash: keptAs })).status, network).toBe(422);
      const valid = await cryptoDeposit(t, { address, asset: 'USDT', amount: '1', txHash: sentAs });
      expect(valid.status, `${network} ${bare} ${JSON.stringify(valid.body)}`).toBe(409);
      expect(valid.body.details[0].field).toBe('txHash');
    }
    const all = await t.request({ url: `/v1/digital/transactions?walletId=${walletId}` });
    expect(all.body.data.map((record: { status: string }) => record.status)).toEqual(['FAILED', 'FAILED']);
  });
});

describe('deposits: one chain transaction sent twice at once (2026-12-07)', () => {
  it('one is credited (201), the other answers 409 as a later repeat does, not 500; the wallet is credited once', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'BTC');
    // Until 2026-12-07 both found no earlier deposit and the second's insert hit the unique index:
    // 500 in 19 pairs of 20 on PostgreSQL (found by an audit). On PGlite they run one after the other.
    for (let pair = 0; pair < 8; pair++) {
      const txHash = `${pair.toString(16).padStart(2, '0')}${'ab'.repeat(31)}`;
      const body = { address, asset: 'BTC', amount: '0.00100000', confirmations: 3, txHash };
      const answers = await Promise.all([cryptoDeposit(t, body), cryptoDeposit(t, body)]);
      expect(answers.map((answer) => answer.status).sort(), JSON.stringify(answers.map((answer) => answer.body))).toEqual([201, 409]);
      const refused = answers.find((answer) => answer.status === 409);
      expect(refused?.body.details[0]).toEqual({ field: 'txHash', message: 'already deposited' });
    }
    expect(await balanceOf(t, walletId, 'BTC')).toMatchObject({ AVAILABLE: '0.00800000' });
  });

  it('refused (BTC to an Ethereum address): one 422 naming the FAILED record kept, the other 409 naming the same record; each key replays its own answer', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDC');
    // Until 2026-12-07 both answered 422, each naming its own record, and only one was kept (found by a re-audit).
    for (let pair = 0; pair < 6; pair++) {
      const txHash = `0x${pair.toString(16).padStart(2, '0')}${'ef'.repeat(31)}`;
      const body = { address, asset: 'BTC', amount: '1', txHash };
      // Half the pairs under Idempotency-Keys: until 2026-12-07 the key of the one answered 409
      // replayed the 422 it was refused with first, naming a record never kept.
      const keys = pair % 2 === 0 ? [crypto.randomUUID(), crypto.randomUUID()] : [undefined, undefined];
      const send = (key: string | undefined) => t.request({ method: 'POST', url: '/v1/sandbox/crypto-deposits', idempotencyKey: key, body });
      const answers = await Promise.all(keys.map(send));
      expect(answers.map((answer) => answer.status).sort(), JSON.stringify(answers.map((answer) => answer.body))).toEqual([409, 422]);
      const named = answers.map((answer) => /crypto transaction ([0-9a-f-]{36})/.exec(answer.status === 422 ? answer.body.details[0].message : answer.body.message)?.[1]);
      expect(named[0]).toBeDefined();
      expect(named[0]).toBe(named[1]);
      expect(await records(named[0] as string)).toHaveLength(1);
      for (const [index, key] of keys.entries()) {
        if (key === undefined) continue;
        const replayed = await send(key);
        expect(replayed.headers['idempotent-replayed']).toBe('true');
        expect([replayed.status, replayed.body.code, replayed.body.message]).toEqual([answers[index]?.status, answers[index]?.body.code, answers[index]?.body.message]);
      }
    }
    const failed = await t.request({ url: `/v1/digital/transactions?walletId=${walletId}&status=FAILED` });
    expect(failed.body.data).toHaveLength(6);
  });
});

describe('deposits: one chain transaction sent at once under two spellings of its hash (2026-12-07)', () => {
  // Until 2026-12-07 each found no record of the other (the unique index compares the hash as
  // stored) and both were kept: two FAILED records, or a credit and a FAILED record, of one chain
  // transaction. On PGlite the requests run one after the other.
  it('refused both ways (BTC to an Ethereum address, `0x…` and bare): one FAILED record, the other answer 409 naming it', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDC');
    for (let pair = 0; pair < 6; pair++) {
      const bare = `${pair.toString(16).padStart(2, '0')}${'9a'.repeat(31)}`;
      const answers = await Promise.all([`0x${bare}`, bare.toUpperCase()].map((txHash) => cryptoDeposit(t, { address, asset: 'BTC', amount: '1', txHash })));
      expect(answers.map((answer) => answer.status).sort(), JSON.stringify(answers.map((answer) => answer.body))).toEqual([409, 422]);
    }
    const all = await t.request({ url: `/v1/digital/transactions?walletId=${walletId}` });
    expect(all.body.data).toHaveLength(6);
  });

  it('taken (USDC, `0x…`) and refused (BTC, bare) at once: one record of the chain transaction, never a credit and a FAILED record', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'USDC');
    for (let pair = 0; pair < 6; pair++) {
      const bare = `${pair.toString(16).padStart(2, '0')}${'5c'.repeat(31)}`;
      const answers = await Promise.all([
        cryptoDeposit(t, { address, asset: 'USDC', amount: '1', confirmations: 100, txHash: `0x${bare}` }),
        cryptoDeposit(t, { address, asset: 'BTC', amount: '1', txHash: bare }),
      ]);
      const statuses = answers.map((answer) => answer.status);
      expect([[201, 409], [409, 422]], JSON.stringify(answers.map((answer) => answer.body))).toContainEqual(statuses);
    }
    const all = await t.request({ url: `/v1/digital/transactions?walletId=${walletId}` });
    expect(all.body.data).toHaveLength(6);
    await expectLedgerClean(t);
  });
});

describe('deposits: refused', () => {
  const unknownAddress = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
  it.each([
    [{ asset: 'USD', amount: '1.00' }, 400, 'asset'],
    [{ asset: 'BTC', amount: '0.000000001' }, 400, 'amount'],
    [{ asset: 'BTC', amount: '-1' }, 400, 'amount'],
    [{ asset: 'BTC', amount: '1', network: 'DOGE' }, 400, 'network'],
    [{ asset: 'BTC', amount: '1', network: 'ETHEREUM' }, 400, 'network'],
    [{ asset: 'BTC', amount: '1', txHash: 'xyz' }, 400, 'txHash'],
    [{ asset: 'BTC', amount: '1', fromAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }, 400, 'fromAddress'],
    // A sender on another network is named as a sender, not advised as a withdrawal's recipient.
    [{ asset: 'BTC', amount: '1', fromAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }, 400, 'a deposit on BITCOIN comes from a BITCOIN address'],
    [{ asset: 'BTC', amount: '1', confirmations: -1 }, 400, 'confirmations'],
  ])('%j → %i naming %s', async (body, status, field) => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'BTC');
    const response = await cryptoDeposit(t, { address, ...body });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(JSON.stringify(response.body.details)).toContain(field);
    expect(await balanceOf(t, walletId, 'BTC')).toMatchObject({ PENDING: '0.00' });
  });

  it('404 for an address that is not one of the client\'s (unknown, or another client\'s)', async () => {
    expect((await cryptoDeposit(t, { address: unknownAddress, asset: 'BTC', amount: '1' })).status).toBe(404);
    const theirs = await addressOf(t, await newWallet(t, t.clientB), 'BTC', undefined, t.clientB);
    expect((await cryptoDeposit(t, { address: theirs, asset: 'BTC', amount: '1' })).status).toBe(404);
  });

  it('409 for the same chain transaction paid to the same address twice (no double credit)', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'BTC');
    const txHash = 'ab'.repeat(32);
    expect((await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.1', txHash })).status).toBe(201);
    const again = await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.1', txHash });
    expect(again.status).toBe(409);
    expect(await balanceOf(t, walletId, 'BTC')).toMatchObject({ PENDING: '0.10000000' });
  });
});

// A server restarted with another OPENBAAS_BITCOIN_NETWORK keeps crediting the addresses it made
// before (docs/crypto.md): their senders are checked against the address's network, not the
// server's current one (until the thirty-fourth session it was the server's; found by an audit).
describe('deposits: an address made on the other Bitcoin network', () => {
  it('takes a sender of its network and refuses one of the server\'s current network', async () => {
    const walletId = await newWallet(t);
    const made = await addressOf(t, walletId, 'BTC');
    expect(made).toMatch(/^tb1/);
    // The address a mainnet server made (BIP-173's P2WPKH vector), on a server now on testnet.
    const mainnetAddress = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    await t.deps.db.updateTable('crypto_addresses').set({ address: mainnetAddress }).where('client_id', '=', t.clientA.id).where('wallet_id', '=', walletId).execute();
    const accepted = await cryptoDeposit(t, { address: mainnetAddress, asset: 'BTC', amount: '0.1', fromAddress: '1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    const refused = await cryptoDeposit(t, { address: mainnetAddress, asset: 'BTC', amount: '0.1', fromAddress: 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body).toMatchObject({ code: 'ADDRESS_WRONG_NETWORK', details: [{ field: 'fromAddress', message: expect.stringContaining('the address it pays is on Bitcoin mainnet') }] });
    expect(await balanceOf(t, walletId, 'BTC')).toMatchObject({ PENDING: '0.10000000' });
  });
});

describe('sandbox chain controls: refused', () => {
  it.each([
    ['/v1/sandbox/chains/DOGE/blocks', { count: 1 }, 'network'],
    ['/v1/sandbox/chains/bitcoin/blocks', { count: 1 }, 'network'],
    ['/v1/sandbox/chains/BITCOIN/blocks', { count: 0 }, 'count'],
    ['/v1/sandbox/chains/BITCOIN/blocks', { count: 1001 }, 'count'],
    ['/v1/sandbox/chains/BITCOIN/blocks', {}, 'count'],
  ])('%s %j → 400 naming %s', async (url, body, field) => {
    const response = await t.request({ method: 'POST', url, body });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(JSON.stringify(response.body.details)).toContain(field);
  });

  it('confirm: 400 for 0 or more than 1000 confirmations; 404 for an unknown or malformed id', async () => {
    const walletId = await newWallet(t);
    const deposit = (await cryptoDeposit(t, { address: await addressOf(t, walletId, 'BTC'), asset: 'BTC', amount: '0.1' })).body.data;
    for (const confirmations of [0, 1001]) {
      const response = await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/confirm`, body: { confirmations } });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body.details)).toContain('confirmations');
    }
    for (const id of ['0190f1f2-0000-7000-8000-000000000000', 'nope']) {
      expect((await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${id}/confirm` })).status).toBe(404);
      expect((await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${id}/fail` })).status).toBe(404);
      expect((await t.request({ url: `/v1/digital/transactions/${id}` })).status).toBe(404);
    }
    await t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/fail` });
  });
});

describe('deposits: a block and a confirm call at once', () => {
  it('the deposit is credited once, whichever wins', async () => {
    const walletId = await newWallet(t);
    const address = await addressOf(t, walletId, 'BTC');
    const deposits = [];
    for (let index = 0; index < 5; index++) deposits.push((await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.01000000', confirmations: 2 })).body.data);
    const results = await Promise.all([
      t.request({ method: 'POST', url: '/v1/sandbox/chains/BITCOIN/blocks', body: { count: 1 } }),
      ...deposits.map((deposit) => t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${deposit.id}/confirm` })),
    ]);
    expect(results[0]?.status, JSON.stringify(results[0]?.body)).toBe(200);
    for (const result of results.slice(1)) expect([200, 409]).toContain(result.status);
    expect(await balanceOf(t, walletId, 'BTC')).toEqual({ AVAILABLE: '0.05000000', RESERVED: '0.00000000', PENDING: '0.00000000' });
    for (const deposit of deposits) {
      const [group] = await records(deposit.id);
      expect(group.children.filter((child: { type: string }) => child.type === 'CRYPTO_DEPOSIT_SUCCESS')).toHaveLength(1);
    }
  });
});
