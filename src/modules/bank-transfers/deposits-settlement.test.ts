import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import {
  assignDedicated,
  assignVrn,
  balanceOf,
  bankEventsOf,
  deposit,
  depositBody,
  expectLedgerClean,
  fund,
  linkedWallet,
  sender,
  settle,
  withdrawalBody,
} from '../../../test/bank/fixtures.js';
import { verifyLedger } from '../ledger/index.js';
import { failBankTransaction, runDueSettlements } from './index.js';
import { withTransaction } from '../../platform/db/transaction.js';

let t: TestContext;
const delayMs = 60_000;

beforeAll(async () => {
  t = await createTestApp({ env: { SANDBOX_BANK_SETTLEMENT_DELAY_MS: String(delayMs) } });
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  // Each test starts with nothing due: what a test left pending settles now.
  t.clock.advance(delayMs);
  await runDueSettlements(t.deps);
  await expectLedgerClean(t);
});

const masterAccount = '8000000001';
const fullSender = {
  name: 'Babbage Engines Ltd',
  givenName: 'Charles',
  surname: 'Babbage',
  accountNumber: '000111222333',
  swiftCode: 'barcgb22',
  routingNumber: null,
  financialInstitutionId: null,
  street1: '1 Dorset Street',
  street2: 'Marylebone',
  cityCounty: 'London',
  stateRegion: 'Greater London',
  countryCode: 'GB',
  zip: 'W1U 4EG',
  addressLine: null,
};

const sendDeposit = (body: Record<string, unknown>) => t.request({ method: 'POST', url: '/v1/sandbox/bank-deposits', body });

/** Moves the sandbox clock past the settlement delay and runs the settlement worker once. */
async function settleByTime(): Promise<number> {
  t.clock.advance(delayMs);
  return runDueSettlements(t.deps);
}

