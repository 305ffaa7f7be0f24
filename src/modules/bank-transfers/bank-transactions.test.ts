import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { deposit, expectLedgerClean, fund, linkedWallet, settle, withdrawalBody, type LinkedWallet } from '../../../test/bank/fixtures.js';

let t: TestContext;
let wallet: LinkedWallet;
let second: LinkedWallet;
/** Parent ids: a settled deposit, a failed withdrawal, a pending SWIFT withdrawal, a settled FedWire withdrawal. */
const ids: Record<'deposit' | 'failedWithdrawal' | 'pendingSwift' | 'fedwire', { parent: string; first: string }> = {
  deposit: { parent: '', first: '' },
  failedWithdrawal: { parent: '', first: '' },
  pendingSwift: { parent: '', first: '' },
  fedwire: { parent: '', first: '' },
};
let createdAtOfSecondHalf = '';

beforeAll(async () => {
  t = await createTestApp();
  wallet = await linkedWallet(t);
  second = await linkedWallet(t);
  await fund(t, second, '1.00');

  const received = await deposit(t, wallet.virtualAccountNumber, '500.00');
  await settle(t, received.id);
  ids.deposit = { parent: received.parentBankTransactionId, first: received.id };

  t.clock.advance(3_600_000);
  createdAtOfSecondHalf = t.clock.now().toISOString();
  const withdraw = async (overrides: Record<string, unknown>) =>
    (await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, overrides) })).body.data;
  const failed = await withdraw({ amount: '10.00' });
  await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${failed.id}/fail`, body: { returnCode: 'R02' } });
  ids.failedWithdrawal = { parent: failed.parentBankTransactionId, first: failed.id };
  const swift = await withdraw({ amount: '20.00', transferNetwork: 'SWIFT', routingNumber: undefined, bicSwiftCode: 'BARCGB22', accountNumber: 'GB29NWBK60161331926819' });
  ids.pendingSwift = { parent: swift.parentBankTransactionId, first: swift.id };
  const fedwire = await withdraw({ amount: '30.00', transferNetwork: 'FEDWIRE_DOMESTIC' });
  await settle(t, fedwire.id);
  ids.fedwire = { parent: fedwire.parentBankTransactionId, first: fedwire.id };
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  await expectLedgerClean(t);
});

const list = async (query: string) => {
  const response = await t.request({ url: `/v1/baas/transactions?${query}` });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
};
const parents = (body: { data: { id: string }[] }) => body.data.map((entry) => entry.id);

describe('GET /v1/baas/transactions', () => {
  it('lists payments newest first, each with its current state and its children oldest first', async () => {
    const body = await list(`walletId=${wallet.walletId}`);
    expect(parents(body)).toEqual([ids.fedwire.parent, ids.pendingSwift.parent, ids.failedWithdrawal.parent, ids.deposit.parent]);
    expect(body.pagination).toEqual({ totalResults: 4, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });
    const [fedwire, swift, failed, received] = body.data;
    expect(fedwire).toMatchObject({ parentBankTransactionId: ids.fedwire.parent, type: 'WITHDRAWAL_SUCCESS', status: 'COMPLETED', bankNetwork: 'FEDWIRE', amount: '30.00' });
    expect(fedwire.children.map((child: { type: string }) => child.type)).toEqual(['WITHDRAWAL_INITIATED', 'WITHDRAWAL_SUCCESS']);
    expect(fedwire.children[0].id).toBe(ids.fedwire.first);
    expect(swift).toMatchObject({ type: 'WITHDRAWAL_INITIATED', status: 'PENDING', bankNetwork: 'SWIFT', children: [expect.objectContaining({ id: ids.pendingSwift.first })] });
    expect(failed).toMatchObject({ type: 'WITHDRAWAL_FAILURE', status: 'FAILED', returnCode: 'R02', failureReason: 'Account closed' });
    expect(failed.children.map((child: { status: string }) => child.status)).toEqual(['PENDING', 'FAILED']);
    expect(received).toMatchObject({ direction: 'DEPOSIT', operation: 'CREDIT', type: 'DEPOSIT_SUCCESS', counterparty: { name: 'Charles Babbage' }, beneficiary: null });
  });

  it('filters by type, status, bankNetwork, customer, portfolio and dates', async () => {
    expect(parents(await list(`walletId=${wallet.walletId}&type=DEPOSIT`))).toEqual([ids.deposit.parent]);
    expect(parents(await list(`walletId=${wallet.walletId}&type=WITHDRAWAL`))).toEqual([ids.fedwire.parent, ids.pendingSwift.parent, ids.failedWithdrawal.parent]);
    expect(parents(await list(`walletId=${wallet.walletId}&type=WITHDRAWAL_FAILURE`))).toEqual([ids.failedWithdrawal.parent]);
    expect(parents(await list(`walletId=${wallet.walletId}&type=WITHDRAWAL_INITIATED`))).toEqual([ids.pendingSwift.parent]);
    expect(parents(await list(`walletId=${wallet.walletId}&status=PENDING`))).toEqual([ids.pendingSwift.parent]);
    expect(parents(await list(`walletId=${wallet.walletId}&bankNetwork=ACH`))).toEqual([ids.failedWithdrawal.parent, ids.deposit.parent]);
    expect(parents(await list(`customerId=${wallet.customerId}&bankNetwork=FEDWIRE`))).toEqual([ids.fedwire.parent]);
    expect(parents(await list(`userId=${wallet.customerId}&status=COMPLETED`))).toEqual([ids.fedwire.parent, ids.deposit.parent]);
    expect(parents(await list(`portfolioId=${wallet.portfolioId}&type=DEPOSIT`))).toEqual([ids.deposit.parent]);
    expect(parents(await list(`walletId=${wallet.walletId}&createdAfter=${encodeURIComponent(createdAtOfSecondHalf)}`))).toHaveLength(3);
    expect(parents(await list(`walletId=${wallet.walletId}&createdBefore=${encodeURIComponent(createdAtOfSecondHalf)}`))).toEqual([ids.deposit.parent]);
    expect(parents(await list(`walletId=${second.walletId}`))).toHaveLength(1);
    expect(parents(await list(`customerId=${wallet.customerId}&userId=${second.customerId}`))).toEqual([]);
  });

  it('pages with limit and startAfterId', async () => {
    const page1 = await list(`walletId=${wallet.walletId}&limit=3`);
    expect(page1.pagination).toEqual({ totalResults: 4, totalResultsExact: true, hasMoreResults: true, nextStartAfterId: ids.failedWithdrawal.parent });
    const page2 = await list(`walletId=${wallet.walletId}&limit=3&startAfterId=${page1.pagination.nextStartAfterId}`);
    expect(parents(page2)).toEqual([ids.deposit.parent]);
  });

  it("404 for an unknown or other client's wallet, customer or portfolio; 400 for an unknown filter", async () => {
    const foreign = await linkedWallet(t, t.clientB);
    for (const query of [`walletId=${foreign.walletId}`, 'walletId=nope', `customerId=${foreign.customerId}`, `portfolioId=${foreign.portfolioId}`, 'portfolioId=x']) {
      const response = await t.request({ url: `/v1/baas/transactions?${query}` });
      expect(response.status, query).toBe(404);
    }
    expect((await t.request({ url: '/v1/baas/transactions?currencyCode=USD' })).status).toBe(400);
    expect((await t.request({ url: '/v1/baas/transactions?type=ONLINE' })).status).toBe(400);
  });

  it("never shows another client's payments", async () => {
    const body = await t.request({ url: '/v1/baas/transactions?limit=200', key: t.clientB.key });
    expect(body.body.data.map((entry: { walletId: string | null }) => entry.walletId)).not.toContain(wallet.walletId);
  });
});

describe('GET /v1/baas/transactions/:id', () => {
  it('answers one child record with createdAt and counterparty', async () => {
    const response = await t.request({ url: `/v1/baas/transactions/${ids.deposit.first}` });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id: ids.deposit.first,
      parentBankTransactionId: ids.deposit.parent,
      type: 'DEPOSIT_INITIATED',
      status: 'PENDING',
      counterparty: { name: 'Charles Babbage', accountNumber: '987654321', routingNumber: '021000021', givenName: null },
      createdAt: expect.any(String),
    });
    expect(response.body.data).not.toHaveProperty('children');
    expect(response.body.data).not.toHaveProperty('currencyCode');
  });

  it('answers the latest record for a parent id', async () => {
    const response = await t.request({ url: `/v1/baas/transactions/${ids.failedWithdrawal.parent}` });
    expect(response.body.data).toMatchObject({ type: 'WITHDRAWAL_FAILURE', status: 'FAILED', counterparty: null, returnCode: 'R02' });
  });

  it("404 for unknown, malformed and other clients' ids", async () => {
    for (const id of ['019ca945-0a00-74c1-8797-3bfde107f365', 'withdrawal', ids.deposit.first]) {
      const key = id === ids.deposit.first ? t.clientB.key : t.clientA.key;
      const response = await t.request({ url: `/v1/baas/transactions/${id}`, key });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
  });
});

describe('GET /v1/transactions (the unified wallet history)', () => {
  it('every bank movement has bankTransactionId and parentBankTransactionId, and the filters find them', async () => {
    const byParent = await t.request({ url: `/v1/transactions?parentBankTransactionId=${ids.fedwire.parent}` });
    expect(byParent.status).toBe(200);
    const records = [...byParent.body.data].reverse();
    expect(records.map((record: { purpose: string; balanceType: string; status: string }) => `${record.purpose}/${record.balanceType}/${record.status}`)).toEqual([
      'HOLD/RESERVED/PENDING',
      'CAPTURE/RESERVED/COMPLETED',
    ]);
    for (const record of records) {
      expect(record).toMatchObject({ walletId: wallet.walletId, type: 'BANK_WITHDRAWAL', parentBankTransactionId: ids.fedwire.parent, parentTransactionId: ids.fedwire.parent, amount: '30.00' });
    }
    expect(records[0].bankTransactionId).toBe(ids.fedwire.first);

    const byChild = await t.request({ url: `/v1/transactions?bankTransactionId=${ids.deposit.first}` });
    expect(byChild.body.data).toEqual([expect.objectContaining({ type: 'BANK_DEPOSIT', purpose: 'PENDING_CREDIT', balanceType: 'PENDING', operation: 'CREDIT', amount: '500.00' })]);

    const failed = await t.request({ url: `/v1/transactions?parentBankTransactionId=${ids.failedWithdrawal.parent}` });
    expect(failed.body.data.map((record: { purpose: string }) => record.purpose).reverse()).toEqual(['HOLD', 'RELEASE']);

    const all = await t.request({ url: `/v1/transactions?walletId=${wallet.walletId}&limit=200` });
    for (const record of all.body.data) {
      expect(record.bankTransactionId).not.toBeNull();
      expect(record.parentBankTransactionId).not.toBeNull();
    }
    expect(all.body.pagination.totalResults).toBe(7);
  });

  it('type: a well-shaped type filters (an unknown one answers an empty page); one not of the shape of a type is 400 naming type', async () => {
    const history = (query: string) => t.request({ url: `/v1/transactions?walletId=${wallet.walletId}&${query}` });
    expect((await history('type=BANK_WITHDRAWAL')).body.pagination.totalResults).toBe(5);
    expect((await history('type=BANK_DEPOSIT')).body.pagination.totalResults).toBe(2);
    const unknown = await history('type=FOO');
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ data: [], pagination: { totalResults: 0, hasMoreResults: false, nextStartAfterId: null } });
    expect((await history(`type=A${'B'.repeat(63)}`)).status).toBe(200);
    for (const type of ['bank_deposit', 'Bank_Deposit', '1BANK', '_BANK', 'BANK-DEPOSIT', 'BANK%20DEPOSIT', `A${'B'.repeat(64)}`, '']) {
      const response = await history(`type=${type}`);
      expect(response.status, `${type}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
      expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual(['type']);
    }
  });
});