describe('deposit routing', () => {
  it('to the virtual account number', async () => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, '100.00');
    expect(received).toMatchObject({ type: 'DEPOSIT_INITIATED', status: 'PENDING', walletId: wallet.walletId, receivingAccountNumber: wallet.virtualAccountNumber });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '100.00' });
  });

  it('to the dedicated account number', async () => {
    const wallet = await linkedWallet(t);
    const dedicated = await assignDedicated(t, wallet);
    const received = await deposit(t, dedicated, '20.00', { network: 'FEDWIRE' });
    expect(received).toMatchObject({ walletId: wallet.walletId, bankNetwork: 'FEDWIRE', receivingAccountNumber: dedicated });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '20.00' });
  });

  it('to the VRN', async () => {
    const wallet = await linkedWallet(t);
    const vrn = await assignVrn(t, wallet);
    const received = await deposit(t, vrn, '30.00');
    expect(received).toMatchObject({ walletId: wallet.walletId, bankNetwork: 'ACH' });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '30.00' });
  });

  it('to the master account with the reference in the memo', async () => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, masterAccount, '40.00', { network: 'FEDWIRE', memo: `Ref ${wallet.virtualAccountNumber} rent` });
    expect(received).toMatchObject({ walletId: wallet.walletId, status: 'PENDING', remittanceMemo: `Ref ${wallet.virtualAccountNumber} rent` });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '40.00' });
    const stored = await t.deps.db.selectFrom('bank_transfers').select('routed_by').where('id', '=', received.parentBankTransactionId).executeTakeFirstOrThrow();
    expect(stored.routed_by).toBe('MASTER_ACCOUNT_REFERENCE');
  });

  it('to the master account with a memo naming two wallets: returned (AC03), nothing credited to either; one named twice is routed', async () => {
    const first = await linkedWallet(t);
    const second = await linkedWallet(t);
    const response = await sendDeposit(depositBody(masterAccount, '45.00', { network: 'FEDWIRE', memo: `Ref ${first.virtualAccountNumber} ${second.virtualAccountNumber}` }));
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({ type: 'DEPOSIT_FAILURE', status: 'FAILED', walletId: null, returnCode: 'AC03' });
    // The reason says the memo named two (until 2026-12-03 it said none; found by an audit).
    expect(response.body.data.failureReason).toContain(`master account ${masterAccount} whose memo names 2 wallets`);
    for (const wallet of [first, second]) expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
    const twice = await deposit(t, masterAccount, '5.00', { network: 'FEDWIRE', memo: `${second.virtualAccountNumber} / ${second.virtualAccountNumber}` });
    expect(twice).toMatchObject({ walletId: second.walletId, status: 'PENDING' });
  });

  it.each([
    ['an unknown account number', '700000999998', 'ACH', 'R03'],
    ['the master account without a reference', masterAccount, 'FEDWIRE', 'AC03'],
    ['the master account with a reference nobody has', masterAccount, 'SWIFT', 'AC03'],
    ['a number that is not even digits', 'ABC123', null, 'AC03'],
  ] as const)('unroutable: %s → returned, FAILED record and event, nothing credited', async (_name, number, network, returnCode) => {
    const before = await t.request({ url: '/v1/events?limit=1&type=BANK_DEPOSIT_TRANSACTION_FAILED' });
    const response = await sendDeposit(depositBody(number, '55.00', { network, memo: 'Ref 700000000000' }));
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.message).toMatch(/could not be routed/);
    expect(response.body.data).toMatchObject({
      type: 'DEPOSIT_FAILURE',
      status: 'FAILED',
      walletId: null,
      returnCode,
      amount: '55.00',
      bankNetwork: network ?? 'UNSPECIFIED',
      receivingAccountNumber: number,
    });
    const events = await bankEventsOf(t, response.body.data.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_DEPOSIT_TRANSACTION_FAILED']);
    expect(events[0].data).toMatchObject({ walletId: null, bankTransactionId: response.body.data.id, amount: '55.00', returnCode });
    const after = await t.request({ url: '/v1/events?limit=1&type=BANK_DEPOSIT_TRANSACTION_FAILED' });
    expect(after.body.pagination.totalResults).toBe(before.body.pagination.totalResults + 1);
    // The money passed through suspense and straight back: both movements are on the ledger, netting to zero.
    const transfers = await t.deps.db
      .selectFrom('ledger_transfers')
      .select(['id', 'description'])
      .where('client_id', '=', t.clientA.id)
      .where('parent_transaction_id', '=', response.body.data.parentBankTransactionId)
      .orderBy('id')
      .execute();
    expect(transfers.map((transfer) => transfer.description)).toEqual([
      expect.stringMatching(/received into suspense/),
      expect.stringMatching(new RegExp(`returned to the sender \\(${returnCode}\\)`)),
    ]);
    // The failed record can be read back and listed.
    const read = await t.request({ url: `/v1/baas/transactions/${response.body.data.id}` });
    expect(read.body.data.status).toBe('FAILED');
  });

  it("another client's account number is unroutable for this client (and that client sees nothing)", async () => {
    const foreign = await linkedWallet(t, t.clientB);
    const response = await sendDeposit(depositBody(foreign.virtualAccountNumber, '5.00'));
    expect(response.body.data.status).toBe('FAILED');
    expect(await balanceOf(t, foreign.walletId, 'USD', t.clientB)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
    const clientBEvents = await t.request({ url: '/v1/events?type=BANK_DEPOSIT_TRANSACTION_FAILED', key: t.clientB.key });
    expect(clientBEvents.body.data).toEqual([]);
  });

  it('accepts USD_TEST, and refuses other assets and malformed sender identifiers', async () => {
    const wallet = await linkedWallet(t);
    expect((await sendDeposit(depositBody(wallet.virtualAccountNumber, '1.00', { asset: 'USD_TEST' }))).body.data.asset).toBe('USD_TEST');
    const eur = await sendDeposit(depositBody(wallet.virtualAccountNumber, '1.00', { asset: 'EUR' }));
    expect(eur.status).toBe(400);
    expect(eur.body.details[0].field).toBe('asset');
    const badRouting = await sendDeposit(depositBody(wallet.virtualAccountNumber, '1.00', { counterparty: { ...sender, routingNumber: '021000022' } }));
    expect(badRouting.status).toBe(400);
    expect(badRouting.body).toMatchObject({ code: 'INVALID_ROUTING_NUMBER', details: [{ field: 'counterparty.routingNumber' }] });
    const number = await sendDeposit({ ...depositBody(wallet.virtualAccountNumber, '1.00'), amount: 12 });
    expect(number.status).toBe(400);
    expect(number.body.details[0].field).toBe('amount');
    const missingSender = await sendDeposit({ accountNumber: wallet.virtualAccountNumber, amount: '1.00', asset: 'USD' });
    expect(missingSender.status).toBe(400);
    expect(missingSender.body.details[0].field).toBe('counterparty');
  });

  it('refuses control and invisible formatting characters in every text field, naming each at once, and receives nothing', async () => {
    const wallet = await linkedWallet(t);
    const before = await t.request({ url: '/v1/events?type=BANK_DEPOSIT_TRANSACTION_PENDING' });
    const response = await sendDeposit(
      depositBody(wallet.virtualAccountNumber, '1.00', {
        counterparty: { ...fullSender, name: 'Babbage \u202eLtd', surname: 'Bab\u200bbage', street1: '1 Dorset\nStreet', addressLine: '\u2028' },
        memo: 'Salary\u0007',
      }),
    );
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual([
      'counterparty.name',
      'counterparty.surname',
      'counterparty.street1',
      'counterparty.addressLine',
      'memo',
    ]);
    expect(response.body.details[0].message).toContain('U+202E');
    const blank = await sendDeposit(depositBody(wallet.virtualAccountNumber, '1.00', { counterparty: { ...sender, name: '   ' } }));
    expect(blank.status).toBe(400);
    expect(blank.body.details).toEqual([{ field: 'counterparty.name', message: 'must not be empty or only white space' }]);
    const hiddenTarget = await sendDeposit(depositBody(`${wallet.virtualAccountNumber}\u200b`, '1.00'));
    expect(hiddenTarget.status).toBe(400);
    expect(hiddenTarget.body.details[0].field).toBe('accountNumber');
    expect(await balanceOf(t, wallet.walletId)).toMatchObject({ PENDING: '0.00', AVAILABLE: '0.00' });
    const after = await t.request({ url: '/v1/events?type=BANK_DEPOSIT_TRANSACTION_PENDING' });
    expect(after.body.pagination.totalResults).toBe(before.body.pagination.totalResults);
    const accented = await sendDeposit(depositBody(wallet.virtualAccountNumber, '1.00', { counterparty: { ...fullSender, name: 'Zoë Ångström 株式会社' } }));
    expect(accented.status, JSON.stringify(accented.body)).toBe(201);
    expect(accented.body.data.counterparty.name).toBe('Zoë Ångström 株式会社');
  });
});

describe('deposit lifecycle', () => {
  it('PENDING → COMPLETED by the sandbox clock: balances at each step, events in order with every payload field', async () => {
    const wallet = await linkedWallet(t);
    const response = await sendDeposit({ accountNumber: wallet.virtualAccountNumber, amount: '250.00', asset: 'USD', network: 'SWIFT', counterparty: fullSender, memo: 'Invoice 7' });
    expect(response.status).toBe(201);
    const received = response.body.data;
    expect(received.counterparty).toEqual({ ...fullSender, swiftCode: 'BARCGB22' });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '250.00' });

    // Not due yet: a minute minus a millisecond changes nothing.
    t.clock.advance(delayMs - 1);
    expect(await runDueSettlements(t.deps)).toBe(0);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '250.00' });
    t.clock.advance(1);
    expect(await runDueSettlements(t.deps)).toBe(1);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '250.00', RESERVED: '0.00', PENDING: '0.00' });
    // Both wallet records carry the memo (the CLEARING record had no note until 2026-12-06).
    const records = await t.request({ url: `/v1/transactions?parentBankTransactionId=${received.parentBankTransactionId}` });
    expect(records.body.data.map((record: { purpose: string; note: string | null }) => `${record.purpose} ${record.note}`)).toEqual(['CLEARING Invoice 7', 'PENDING_CREDIT Invoice 7']);

    const events = await bankEventsOf(t, received.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_DEPOSIT_TRANSACTION_PENDING', 'BANK_DEPOSIT_TRANSACTION_COMPLETED']);
    const expectedCounterparty = { ...fullSender, swiftCode: 'BARCGB22' };
    expect(events[0].data).toEqual({
      walletId: wallet.walletId,
      bankTransactionId: received.id,
      parentBankTransactionId: received.parentBankTransactionId,
      amount: '250.00',
      asset: 'USD',
      bankNetwork: 'SWIFT',
      counterparty: expectedCounterparty,
      traceId: response.body.traceId,
    });
    const list = await t.request({ url: `/v1/baas/transactions?walletId=${wallet.walletId}` });
    const completedChild = list.body.data[0].children[1];
    expect(completedChild).toMatchObject({ type: 'DEPOSIT_SUCCESS', status: 'COMPLETED' });
    expect(events[1].data).toEqual({
      walletId: wallet.walletId,
      bankTransactionId: completedChild.id,
      parentBankTransactionId: received.parentBankTransactionId,
      amount: '250.00',
      asset: 'USD',
      bankNetwork: 'SWIFT',
      counterparty: expectedCounterparty,
      traceId: expect.any(String),
    });
  });

  it('PENDING → FAILED by the fail control (child id): the pending amount goes away, FAILED event with the return code', async () => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, '70.00');
    const failed = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${received.id}/fail`, body: { returnCode: 'R10', reason: 'Sender says not authorized' } });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body.data).toMatchObject({ type: 'DEPOSIT_FAILURE', status: 'FAILED', returnCode: 'R10', failureReason: 'Sender says not authorized' });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
    const history = await t.request({ url: `/v1/transactions?parentBankTransactionId=${received.parentBankTransactionId}` });
    expect(history.body.data.map((record: { purpose: string; status: string }) => `${record.purpose} ${record.status}`)).toEqual(['PENDING_FAILURE FAILED', 'PENDING_CREDIT PENDING']);
    const events = await bankEventsOf(t, received.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_DEPOSIT_TRANSACTION_PENDING', 'BANK_DEPOSIT_TRANSACTION_FAILED']);
    expect(events[1].data).toMatchObject({ walletId: wallet.walletId, bankTransactionId: failed.body.data.id, returnCode: 'R10', counterparty: { name: sender.name } });
    // Nothing is left for the worker.
    expect(await settleByTime()).toBe(0);
  });

  it('a sender account ending in a return code (magic value) makes the deposit come back when due', async () => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, '15.00', { counterparty: { ...sender, accountNumber: '123456R02' } });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '15.00' });
    expect(await settleByTime()).toBe(1);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
    const read = await t.request({ url: `/v1/baas/transactions/${received.parentBankTransactionId}` });
    expect(read.body.data).toMatchObject({ type: 'DEPOSIT_FAILURE', returnCode: 'R02', failureReason: 'Account closed' });
  });
});

describe('withdrawal lifecycle', () => {
  it('PENDING → COMPLETED: the reserved amount leaves, COMPLETED event; a FedWire withdrawal reports FEDWIRE', async () => {
    const wallet = await linkedWallet(t);
    await fund(t, wallet, '100.00');
    const response = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '60.00', transferNetwork: 'FEDWIRE_DOMESTIC' }) });
    const initiated = response.body.data;
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '40.00', RESERVED: '60.00', PENDING: '0.00' });
    const settled = await settle(t, initiated.parentBankTransactionId);
    expect(settled).toMatchObject({ type: 'WITHDRAWAL_SUCCESS', status: 'COMPLETED', bankNetwork: 'FEDWIRE' });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '40.00', RESERVED: '0.00', PENDING: '0.00' });
    const events = await bankEventsOf(t, initiated.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_WITHDRAWAL_TRANSACTION_PENDING', 'BANK_WITHDRAWAL_TRANSACTION_COMPLETED']);
    expect(events[1].data).toEqual({
      walletId: wallet.walletId,
      bankTransactionId: settled.id,
      parentBankTransactionId: initiated.parentBankTransactionId,
      amount: '60.00',
      asset: 'USD',
      bankNetwork: 'FEDWIRE',
      counterparty: null,
      traceId: expect.any(String),
    });
    // The endToEndId is a Fedwire IMAD: date, input source, 6-digit sequence.
    expect(initiated.endToEndId).toMatch(/^20260301OBSBSBX1[0-9]{6}$/);
  });

  it('PENDING → FAILED: the hold is released in full, FAILED event with the return code', async () => {
    const wallet = await linkedWallet(t);
    await fund(t, wallet, '100.00');
    const initiated = (await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '99.99' }) })).body.data;
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.01', RESERVED: '99.99', PENDING: '0.00' });
    const failed = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${initiated.parentBankTransactionId}/fail`, body: {} });
    expect(failed.body.data).toMatchObject({ type: 'WITHDRAWAL_FAILURE', status: 'FAILED', returnCode: 'R03', failureReason: 'No account or unable to locate account' });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '100.00', RESERVED: '0.00', PENDING: '0.00' });
    // The wallet history ends FAILED, as a returned deposit's does.
    const history = await t.request({ url: `/v1/transactions?parentBankTransactionId=${initiated.parentBankTransactionId}` });
    expect(history.body.data.map((record: { purpose: string; status: string }) => `${record.purpose} ${record.status}`)).toEqual(['RELEASE FAILED', 'HOLD PENDING']);
    const events = await bankEventsOf(t, initiated.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_WITHDRAWAL_TRANSACTION_PENDING', 'BANK_WITHDRAWAL_TRANSACTION_FAILED']);
    expect(events[1].data).toMatchObject({ walletId: wallet.walletId, bankTransactionId: failed.body.data.id, counterparty: null, returnCode: 'R03', bankNetwork: 'ACH' });
    // The catalogue (GET /v1/events/types, docs/webhooks.md, the SDK) lists every field the events carry.
    const catalogue = (await t.request({ url: '/v1/events/types' })).body.data as Array<{ type: string; payloadSchema: { properties: Record<string, unknown> } }>;
    for (const event of events) {
      const listed = Object.keys(catalogue.find((entry) => entry.type === event.type)?.payloadSchema.properties ?? {});
      expect(Object.keys(event.data).filter((field) => !listed.includes(field)), event.type).toEqual([]);
    }
  });

  it.each([
    ['ACH_DOMESTIC', { routingNumber: '021000021' }, '000123456R01', 'R01', 'Insufficient funds'],
    ['SWIFT', { routingNumber: undefined, bicSwiftCode: 'DEUTDEFF' }, '7654321AC04', 'AC04', 'Closed account number'],
    ['FEDWIRE_DOMESTIC', { routingNumber: '021000021' }, '99RR01', 'RR01', 'Missing debtor account or identification'],
  ] as const)('%s to an account ending in a return code (magic value) comes back with it when due', async (network, bank, accountNumber, code, reason) => {
    const wallet = await linkedWallet(t);
    await fund(t, wallet, '10.00');
    const initiated = (await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '10.00', transferNetwork: network, ...bank, accountNumber }) })).body.data;
    expect(initiated.status).toBe('PENDING');
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '10.00', PENDING: '0.00' });
    expect(await settleByTime()).toBe(1);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '10.00', RESERVED: '0.00', PENDING: '0.00' });
    const events = await bankEventsOf(t, initiated.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_WITHDRAWAL_TRANSACTION_PENDING', 'BANK_WITHDRAWAL_TRANSACTION_FAILED']);
    expect(events[1].data).toMatchObject({ returnCode: code, failureReason: reason });
  });

  /** A wallet funded with `funded`, and a withdrawal of `amount` from it settled by the rail's delay. */
  async function settledWithdrawal(funded: string, amount: string) {
    const wallet = await linkedWallet(t);
    await fund(t, wallet, funded);
    const initiated = (await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount }) })).body.data;
    expect(await settleByTime()).toBe(1);
    return { wallet, initiated };
  }

  it('COMPLETED → FAILED: a settled withdrawal that comes back (a return after settlement) is credited back once, FAILED event with the return code', async () => {
    const { wallet, initiated } = await settledWithdrawal('100.00', '60.00');
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '40.00', RESERVED: '0.00', PENDING: '0.00' });
    // Until 2026-12-03: 409 BANK_TRANSFER_NOT_PENDING, and the money never came back.
    const returned = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${initiated.parentBankTransactionId}/fail`, body: { returnCode: 'R02' } });
    expect(returned.status, JSON.stringify(returned.body)).toBe(200);
    expect(returned.body.data).toMatchObject({ type: 'WITHDRAWAL_FAILURE', status: 'FAILED', returnCode: 'R02', failureReason: 'Account closed', amount: '60.00' });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '100.00', RESERVED: '0.00', PENDING: '0.00' });
    const payment = (await t.request({ url: `/v1/baas/transactions?walletId=${wallet.walletId}` })).body.data.find((item: { id: string }) => item.id === initiated.parentBankTransactionId);
    expect(payment).toMatchObject({ status: 'FAILED', returnCode: 'R02' });
    expect(payment.children.map((child: { type: string }) => child.type)).toEqual(['WITHDRAWAL_INITIATED', 'WITHDRAWAL_SUCCESS', 'WITHDRAWAL_FAILURE']);
    const history = await t.request({ url: `/v1/transactions?parentBankTransactionId=${initiated.parentBankTransactionId}` });
    expect(history.body.data.map((record: { purpose: string; operation: string }) => `${record.purpose} ${record.operation}`)).toEqual(['WITHDRAWAL_RETURN CREDIT', 'CAPTURE DEBIT', 'HOLD DEBIT']);
    const events = await bankEventsOf(t, initiated.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_WITHDRAWAL_TRANSACTION_PENDING', 'BANK_WITHDRAWAL_TRANSACTION_COMPLETED', 'BANK_WITHDRAWAL_TRANSACTION_FAILED']);
    expect(events[2].data).toMatchObject({ bankTransactionId: returned.body.data.id, returnCode: 'R02' });
    // Once: a second return, or a settle, finds it FAILED.
    for (const action of ['fail', 'settle']) {
      const again = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${initiated.parentBankTransactionId}/${action}`, body: {} });
      expect(again.status, action).toBe(409);
      expect(again.body.code).toBe('BANK_TRANSFER_NOT_PENDING');
    }
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '100.00', RESERVED: '0.00', PENDING: '0.00' });
    await expectLedgerClean(t);
  });

  it('a return whose request began before the settlement (it waited for the row lock) is dated after it: GET answers it, and the children and events come in that order', async () => {
    const { wallet, initiated } = await settledWithdrawal('20.00', '20.00');
    const settledAt = (await t.request({ url: `/v1/baas/transactions/${initiated.parentBankTransactionId}` })).body.data.createdAt as string;
    // The return's request time, 2 seconds before the settlement, as a request that arrived
    // first on another process and waited behind it for the row lock has (the sandbox route's own
    // function, given that moment: a clock here never moves backwards).
    const requestedAt = new Date(Date.parse(settledAt) - 2000);
    const returned = await withTransaction(t.deps.db, (tx) =>
      failBankTransaction(tx, { clientId: t.clientA.id, traceId: 'late-return', now: requestedAt }, initiated.parentBankTransactionId, { returnCode: 'R02' }),
    );
    expect(Date.parse(returned.createdAt)).toBeGreaterThan(Date.parse(settledAt));
    expect((await t.request({ url: `/v1/baas/transactions/${initiated.parentBankTransactionId}` })).body.data).toMatchObject({ id: returned.id, type: 'WITHDRAWAL_FAILURE', status: 'FAILED' });
    const payments = (await t.request({ url: `/v1/baas/transactions?type=WITHDRAWAL_FAILURE&walletId=${wallet.walletId}` })).body.data;
    expect(payments.map((item: { id: string }) => item.id)).toEqual([initiated.parentBankTransactionId]);
    expect(payments[0].children.map((child: { type: string }) => child.type)).toEqual(['WITHDRAWAL_INITIATED', 'WITHDRAWAL_SUCCESS', 'WITHDRAWAL_FAILURE']);
    const events = await bankEventsOf(t, initiated.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_WITHDRAWAL_TRANSACTION_PENDING', 'BANK_WITHDRAWAL_TRANSACTION_COMPLETED', 'BANK_WITHDRAWAL_TRANSACTION_FAILED']);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '20.00', RESERVED: '0.00', PENDING: '0.00' });
    await expectLedgerClean(t);
  });

  it('settles by itself after the delay when nobody intervenes', async () => {
    const { wallet, initiated } = await settledWithdrawal('5.00', '5.00');
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
    expect((await t.request({ url: `/v1/baas/transactions/${initiated.parentBankTransactionId}` })).body.data.type).toBe('WITHDRAWAL_SUCCESS');
  });
});

describe('a settled ACH deposit taken back (a return after settlement)', () => {
  /** A wallet that received `amount` by ACH with the memo `memo`, settled. */
  async function settledDeposit(amount: string) {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, amount, { memo: 'Invoice 77' });
    await settle(t, received.id);
    return { wallet, payment: received.parentBankTransactionId as string };
  }
  const takeBack = (payment: string, body: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${payment}/fail`, body });
  async function overdrawnEntry(walletId: string) {
    return (await verifyLedger(t.deps.db)).overdrawn.wallets.find((wallet) => wallet.walletId === walletId);
  }
  const overdrawnBy = async (walletId: string) => (await overdrawnEntry(walletId))?.overdrawn;

  it('COMPLETED → FAILED: the amount leaves AVAILABLE for the bank once, with a DEPOSIT_FAILURE child, a DEPOSIT_RETURN record and the FAILED event', async () => {
    const { wallet, payment } = await settledDeposit('100.00');
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '100.00', RESERVED: '0.00', PENDING: '0.00' });
    // Until 2026-12-06: 409 BANK_TRANSFER_NOT_PENDING, and the bank could not take the credit back.
    const returned = await takeBack(payment, { returnCode: 'R10' });
    expect(returned.status, JSON.stringify(returned.body)).toBe(200);
    expect(returned.body.data).toMatchObject({ type: 'DEPOSIT_FAILURE', status: 'FAILED', returnCode: 'R10', failureReason: 'Customer advises the originator is not known or not authorized', amount: '100.00', walletId: wallet.walletId });
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
    const listed = (await t.request({ url: `/v1/baas/transactions?walletId=${wallet.walletId}` })).body.data.find((item: { id: string }) => item.id === payment);
    expect(listed).toMatchObject({ status: 'FAILED', type: 'DEPOSIT_FAILURE', returnCode: 'R10' });
    expect(listed.children.map((child: { type: string }) => child.type)).toEqual(['DEPOSIT_INITIATED', 'DEPOSIT_SUCCESS', 'DEPOSIT_FAILURE']);
    const history = (await t.request({ url: `/v1/transactions?parentBankTransactionId=${payment}` })).body.data;
    expect(history.map((record: { purpose: string; operation: string; balanceType: string }) => `${record.purpose} ${record.operation} ${record.balanceType}`)).toEqual([
      'DEPOSIT_RETURN DEBIT AVAILABLE',
      'CLEARING CREDIT AVAILABLE',
      'PENDING_CREDIT CREDIT PENDING',
    ]);
    expect(history[0]).toMatchObject({ type: 'BANK_DEPOSIT', status: 'COMPLETED', amount: '100.00', note: 'Invoice 77', bankTransactionId: returned.body.data.id });
    const byPurpose = await t.request({ url: `/v1/transactions?walletId=${wallet.walletId}&purpose=DEPOSIT_RETURN` });
    expect(byPurpose.status).toBe(200);
    expect(byPurpose.body.data.map((record: { id: string }) => record.id)).toEqual([history[0].id]);
    const events = await bankEventsOf(t, payment);
    expect(events.map((event) => event.type)).toEqual(['BANK_DEPOSIT_TRANSACTION_PENDING', 'BANK_DEPOSIT_TRANSACTION_COMPLETED', 'BANK_DEPOSIT_TRANSACTION_FAILED']);
    expect(events[2].data).toMatchObject({ bankTransactionId: returned.body.data.id, walletId: wallet.walletId, amount: '100.00', returnCode: 'R10' });
    // Once: a second return, or a settle, finds it FAILED, and nothing moves again.
    for (const action of ['fail', 'settle']) {
      const again = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${payment}/${action}`, body: {} });
      expect(again.status, action).toBe(409);
      expect(again.body.code).toBe('BANK_TRANSFER_NOT_PENDING');
    }
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
    expect(await overdrawnBy(wallet.walletId)).toBeUndefined();
    // The ledger transfer says what it was, as a settled withdrawal's return does (until 2026-12-06 it had the memo).
    const transfers = await t.deps.db.selectFrom('ledger_transfers').select(['kind', 'description']).where('parent_transaction_id', '=', payment).orderBy('id').execute();
    expect(transfers.at(-1)).toEqual({ kind: 'HOLD_CAPTURE', description: `settled bank deposit ${payment} returned (R10)` });
    await expectLedgerClean(t);
  });

  it('taken back after the wallet spent it: AVAILABLE goes below zero by what it lacked (ledger verify lists the overdraft), the next credits pay it first, and nothing can be spent meanwhile', async () => {
    const { wallet, payment } = await settledDeposit('100.00');
    const withdrawal = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '70.00' }) });
    expect(withdrawal.status).toBe(201);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '30.00', RESERVED: '70.00', PENDING: '0.00' });

    expect((await takeBack(payment, { returnCode: 'R05' })).status).toBe(200);
    // The reserved 70.00 stays reserved for the withdrawal already sent; AVAILABLE owes the rest.
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '-70.00', RESERVED: '70.00', PENDING: '0.00' });
    // ledger verify names the payment that overdrew it.
    expect(await overdrawnEntry(wallet.walletId)).toMatchObject({ overdrawn: '7000', lastShortfall: { parentTransactionId: payment } });
    await expectLedgerClean(t);

    const refused = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '0.01' }) });
    expect([refused.status, refused.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);
    // Not "0.00 USD available" beside a balance of -70.00 (until 2026-12-06).
    expect(refused.body.message).toBe('Insufficient funds: 0.01 USD needed, none available (the wallet is overdrawn by 70.00 USD).');

    await settle(t, (await deposit(t, wallet.virtualAccountNumber, '50.00')).id);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '-20.00', RESERVED: '70.00', PENDING: '0.00' });
    expect(await overdrawnBy(wallet.walletId)).toBe('2000');
    await settle(t, (await deposit(t, wallet.virtualAccountNumber, '30.00')).id);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '10.00', RESERVED: '70.00', PENDING: '0.00' });
    expect(await overdrawnBy(wallet.walletId)).toBeUndefined();
    await expectLedgerClean(t);
  });

  it('without a return code, R06 ("returned per the originating bank\'s request"), not R03 (the account was found and credited)', async () => {
    const { payment } = await settledDeposit('5.00');
    const returned = await takeBack(payment);
    // Until 2026-12-06 it said R03, "No account or unable to locate account".
    expect(returned.body.data).toMatchObject({ type: 'DEPOSIT_FAILURE', returnCode: 'R06', failureReason: "Returned per the originating bank's request" });
  });

  it.each([['FEDWIRE'], ['SWIFT'], [null]] as const)('a settled %s deposit is final: 409 BANK_TRANSFER_NOT_PENDING, nothing moves', async (network) => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, '12.00', { network, counterparty: { name: 'Ada Lovelace', accountNumber: '12345678' } });
    await settle(t, received.id);
    const refused = await takeBack(received.parentBankTransactionId, { returnCode: 'AC04' });
    expect([refused.status, refused.body.code]).toEqual([409, 'BANK_TRANSFER_NOT_PENDING']);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '12.00', RESERVED: '0.00', PENDING: '0.00' });
    expect((await bankEventsOf(t, received.parentBankTransactionId)).map((event) => event.type)).toEqual(['BANK_DEPOSIT_TRANSACTION_PENDING', 'BANK_DEPOSIT_TRANSACTION_COMPLETED']);
  });
});

describe('sandbox controls', () => {
  it('409 BANK_TRANSFER_NOT_PENDING for a second settle or fail; nothing moves twice', async () => {
    const wallet = await linkedWallet(t);
    // A Fedwire credit is final once settled (an ACH one can still be taken back: above).
    const received = await deposit(t, wallet.virtualAccountNumber, '9.00', { network: 'FEDWIRE' });
    await settle(t, received.id);
    for (const action of ['settle', 'fail']) {
      const again = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${received.parentBankTransactionId}/${action}`, body: action === 'fail' ? {} : undefined });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('BANK_TRANSFER_NOT_PENDING');
    }
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '9.00', RESERVED: '0.00', PENDING: '0.00' });
    expect(await settleByTime()).toBe(0);
  });

  it("404 for an unknown, malformed or other client's id", async () => {
    const foreign = await linkedWallet(t, t.clientB);
    const foreignDeposit = await deposit(t, foreign.virtualAccountNumber, '1.00', {}, t.clientB);
    for (const id of ['019ca945-0a00-74c1-8797-3bfde107f365', 'nope', foreignDeposit.id, foreignDeposit.parentBankTransactionId]) {
      const response = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${id}/settle` });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
    expect(await balanceOf(t, foreign.walletId, 'USD', t.clientB)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '1.00' });
  });

  it('settle refuses an unknown body field as fail does (nothing settles), and takes no body or an empty one', async () => {
    const wallet = await linkedWallet(t);
    const first = await deposit(t, wallet.virtualAccountNumber, '2.00');
    const second = await deposit(t, wallet.virtualAccountNumber, '3.00');
    for (const action of ['settle', 'fail']) {
      const response = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${first.parentBankTransactionId}/${action}`, body: { foo: 1 } });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
      expect(response.body.details).toEqual([{ field: 'foo', message: 'is not a known field' }]);
    }
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '5.00' });
    const empty = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${first.parentBankTransactionId}/settle`, body: {} });
    expect(empty.status, JSON.stringify(empty.body)).toBe(200);
    const none = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${second.parentBankTransactionId}/settle` });
    expect(none.status, JSON.stringify(none.body)).toBe(200);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '5.00', RESERVED: '0.00', PENDING: '0.00' });
  });

  it('null is the same as absent for returnCode and reason', async () => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, '1.00');
    const response = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${received.id}/fail`, body: { returnCode: null, reason: null } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ status: 'FAILED', returnCode: 'R03', failureReason: 'No account or unable to locate account' });
  });

  it('400 for a malformed return code', async () => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, '1.00');
    const response = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${received.id}/fail`, body: { returnCode: 'r 01' } });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('returnCode');
  });

  it('400 for a reason holding control or invisible formatting characters, and the payment stays PENDING', async () => {
    const wallet = await linkedWallet(t);
    const received = await deposit(t, wallet.virtualAccountNumber, '1.00');
    for (const reason of ['Account \u202eclosed', 'Account\nclosed', ' ']) {
      const response = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${received.id}/fail`, body: { returnCode: 'R02', reason } });
      expect(response.status).toBe(400);
      expect(response.body.details[0].field).toBe('reason');
    }
    expect(await balanceOf(t, wallet.walletId)).toMatchObject({ PENDING: '1.00' });
    const failed = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${received.id}/fail`, body: { returnCode: 'R02', reason: 'Compte clôturé' } });
    expect(failed.status).toBe(200);
    expect(failed.body.data).toMatchObject({ status: 'FAILED', failureReason: 'Compte clôturé' });
  });

  it('two workers at once settle each due payment exactly once', async () => {
    const wallet = await linkedWallet(t);
    for (let index = 0; index < 6; index++) await deposit(t, wallet.virtualAccountNumber, '1.00');
    t.clock.advance(delayMs);
    const [first, second] = await Promise.all([runDueSettlements(t.deps), runDueSettlements(t.deps)]);
    expect(first + second).toBe(6);
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '6.00', RESERVED: '0.00', PENDING: '0.00' });
  });
});
