/* eslint-disable @typescript-eslint/no-explicit-any */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../../test/harness.js';
import { expectLedgerClean } from '../../../../test/bank/fixtures.js';
import { cardPrograms } from '../../../../test/cards/fixtures.js';
import { authorize, balances, cardEventsOf, cardOfMessage, fundedCard, lifecycle, onParent, panOf, send, walletRecordsOf } from '../../../../test/cards/card-network.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const restaurant = { name: 'JOES DINER', mcc: '5812', city: 'SAN FRANCISCO', state: 'CA', country: 'US' };

/** Sends an 0420 (STAN `stan`) whose DE90 names the refund (0220 or 0200) the sandbox sent, or names nothing (`withoutDe90`); answers the response's DE39. */
async function reverseRefundMessage(cardId: string, refund: any, stan: string, withoutDe90 = false): Promise<string> {
  const { '90': _named, ...fields } = refund.iso.request.fields;
  const { formatOriginalDataElements } = await import('../network/index.js');
  const message = {
    ...fields,
    '0': '0420',
    '2': await panOf(t, cardId),
    '11': stan,
    ...(withoutDe90 ? {} : { '90': formatOriginalDataElements({ mti: refund.iso.request.mti, stan: fields['11'], transmissionDateTime: fields['7'], acquirerId: fields['32'] }) }),
  };
  const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
  return response.body.data.response['39'];
}

/** A message built as the sandbox builds an account verification of the card, with `changes` applied (undefined drops a field). */
async function messageOf(cardId: string, changes: Record<string, string | undefined>): Promise<Record<string, string>> {
  const template = await authorize(t, cardId, { amount: 0 });
  const fields: Record<string, string | undefined> = { '0': template.iso.request.mti, ...template.iso.request.fields, '2': await panOf(t, cardId), ...changes };
  return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
async function atMessageLevel(message: Record<string, string>): Promise<{ code: string; record: any }> {
  const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const id = response.body.data.cardTransactionId as string | null;
  const record = id === null ? null : (await t.request({ url: `/v1/cards/transactions/${id}` })).body.data;
  return { code: response.body.data.response['39'], record };
}
const reference = (ref: string) => `VIS00000${ref}1`;
/** DE90 naming a message built by messageOf (its MTI, STAN, DE7 and acquirer; `as` sends another MTI or acquirer with its STAN and DE7). */
async function de90Of(message: Record<string, string>, as: { mti?: string; acquirerId?: string } = {}): Promise<string> {
  const { formatOriginalDataElements } = await import('../network/index.js');
  return formatOriginalDataElements({ mti: as.mti ?? message['0'] ?? '', stan: message['11'] ?? '', transmissionDateTime: message['7'] ?? '', acquirerId: as.acquirerId ?? message['32'] ?? '' });
}
/** The acquirer identification sent as zeros. */
const zeros = '00000000000';

describe('0100 authorization', () => {
  it('approved: a hold moves AVAILABLE to RESERVED, PENDING record and event, answered 0110 00 with an auth code', async () => {
    const card = await fundedCard(t, '100.00');
    const result = await authorize(t, card.cardId, { amount: 25.5, merchant: restaurant });
    expect(result).toMatchObject({ responseCode: '00', approvedAmount: 25.5, decisionSource: 'SYSTEM', replayed: false });
    expect(result.authCode).toMatch(/^[0-9A-Z]{6}$/);
    expect(result.iso.response.mti).toBe('0110');
    expect(result.iso.response.fields['39']).toBe('00');
    expect(result.iso.response.fields['2']).toBeUndefined();
    expect(result.iso.request.fields['2']).toMatch(/^424242\*{6}\d{4}$/);
    expect(result.iso.packed.startsWith('0110')).toBe(true);
    expect(await balances(t, card.walletId)).toEqual({ AVAILABLE: '74.50', RESERVED: '25.50', PENDING: '0.00' });
    expect(result.record).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'PENDING', amount: 25.5, heldAmount: 25.5, merchant: restaurant, amounts: { transaction: 25.5, transactionCurrency: 'USD' } });
    const events = await cardEventsOf(t, result.parentCardTransactionId);
    expect(events.map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING']);
    expect(events[0].data).toMatchObject({ cardId: card.cardId, type: 'PRE_AUTHORIZATION', amount: 25.5, retrievalReferenceNo: result.rrn, merchant: restaurant });
    const records = await walletRecordsOf(t, result.parentCardTransactionId);
    expect(records.map((record) => [record.type, record.purpose, record.balanceType])).toEqual([['DEBIT_CARD_HOLD', 'HOLD', 'RESERVED']]);
  });

  it('amount 0 is an account verification: COMPLETED, no money', async () => {
    const card = await fundedCard(t, '10.00');
    const result = await authorize(t, card.cardId, { amount: 0 });
    expect(result.responseCode).toBe('00');
    expect(result.record).toMatchObject({ type: 'ACCOUNT_VERIFICATION', status: 'COMPLETED', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
  });

  it('processing code 30 is a balance inquiry: DE54 carries the available balance, no money', async () => {
    const card = await fundedCard(t, '42.10');
    const result = await authorize(t, card.cardId, { amount: 1, processingCode: '300000' });
    expect(result.record).toMatchObject({ type: 'BALANCE_INQUIRY', status: 'COMPLETED' });
    expect(result.iso.response.fields['54']).toBe('0002840C000000004210');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '42.10', RESERVED: '0.00' });
  });

  it('a balance beyond the twelve digits of DE54 (forced postings are never refused) is answered as the most DE54 can say, with its sign, never a 500', async () => {
    const card = await fundedCard(t, '10.00');
    for (let index = 0; index < 2; index++) await send(t, `/v1/sandbox/cards/${card.cardId}/force-posts`, { amount: 9999999999.99 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '-19999999989.98' });
    const inquiry = await authorize(t, card.cardId, { amount: 1, processingCode: '300000' });
    expect(inquiry.record).toMatchObject({ type: 'BALANCE_INQUIRY', status: 'COMPLETED' });
    expect(inquiry.iso.response.fields['54']).toBe('0002840D999999999999');
  });

  it('declined for funds: 51, FAILED record and event, no hold', async () => {
    const card = await fundedCard(t, '10.00');
    const result = await authorize(t, card.cardId, { amount: 10.01 });
    expect(result).toMatchObject({ responseCode: '51', approvedAmount: 0, authCode: null });
    expect(result.record).toMatchObject({ status: 'FAILED', declineReason: 'INSUFFICIENT_FUNDS', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
    expect((await cardEventsOf(t, result.parentCardTransactionId)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_FAILED']);
  });

  it('decision order: status 57, expiry 54, limits 61 and 65', async () => {
    const card = await fundedCard(t, '1000.00');
    await t.request({ method: 'PATCH', url: `/v1/cards/${card.cardId}`, body: { status: 'SUSPENDED' } });
    expect((await authorize(t, card.cardId, { amount: 5 })).responseCode).toBe('57');
    await t.request({ method: 'PATCH', url: `/v1/cards/${card.cardId}`, body: { status: 'ACTIVE' } });

    const client = await t.newClient();
    const limited = await fundedCard(t, '1000.00', client);
    const program = (await cardPrograms(t, client))['Standard Debit'];
    await t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, key: client.key, body: { limits: { perTransactionMinor: 10_000, dailyMinor: 15_000, dailyCount: 2 } } });
    expect((await authorize(t, limited.cardId, { amount: 100.01 }, client)).record.declineReason).toBe('EXCEEDS_AMOUNT_LIMIT');
    expect((await authorize(t, limited.cardId, { amount: 100 }, client)).responseCode).toBe('00');
    expect((await authorize(t, limited.cardId, { amount: 50.01 }, client)).responseCode).toBe('61');
    expect((await authorize(t, limited.cardId, { amount: 10 }, client)).responseCode).toBe('00');
    expect((await authorize(t, limited.cardId, { amount: 1 }, client)).responseCode).toBe('65');
  });

  it('an expired card (DE14 or the card itself) answers 54', async () => {
    const card = await fundedCard(t, '50.00');
    const built = await authorize(t, card.cardId, { amount: 1 });
    const message = { ...built.iso.request.fields, '0': '0100', '2': await panOf(t, card.cardId), '11': '000777', '37': '600000000777', '14': '2001' };
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(response.status).toBe(200);
    expect(response.body.data.response['39']).toBe('54');
  });

  it('a transaction type the processor does not handle (DE3 26 original credit, 40 transfer) is declined 12, not taken for a purchase; no money', async () => {
    const card = await fundedCard(t, '100.00');
    const credit = await authorize(t, card.cardId, { amount: 30, processingCode: '260000' });
    expect(credit).toMatchObject({ responseCode: '12', approvedAmount: 0, authCode: null });
    expect(credit.record).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'FAILED', declineReason: 'INVALID_TRANSACTION', amount: 0 });
    const transfer = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 30, processingCode: '400000' });
    expect(transfer.record).toMatchObject({ type: 'PURCHASE', status: 'FAILED', declineReason: 'INVALID_TRANSACTION', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    expect((await cardEventsOf(t, transfer.parentCardTransactionId)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_FAILED']);

    // Naming an open lifecycle (its networkDataRef): declined there, the hold as it was.
    const auth = await authorize(t, card.cardId, { amount: 20 });
    const message = { ...auth.iso.request.fields, '0': '0100', '2': await panOf(t, card.cardId), '3': '110000', '11': '000778', '37': '600000000778' };
    const named = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(named.body.data.response['39']).toBe('12');
    const group = await lifecycle(t, auth.parentCardTransactionId);
    expect(group).toMatchObject({ status: 'PENDING', heldAmount: 20 });
    expect(group.children.map((child: any) => [child.type, child.status, child.responseCode])).toEqual(
      expect.arrayContaining([['PRE_AUTHORIZATION', 'FAILED', '12']]),
    );
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '20.00' });
    // A 0200 naming it the same: declined there, and the completion that follows still finds the hold.
    const financial = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...message, '0': '0200', '3': '400000', '11': '000779', '37': '600000000779' } } });
    expect(financial.body.data.response['39']).toBe('12');
    await onParent(t, auth.parentCardTransactionId, 'completions', {});
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: 20 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '0.00' });

    // Advices of such a type cannot be declined: acknowledged, recorded CANCELLED, nothing held or posted.
    const advices = [
      { mti: '0120', type: 'PRE_AUTHORIZATION', stan: '000790', ref: 'VIS00000ADVICEOFCREDIT121' },
      { mti: '0220', type: 'PRE_AUTH_COMPLETION', stan: '000791', ref: 'VIS00000ADVICEOFCREDIT221' },
    ];
    for (const { mti, type, stan, ref } of advices) {
      const advice = { ...message, '0': mti, '3': '260000', '11': stan, '37': `600000${stan}`, '63': ref };
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: advice } });
      expect(response.body.data.response['39']).toBe('00');
      const record = await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}` });
      expect(record.body.data).toMatchObject({ type, status: 'CANCELLED', amount: 0 });
    }
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '0.00' });
  });

  it('magic amounts: 990.NN answers NN; 990.10 approves half with DE54 type 57', async () => {
    const card = await fundedCard(t, '2000.00');
    for (const code of ['05', '51', '57', '91', '96']) {
      const result = await authorize(t, card.cardId, { amount: Number(`990.${code}`) });
      expect(result.responseCode).toBe(code);
      expect(result.record.status).toBe('FAILED');
    }
    const partial = await authorize(t, card.cardId, { amount: 990.1 });
    expect(partial).toMatchObject({ responseCode: '10', approvedAmount: 495.05 });
    expect(partial.iso.response.fields['4']).toBe('000000049505');
    expect(partial.iso.response.fields['54']).toBe('0057840C000000099010');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1504.95', RESERVED: '495.05' });
    const incapable = await authorize(t, card.cardId, { amount: 990.1, partialApprovalCapable: false });
    expect(incapable.responseCode).toBe('05');
  });

  it('incremental authorization (same networkDataRef) raises the hold', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 20 });
    const increment = await onParent(t, auth.parentCardTransactionId, 'increments', { amount: 15 });
    expect(increment).toMatchObject({ responseCode: '00', parentCardTransactionId: auth.parentCardTransactionId, networkDataRef: auth.networkDataRef });
    expect(increment.record).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'PENDING', amount: 15, heldAmount: 35 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '65.00', RESERVED: '35.00' });
    const tooMuch = await onParent(t, auth.parentCardTransactionId, 'increments', { amount: 65.01 });
    expect(tooMuch.responseCode).toBe('51');
    expect((await lifecycle(t, auth.parentCardTransactionId)).status).toBe('PENDING');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '65.00', RESERVED: '35.00' });
  });

  it('an increment naming a lifecycle declined from the start is declined 57 there: no second lifecycle under its reference', async () => {
    const card = await fundedCard(t, '100.00');
    const declined = await authorize(t, card.cardId, { amount: 990.51 });
    expect(declined.responseCode).toBe('51');
    const increment = await onParent(t, declined.parentCardTransactionId, 'increments', { amount: 10 });
    expect(increment).toMatchObject({ responseCode: '57', parentCardTransactionId: declined.parentCardTransactionId });
    expect(increment.record).toMatchObject({ status: 'FAILED', declineReason: 'TRANSACTION_NOT_PERMITTED', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    const after = await lifecycle(t, declined.parentCardTransactionId);
    expect(after.status).toBe('FAILED');
    expect(after.children).toHaveLength(2);
    const swipes = await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}` });
    expect(swipes.body.data).toHaveLength(1);
  });

  it('duplicates: the same STAN and RRN answers the first answer again; different content answers 94', async () => {
    const card = await fundedCard(t, '100.00');
    const first = await authorize(t, card.cardId, { amount: 10 });
    const message = { ...first.iso.request.fields, '0': '0100', '2': await panOf(t, card.cardId) };
    const again = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(again.body.data.cardTransactionId).toBe(first.cardTransactionId);
    expect(again.body.data.response['38']).toBe(first.authCode);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '90.00', RESERVED: '10.00' });
    const changed = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...message, '4': '000000001100', '63': 'VIS00000ZZZZZZZZZZZZZZZZ1' } } });
    expect(changed.body.data.response['39']).toBe('94');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '90.00', RESERVED: '10.00' });
    // A duplicate transmission writes nothing: the lifecycle keeps its one record.
    expect((await lifecycle(t, first.parentCardTransactionId)).children).toHaveLength(1);
  });

  it('repeats (0101, 0201): a new record under the same lifecycle with the first answer; no money, no event, counted once toward the limits', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '1000.00', client);
    const program = (await cardPrograms(t, client))['Standard Debit'];
    const patched = await t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, key: client.key, body: { limits: { perTransactionMinor: 15_000, dailyMinor: 20_000, dailyCount: 3 } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const pan = await panOf(t, card.cardId);
    const first = await authorize(t, card.cardId, { amount: 100 }, client);
    const repeatOf = async (built: any, mti: string) => {
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: { ...built.iso.request.fields, '0': mti, '2': pan } } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const record = await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}`, key: client.key });
      return { ...response.body.data, record: record.body.data };
    };
    const repeat = await repeatOf(first, '0101');
    expect(repeat.response).toMatchObject({ '0': '0110', '39': '00', '38': first.authCode });
    expect(repeat.cardTransactionId).not.toBe(first.cardTransactionId);
    expect(repeat.record).toMatchObject({
      parentCardTransactionId: first.parentCardTransactionId,
      mti: '0101',
      type: 'PRE_AUTHORIZATION',
      status: 'PENDING',
      amount: 100,
      responseCode: '00',
      authCode: first.authCode,
      repeatOfCardTransactionId: first.cardTransactionId,
    });
    const again = await repeatOf(first, '0101');
    expect(again.record.repeatOfCardTransactionId).toBe(first.cardTransactionId);
    const group = await lifecycle(t, first.parentCardTransactionId, client);
    expect(group).toMatchObject({ status: 'PENDING', heldAmount: 100 });
    expect(group.children.map((child: any) => [child.mti, child.repeatOfCardTransactionId])).toEqual([
      ['0100', null],
      ['0101', first.cardTransactionId],
      ['0101', first.cardTransactionId],
    ]);
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '900.00', RESERVED: '100.00' });
    expect((await cardEventsOf(t, first.parentCardTransactionId, client)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING']);

    // A 0200 and its repeat: one purchase posted.
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 20 }, client);
    const purchaseRepeat = await repeatOf(purchase, '0201');
    expect(purchaseRepeat.record).toMatchObject({ parentCardTransactionId: purchase.parentCardTransactionId, type: 'PURCHASE', status: 'COMPLETED', repeatOfCardTransactionId: purchase.cardTransactionId });
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '880.00', RESERVED: '100.00' });

    // The day's limits count decisions: two approvals (120.00), not four (240.00, above 200.00). A third passes; then the count (3) is reached.
    expect((await authorize(t, card.cardId, { amount: 30 }, client)).responseCode).toBe('00');
    expect((await authorize(t, card.cardId, { amount: 1 }, client)).responseCode).toBe('65');
  });
});

describe('0120 advice', () => {
  it('sets the hold to the advised amount and is never declined', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 1 });
    const advice = await onParent(t, auth.parentCardTransactionId, 'advices', { amount: 60 });
    expect(advice.iso.response.mti).toBe('0130');
    expect(advice.record).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'PENDING', heldAmount: 60, decisionSource: 'NETWORK' });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '40.00', RESERVED: '60.00' });
    const lower = await onParent(t, auth.parentCardTransactionId, 'advices', { amount: 45 });
    expect(lower.record.heldAmount).toBe(45);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '55.00', RESERVED: '45.00' });
  });

  it('on a lifecycle that holds nothing any more (completed): the advised amount is held on that lifecycle again, where the messages that follow under its reference find it', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 10 });
    await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 10 });
    const advice = await onParent(t, auth.parentCardTransactionId, 'advices', { amount: 4 });
    expect(advice.parentCardTransactionId).toBe(auth.parentCardTransactionId);
    expect(advice.record).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'PENDING', heldAmount: 4, decisionSource: 'NETWORK' });
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 4, postedAmount: 10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '86.00', RESERVED: '4.00' });
    const reversal = await onParent(t, auth.parentCardTransactionId, 'reversals');
    expect(reversal.parentCardTransactionId).toBe(auth.parentCardTransactionId);
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: 10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '90.00', RESERVED: '0.00' });
    const swipes = await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}` });
    expect(swipes.body.data).toHaveLength(1);
    await expectLedgerClean(t);
  });

  it('on an expired lifecycle: held again there, expiredAt cleared while it is open', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 10 });
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${auth.parentCardTransactionId as string}/expire` })).status).toBe(200);
    const advice = await onParent(t, auth.parentCardTransactionId, 'advices', { amount: 6 });
    expect(advice.parentCardTransactionId).toBe(auth.parentCardTransactionId);
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 6, expiredAt: null });
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions');
    expect(completion.record).toMatchObject({ amount: 6, forcePost: false });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '94.00', RESERVED: '0.00' });
  });
});

describe('0220 completion', () => {
  it('matches the open hold with a new RRN, posts the final amount, COMPLETED; within the tolerance no overCapture', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 25, merchant: restaurant });
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 30 });
    expect(completion.rrn).not.toBe(auth.rrn);
    expect(completion.iso.response.mti).toBe('0230');
    expect(completion.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', amount: 30, overCapture: false, forcePost: false });
    expect(await balances(t, card.walletId)).toEqual({ AVAILABLE: '70.00', RESERVED: '0.00', PENDING: '0.00' });
    const group = await lifecycle(t, auth.parentCardTransactionId);
    expect(group).toMatchObject({ status: 'COMPLETED', postedAmount: 30, heldAmount: 0 });
    expect(group.children.map((child: any) => child.type)).toEqual(['PRE_AUTHORIZATION', 'PRE_AUTH_COMPLETION']);
    expect((await cardEventsOf(t, auth.parentCardTransactionId)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING', 'CARD_TRANSACTION_COMPLETED']);
    const records = await walletRecordsOf(t, auth.parentCardTransactionId);
    // The 5.00 above the hold came from AVAILABLE: a record of its own, so the records add up to the balances.
    expect(records.map((record) => `${record.type} ${record.purpose} ${record.operation} ${record.balanceType} ${record.amount}`).sort()).toEqual([
      'DEBIT_CARD_CAPTURE CAPTURE DEBIT AVAILABLE 5.00',
      'DEBIT_CARD_CAPTURE CAPTURE DEBIT RESERVED 25.00',
      'DEBIT_CARD_HOLD HOLD DEBIT RESERVED 25.00',
    ]);
    expect(records.every((record) => record.parentCardTransactionId === auth.parentCardTransactionId)).toBe(true);
  });

  it('above the hold beyond the tolerance: posted in full, forced past AVAILABLE, flagged overCapture; ledger verify clean', async () => {
    const card = await fundedCard(t, '30.00');
    const auth = await authorize(t, card.cardId, { amount: 20 });
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 45, newRrn: false });
    expect(completion.rrn).toBe(auth.rrn);
    expect(completion.record).toMatchObject({ status: 'COMPLETED', amount: 45, overCapture: true });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '-15.00', RESERVED: '0.00' });
    const captures = (await walletRecordsOf(t, auth.parentCardTransactionId)).filter((record) => record.purpose === 'CAPTURE');
    expect(captures.map((record) => `${record.balanceType} ${record.amount}`).sort()).toEqual(['AVAILABLE 25.00', 'RESERVED 20.00']);
    await expectLedgerClean(t);
  });

  it('without an open hold (after expiry): a force post on the same lifecycle', async () => {
    const card = await fundedCard(t, '50.00');
    const auth = await authorize(t, card.cardId, { amount: 20 });
    const expire = () => t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${auth.parentCardTransactionId as string}/expire` });
    expect((await expire()).status).toBe(200);
    expect((await expire()).status).toBe(409);
    const late = await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 20 });
    expect(late.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', forcePost: true, parentCardTransactionId: auth.parentCardTransactionId });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '30.00', RESERVED: '0.00' });
    // Nothing was reserved for it: its record is a debit of AVAILABLE, a capture as when the
    // wallet cannot cover it (docs/ledger.md), though this wallet can.
    const captures = (await walletRecordsOf(t, auth.parentCardTransactionId)).filter((record) => record.type === 'DEBIT_CARD_CAPTURE');
    expect(captures.map((record) => `${record.operation} ${record.balanceType} ${record.purpose} ${record.amount}`)).toEqual(['DEBIT AVAILABLE CAPTURE 20.00']);
  });

  it('after expiry, the sandbox completion needs an amount (nothing held to default to); an 0220 of 0 posts nothing and leaves the lifecycle CANCELLED', async () => {
    const card = await fundedCard(t, '50.00');
    const auth = await authorize(t, card.cardId, { amount: 20 });
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${auth.parentCardTransactionId as string}/expire` })).status).toBe(200);
    const defaulted = await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${auth.parentCardTransactionId as string}/completions`, body: {} });
    expect(defaulted.status).toBe(400);
    expect(defaulted.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'amount' }] });

    const pan = await panOf(t, card.cardId);
    const message = { ...auth.iso.request.fields, '0': '0220', '2': pan, '4': '000000000000', '11': '000931', '37': '700000000931' };
    const zero = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(zero.status, JSON.stringify(zero.body)).toBe(200);
    expect(zero.body.data.response['39']).toBe('00');
    const group = await lifecycle(t, auth.parentCardTransactionId);
    expect(group).toMatchObject({ status: 'CANCELLED', postedAmount: 0, heldAmount: 0 });
    expect(group.children.at(-1)).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', amount: 0, forcePost: false });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '50.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('force post (0220 without authorization) may overdraw the wallet; ledger verify clean', async () => {
    const card = await fundedCard(t, '10.00');
    const posted = await send(t, `/v1/sandbox/cards/${card.cardId}/force-posts`, { amount: 25 });
    expect(posted.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', forcePost: true, amount: 25 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '-15.00', RESERVED: '0.00' });
    // The wallet's records say where the money came from: AVAILABLE, never RESERVED (nothing was held).
    const records = await walletRecordsOf(t, posted.parentCardTransactionId);
    expect(records.map((record) => `${record.operation} ${record.balanceType} ${record.amount}`)).toEqual(['DEBIT AVAILABLE 25.00']);
    await expectLedgerClean(t);
  });

  it('a force post on a wallet with nothing AVAILABLE (zero, or already overdrawn) is posted all the same; ledger verify clean', async () => {
    const empty = await fundedCard(t, '0');
    const first = await send(t, `/v1/sandbox/cards/${empty.cardId}/force-posts`, { amount: 7 });
    expect(first.record).toMatchObject({ status: 'COMPLETED', forcePost: true, amount: 7 });
    const second = await send(t, `/v1/sandbox/cards/${empty.cardId}/force-posts`, { amount: 3.5 });
    expect(second.responseCode).toBe('00');
    expect(await balances(t, empty.walletId)).toMatchObject({ AVAILABLE: '-10.50', RESERVED: '0.00' });
    const records = await walletRecordsOf(t, second.parentCardTransactionId);
    expect(records.map((record) => [record.type, record.operation, record.amount])).toEqual([['DEBIT_CARD_CAPTURE', 'DEBIT', '3.50']]);
    await expectLedgerClean(t);
  });
});

describe('0200 financial and refunds', () => {
  it('a reversal (0420) of a completed purchase credits it back: all of it, or the amount reversed (DE95 keeps the rest)', async () => {
    const card = await fundedCard(t, '100.00');
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 30 });
    const partial = await onParent(t, purchase.parentCardTransactionId, 'reversals', { amount: 10 });
    expect(partial).toMatchObject({ responseCode: '00', record: { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'COMPLETED', amount: 10 } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '0.00' });
    const rest = await onParent(t, purchase.parentCardTransactionId, 'reversals');
    expect(rest.record).toMatchObject({ type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 20 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    expect(await lifecycle(t, purchase.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    // Nothing left to reverse: acknowledged, no money.
    const again = await onParent(t, purchase.parentCardTransactionId, 'reversals', { amount: 5 });
    expect(again.record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    const records = await walletRecordsOf(t, purchase.parentCardTransactionId);
    expect(records.map((record) => [record.type, record.operation, record.amount]).sort()).toEqual([
      ['DEBIT_CARD_CAPTURE', 'DEBIT', '30.00'],
      ['DEBIT_CARD_REFUND', 'CREDIT', '10.00'],
      ['DEBIT_CARD_REFUND', 'CREDIT', '20.00'],
    ]);
    await expectLedgerClean(t);
  });

  it('a reversal naming the authorization of a completed lifecycle moves nothing (the completion stands)', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 40 });
    await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 40 });
    const reversal = await onParent(t, auth.parentCardTransactionId, 'reversals', { amount: 40 });
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '0.00' });
  });

  it('a purchase posts at once (PURCHASE COMPLETED); a declined one is FAILED', async () => {
    const card = await fundedCard(t, '40.00');
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 12.5 });
    expect(purchase.iso.response.mti).toBe('0210');
    expect(purchase.record).toMatchObject({ type: 'PURCHASE', status: 'COMPLETED', amount: 12.5 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '27.50', RESERVED: '0.00' });
    const declined = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 27.51 });
    expect(declined.record).toMatchObject({ type: 'PURCHASE', status: 'FAILED', declineReason: 'INSUFFICIENT_FUNDS' });
    const list = await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}&type=PURCHASE` });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
  });

  it('a refund (processing code 20) credits the wallet, operation CREDIT, on the same lifecycle', async () => {
    const card = await fundedCard(t, '40.00');
    const auth = await authorize(t, card.cardId, { amount: 30 });
    await onParent(t, auth.parentCardTransactionId, 'completions', {});
    const refund = await onParent(t, auth.parentCardTransactionId, 'refunds', { amount: 10 });
    expect(refund.record).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'COMPLETED', amount: 10, parentCardTransactionId: auth.parentCardTransactionId });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '20.00', RESERVED: '0.00' });
    expect((await lifecycle(t, auth.parentCardTransactionId)).postedAmount).toBe(20);
    const records = await walletRecordsOf(t, auth.parentCardTransactionId);
    expect(records.filter((record) => record.type === 'DEBIT_CARD_REFUND').map((record) => [record.operation, record.amount])).toEqual([['CREDIT', '10.00']]);
  });
});

describe('reversals of refunds', () => {
  it('a refund (0200, processing code 20) reversed is taken back from the wallet: all of it, or all but DE95\'s actual amount', async () => {
    const card = await fundedCard(t, '5.00');
    const refund = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 12, processingCode: '200000' });
    expect(refund.record).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'COMPLETED', amount: 12 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '17.00' });
    const partial = await onParent(t, refund.parentCardTransactionId, 'reversals', { amount: 2 });
    expect(partial.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'COMPLETED', amount: 2 });
    expect(await lifecycle(t, refund.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: -10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '15.00' });

    const whole = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 20, processingCode: '200000' });
    // Forced like any advice: the wallet spent the refund meanwhile, and the reversal overdraws it.
    await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 30 });
    const reversal = await onParent(t, whole.parentCardTransactionId, 'reversals');
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'CANCELLED', amount: 20 });
    expect(await lifecycle(t, whole.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '-15.00', RESERVED: '0.00' });
    const records = await walletRecordsOf(t, whole.parentCardTransactionId);
    expect(records.map((record) => [record.type, record.operation, record.amount])).toEqual(
      expect.arrayContaining([
        ['DEBIT_CARD_REFUND', 'CREDIT', '20.00'],
        ['DEBIT_CARD_CAPTURE', 'DEBIT', '20.00'],
      ]),
    );
    await expectLedgerClean(t);
  });

  it('a reversal whose DE90 names the refund (0220) on a purchase\'s lifecycle takes the refund back, not the purchase', async () => {
    const card = await fundedCard(t, '50.00');
    const auth = await authorize(t, card.cardId, { amount: 30 });
    await onParent(t, auth.parentCardTransactionId, 'completions', {});
    const refund = await onParent(t, auth.parentCardTransactionId, 'refunds', { amount: 10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '30.00' });
    expect(await reverseRefundMessage(card.cardId, refund, '000880')).toBe('00');
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '20.00', RESERVED: '0.00' });
    // Sent again under another STAN: the refund was taken back already.
    expect(await reverseRefundMessage(card.cardId, refund, '000881')).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '20.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a reversal sent again (another STAN) takes back nothing more than the refund', async () => {
    const card = await fundedCard(t, '100.00');
    const refund = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 20, processingCode: '200000' });
    await onParent(t, refund.parentCardTransactionId, 'reversals');
    const again = await onParent(t, refund.parentCardTransactionId, 'reversals', { amount: 20 });
    expect(again.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await lifecycle(t, refund.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
  });

  it('reversals with and without DE90 of one refund (0200) take back no more than the refund together', async () => {
    const card = await fundedCard(t, '100.00');
    const refund = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 20, processingCode: '200000' });
    expect(await reverseRefundMessage(card.cardId, refund, '000884', true)).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await reverseRefundMessage(card.cardId, refund, '000885')).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await lifecycle(t, refund.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });

    const other = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 30, processingCode: '200000' });
    expect(await reverseRefundMessage(card.cardId, other, '000886')).toBe('00');
    expect(await reverseRefundMessage(card.cardId, other, '000887', true)).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await lifecycle(t, other.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    await expectLedgerClean(t);
  });

  it('without DE90, a reversal takes back the refund that opened the lifecycle, not a later refund on it too', async () => {
    const card = await fundedCard(t, '100.00');
    const refund = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 20, processingCode: '200000' });
    await onParent(t, refund.parentCardTransactionId, 'refunds', { amount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '150.00' });
    expect(await reverseRefundMessage(card.cardId, refund, '000888', true)).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '130.00' });
    expect(await lifecycle(t, refund.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: -30 });
    await expectLedgerClean(t);
  });

  it('the sandbox reversal of a lifecycle that nets a credit names its last refund (DE90) and takes it back: a refund authorization cleared, a purchase refunded beyond its amount', async () => {
    const card = await fundedCard(t, '100.00');
    const announced = await authorize(t, card.cardId, { amount: 15, processingCode: '200000' });
    const parentId = announced.parentCardTransactionId as string;
    const cleared = await onParent(t, parentId, 'refunds', { amount: 15 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '115.00' });
    const reversal = await onParent(t, parentId, 'reversals');
    expect(reversal.iso.request.fields['90'].slice(0, 10)).toBe(`0220${cleared.iso.request.fields['11'] as string}`);
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 15 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ postedAmount: 0 });

    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 30 });
    await onParent(t, purchase.parentCardTransactionId, 'refunds', { amount: 40 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '110.00' });
    const partial = await onParent(t, purchase.parentCardTransactionId, 'reversals', { amount: 4 });
    expect(partial.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 4 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '106.00' });
    // DE95 carries what stays of the refund after each (36, then 32): 4 more, then the rest.
    await onParent(t, purchase.parentCardTransactionId, 'reversals', { amount: 4 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '102.00' });
    const rest = await onParent(t, purchase.parentCardTransactionId, 'reversals');
    expect(rest.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 32 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '70.00' });
    expect(await lifecycle(t, purchase.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: 30 });
    await expectLedgerClean(t);
  });

  it('sandbox reversals sent one after another take a lifecycle\'s refunds back newest first, each once, then nothing', async () => {
    const card = await fundedCard(t, '100.00');
    const first = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 30, processingCode: '200000' });
    const parentId = first.parentCardTransactionId as string;
    const second = await onParent(t, parentId, 'refunds', { amount: 20 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '150.00' });
    const newest = await onParent(t, parentId, 'reversals');
    expect(newest.iso.request.fields['90'].slice(0, 10)).toBe(`0220${second.iso.request.fields['11'] as string}`);
    expect(newest.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 20, reversesCardTransactionId: second.record.id });
    // The newest is taken back in full: the next reversal names the older refund (until 2026-12-03 it named the newest again and took nothing).
    const older = await onParent(t, parentId, 'reversals', { amount: 10 });
    expect(older.iso.request.fields['90'].slice(0, 10)).toBe(`0200${first.iso.request.fields['11'] as string}`);
    expect(older.record).toMatchObject({ operation: 'DEBIT', amount: 10, reversesCardTransactionId: first.record.id });
    const rest = await onParent(t, parentId, 'reversals');
    expect(rest.record).toMatchObject({ operation: 'DEBIT', amount: 20, reversesCardTransactionId: first.record.id });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ postedAmount: 0 });
    expect((await onParent(t, parentId, 'reversals')).record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });
    await expectLedgerClean(t);
  });

  it('naming a refund (DE90) on a lifecycle whose hold is open: the refund is taken back, the hold stays; a full reversal of the hold then leaves it COMPLETED (a refund is posted)', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 50 });
    const refund = await onParent(t, auth.parentCardTransactionId, 'refunds', { amount: 10 });
    expect(await reverseRefundMessage(card.cardId, refund, '000882')).toBe('00');
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 50, postedAmount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '50.00', RESERVED: '50.00' });

    const other = await authorize(t, card.cardId, { amount: 20 });
    await onParent(t, other.parentCardTransactionId, 'refunds', { amount: 5 });
    await onParent(t, other.parentCardTransactionId, 'reversals');
    expect(await lifecycle(t, other.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: -5 });
    await expectLedgerClean(t);
  });

  it('without DE90, a purchase (0200) refunded beyond its amount: the purchase is reversed (its first message is named), not the refund', async () => {
    const card = await fundedCard(t, '100.00');
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 50 });
    await onParent(t, purchase.parentCardTransactionId, 'refunds', { amount: 60 });
    const fields = { ...purchase.iso.request.fields };
    delete fields['90'];
    const message = { ...fields, '0': '0420', '2': await panOf(t, card.cardId), '11': '000883' };
    expect((await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } })).body.data.response['39']).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '160.00' });
    expect(await lifecycle(t, purchase.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: -60 });
  });
});

describe('refund authorizations (0100, processing code 20)', () => {
  it('approved with nothing held or credited (REFUND PENDING, pendingRefundAmount); the refund that clears it credits the wallet and completes the lifecycle, whose expiry is cancelled', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '40.00', client);
    const announced = await authorize(t, card.cardId, { amount: 15, processingCode: '200000' }, client);
    expect(announced).toMatchObject({ responseCode: '00', approvedAmount: 15, decisionSource: 'SYSTEM' });
    expect(announced.authCode).toMatch(/^[0-9A-Z]{6}$/);
    expect(announced.record).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'PENDING', amount: 15, heldAmount: 0 });
    expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: '40.00', RESERVED: '0.00', PENDING: '0.00' });
    const parentId = announced.parentCardTransactionId as string;
    expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'PENDING', heldAmount: 0, postedAmount: 0, pendingRefundAmount: 15 });
    expect(await walletRecordsOf(t, parentId, client)).toEqual([]);

    const cleared = await onParent(t, parentId, 'refunds', { amount: 15 }, client);
    expect(cleared.record).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'COMPLETED', amount: 15, parentCardTransactionId: parentId });
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '55.00', RESERVED: '0.00' });
    expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'COMPLETED', postedAmount: -15, pendingRefundAmount: 0, expiresAt: null });
    expect((await cardEventsOf(t, parentId, client)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING', 'CARD_TRANSACTION_COMPLETED']);

    // Past the window: nothing expires any more.
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 8 * 24 * 3600 } });
    const after = await lifecycle(t, parentId, client);
    expect(after).toMatchObject({ status: 'COMPLETED', expiredAt: null });
    expect(after.children).toHaveLength(2);
    await expectLedgerClean(t);
  });

  it('expired after the window (a later refund still credits) or reversed: CANCELLED, nothing moved; declined like a card check (57, magic amounts, 13); not counted toward the limits', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '40.00', client);
    const program = (await cardPrograms(t, client))['Standard Debit'];
    await t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, key: client.key, body: { limits: { perTransactionMinor: 10_000, dailyMinor: 10_000, dailyCount: 1 } } });

    const expiring = await authorize(t, card.cardId, { amount: 200, processingCode: '200000' }, client);
    expect(expiring.responseCode).toBe('00');
    const reversed = await authorize(t, card.cardId, { amount: 7, processingCode: '200000' }, client);
    // Two refund authorizations, one above the per-transaction limit: a purchase is still the day's first approval.
    expect((await authorize(t, card.cardId, { amount: 1 }, client)).responseCode).toBe('00');

    const reversal = await onParent(t, reversed.parentCardTransactionId, 'reversals', {}, client);
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'CANCELLED', amount: 7 });
    expect(await lifecycle(t, reversed.parentCardTransactionId, client)).toMatchObject({ status: 'CANCELLED', pendingRefundAmount: 0, expiresAt: null });

    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 8 * 24 * 3600 } });
    const expired = await lifecycle(t, expiring.parentCardTransactionId, client);
    expect(expired).toMatchObject({ status: 'CANCELLED', pendingRefundAmount: 0, postedAmount: 0 });
    expect(expired.expiredAt).not.toBeNull();
    expect(expired.children.at(-1)).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'CANCELLED', amount: 200 });
    expect((await cardEventsOf(t, expiring.parentCardTransactionId, client)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING', 'CARD_TRANSACTION_CANCELLED']);
    // The reversed one's expiry was cancelled with it: no record after the reversal.
    expect((await lifecycle(t, reversed.parentCardTransactionId, client)).children).toHaveLength(2);
    // The purchase's hold expired; the wallet has what it had.
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '40.00', RESERVED: '0.00' });
    // The refund clearing after the expiry still credits, on that lifecycle, now COMPLETED.
    await onParent(t, expiring.parentCardTransactionId, 'refunds', { amount: 200 }, client);
    expect(await lifecycle(t, expiring.parentCardTransactionId, client)).toMatchObject({ status: 'COMPLETED', postedAmount: -200, pendingRefundAmount: 0 });
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '240.00', RESERVED: '0.00' });

    expect((await authorize(t, card.cardId, { amount: 990.05, processingCode: '200000' }, client)).record).toMatchObject({ type: 'REFUND', status: 'FAILED', amount: 0 });
    expect((await authorize(t, card.cardId, { amount: 0, processingCode: '200000' }, client)).record).toMatchObject({ type: 'REFUND', status: 'FAILED', declineReason: 'INVALID_AMOUNT' });
    await t.request({ method: 'PATCH', url: `/v1/cards/${card.cardId}`, key: client.key, body: { status: 'SUSPENDED' } });
    const suspended = await authorize(t, card.cardId, { amount: 5, processingCode: '200000' }, client);
    expect(suspended.record).toMatchObject({ type: 'REFUND', status: 'FAILED', declineReason: 'CARD_NOT_ACTIVE' });
    expect(await lifecycle(t, suspended.parentCardTransactionId, client)).toMatchObject({ status: 'FAILED', pendingRefundAmount: 0 });
    await expectLedgerClean(t);
  });

  it('a transaction of its own: one naming a lifecycle that exists (networkDataRef) is declined 57 there, which stays as it was; its advice (0120) is acknowledged there, nothing announced', async () => {
    const card = await fundedCard(t, '50.00');
    const auth = await authorize(t, card.cardId, { amount: 30 });
    const fields = { ...auth.iso.request.fields, '2': await panOf(t, card.cardId), '3': '200000', '4': '000000001000' };
    const declined = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...fields, '0': '0100', '11': '000779', '37': '600000000779' } } });
    expect(declined.body.data.response['39']).toBe('57');
    const advised = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...fields, '0': '0120', '11': '000780', '37': '600000000780' } } });
    expect(advised.body.data.response['39']).toBe('00');
    const group = await lifecycle(t, auth.parentCardTransactionId);
    expect(group).toMatchObject({ status: 'PENDING', heldAmount: 30, postedAmount: 0, pendingRefundAmount: 0 });
    expect(group.children.map((child: any) => [child.type, child.status, child.amount])).toEqual(
      expect.arrayContaining([
        ['REFUND', 'FAILED', 0],
        ['REFUND', 'CANCELLED', 0],
      ]),
    );
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '20.00', RESERVED: '30.00' });
  });

  it('its advice (0120, processing code 20) announces the refund the same way, never declined: no hold', async () => {
    const card = await fundedCard(t, '50.00');
    const auth = await authorize(t, card.cardId, { amount: 1 });
    const message = { ...auth.iso.request.fields, '0': '0120', '2': await panOf(t, card.cardId), '3': '200000', '4': '000000003000', '11': '000781', '37': '600000000781', '63': 'VIS00000REFUNDADVICE00001' };
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(response.body.data.response['39']).toBe('00');
    const record = await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}` });
    expect(record.body.data).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'PENDING', amount: 30, decisionSource: 'NETWORK' });
    expect(await lifecycle(t, record.body.data.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 0, pendingRefundAmount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '49.00', RESERVED: '1.00' });
  });

  it('a partial reversal (DE95) keeps the rest announced; a completion naming it posts and it still lapses at its expiry (a REFUND record), the lifecycle COMPLETED', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '50.00', client);
    const announced = await authorize(t, card.cardId, { amount: 25, processingCode: '200000' }, client);
    const parentId = announced.parentCardTransactionId as string;
    const partial = await onParent(t, parentId, 'reversals', { amount: 10 }, client);
    expect(partial.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'PENDING', amount: 10 });
    expect(partial.iso.request.fields['3']).toBe('200000');
    expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'PENDING', pendingRefundAmount: 15 });

    const expiresAt = (await lifecycle(t, parentId, client)).expiresAt;
    expect(expiresAt).toEqual(expect.any(String));
    await onParent(t, parentId, 'completions', { amount: 5 }, client);
    // Still due to lapse: its expiry shows.
    expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'COMPLETED', postedAmount: 5, pendingRefundAmount: 15, expiresAt });
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 8 * 24 * 3600 } });
    const group = await lifecycle(t, parentId, client);
    expect(group).toMatchObject({ status: 'COMPLETED', postedAmount: 5, pendingRefundAmount: 0 });
    expect(group.children.at(-1)).toMatchObject({ type: 'REFUND', status: 'CANCELLED', amount: 15 });
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '45.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });
  it('a hold advised on its lifecycle (0120) and completed: the refund still announced keeps the expiry shown, and lapses then', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '50.00', client);
    const announced = await authorize(t, card.cardId, { amount: 25, processingCode: '200000' }, client);
    const parentId = announced.parentCardTransactionId as string;
    await onParent(t, parentId, 'advices', { amount: 10 }, client);
    const held = await lifecycle(t, parentId, client);
    expect(held).toMatchObject({ status: 'PENDING', heldAmount: 10, pendingRefundAmount: 25, expiresAt: expect.any(String) });
    await onParent(t, parentId, 'completions', {}, client);
    expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: 10, pendingRefundAmount: 25, expiresAt: held.expiresAt });
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 32 * 24 * 3600 } });
    const group = await lifecycle(t, parentId, client);
    expect(group).toMatchObject({ status: 'COMPLETED', pendingRefundAmount: 0 });
    expect(group.children.at(-1)).toMatchObject({ type: 'REFUND', status: 'CANCELLED', amount: 25 });
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '40.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('0420 reversal', () => {
  it('partial (DE95) reduces the hold and stays PENDING; full releases it, CANCELLED', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 50 });
    const partial = await onParent(t, auth.parentCardTransactionId, 'reversals', { amount: 20 });
    expect(partial.iso.response.mti).toBe('0430');
    expect(partial.iso.request.fields['95'].slice(0, 12)).toBe('000000003000');
    expect(partial.record).toMatchObject({ type: 'REVERSAL_ADVICE', status: 'PENDING', amount: 20, heldAmount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
    const full = await onParent(t, auth.parentCardTransactionId, 'reversals');
    expect(full.record).toMatchObject({ type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    expect((await lifecycle(t, auth.parentCardTransactionId)).status).toBe('CANCELLED');
    expect((await cardEventsOf(t, auth.parentCardTransactionId)).map((event) => event.type)).toEqual([
      'CARD_TRANSACTION_PENDING',
      'CARD_TRANSACTION_PENDING',
      'CARD_TRANSACTION_CANCELLED',
    ]);
  });

  it('DE95 keeping all that is held, posted or announced (or more) takes nothing off: recorded, no money moves', async () => {
    const { formatReplacementAmounts } = await import('../network/index.js');
    /** An 0420 of the message `original` sent (same RRN and lifecycle reference), DE95 keeping `keptMinor`: its DE39 and record. */
    const reverseKeeping = async (cardId: string, original: any, stan: string, keptMinor: bigint) => {
      const message = { ...original.iso.request.fields, '0': '0420', '2': await panOf(t, cardId), '11': stan, '95': formatReplacementAmounts({ actualTransactionMinor: keptMinor }) };
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
      const record = await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}` });
      return { code: response.body.data.response['39'], record: record.body.data };
    };
    const card = await fundedCard(t, '100.00');
    // A hold of 10.00: DE95 of 10.00 or 20.00 keeps it whole.
    const auth = await authorize(t, card.cardId, { amount: 10 });
    for (const [stan, kept] of [['700001', 1000n], ['700002', 2000n]] as const) {
      const reversal = await reverseKeeping(card.cardId, auth, stan, kept);
      expect(reversal).toMatchObject({ code: '00', record: { type: 'REVERSAL_ADVICE', status: 'PENDING', amount: 0, heldAmount: 10 } });
    }
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '90.00', RESERVED: '10.00' });
    // A purchase of 30.00 posted: DE95 of 30.00 credits nothing back.
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 30 });
    const unreversed = await reverseKeeping(card.cardId, purchase, '700003', 3000n);
    expect(unreversed).toMatchObject({ code: '00', record: { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'COMPLETED', amount: 0 } });
    expect(await lifecycle(t, purchase.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: 30 });
    // A refund of 12.00 credited: DE95 of 12.00 takes nothing back.
    const refund = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 12, processingCode: '200000' });
    const kept = await reverseKeeping(card.cardId, refund, '700004', 1200n);
    expect(kept).toMatchObject({ code: '00', record: { type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 0 } });
    expect(await lifecycle(t, refund.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: -12 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '72.00', RESERVED: '10.00' });
    // A DE95 below what is held still reduces the hold to it.
    const partial = await reverseKeeping(card.cardId, auth, '700005', 400n);
    expect(partial.record).toMatchObject({ status: 'PENDING', amount: 6, heldAmount: 4 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '78.00', RESERVED: '4.00' });
    await expectLedgerClean(t);
  });

  it('an unmatched 0420 is acknowledged 00 and recorded as an orphan, no money', async () => {
    const card = await fundedCard(t, '10.00');
    const auth = await authorize(t, card.cardId, { amount: 1 });
    const message = { ...auth.iso.request.fields, '0': '0420', '2': await panOf(t, card.cardId), '11': '000999', '37': '699999000999', '63': 'VIS00000QQQQQQQQQQQQQQQQ0' };
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(response.body.data.response).toMatchObject({ '0': '0430', '39': '00' });
    const record = await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}` });
    expect(record.body.data).toMatchObject({ type: 'REVERSAL_ADVICE', orphan: true, amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '9.00', RESERVED: '1.00' });
  });
});

describe('hold expiry', () => {
  it('a hold expires after the program days on the client clock (POST /v1/sandbox/clock/advance); lodging MCCs get 31 days', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '100.00', client);
    const auth = await authorize(t, card.cardId, { amount: 10 }, client);
    const hotel = await authorize(t, card.cardId, { amount: 20, merchant: { ...restaurant, name: 'GRAND HOTEL', mcc: '7011' } }, client);
    expect(new Date(hotel.record.expiresAt).getTime() - new Date(auth.record.expiresAt).getTime()).toBe(24 * 24 * 3600 * 1000);
    const advance = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 7 * 24 * 3600 } });
    expect(advance.status).toBe(200);
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '20.00' });
    const group = await lifecycle(t, auth.parentCardTransactionId, client);
    expect(group.status).toBe('CANCELLED');
    expect(group.expiredAt).not.toBeNull();
    expect(group.children.at(-1)).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'CANCELLED', amount: 10 });
    expect((await cardEventsOf(t, auth.parentCardTransactionId, client)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING', 'CARD_TRANSACTION_CANCELLED']);
  });

  it('the sandbox expire control releases the hold now', async () => {
    const card = await fundedCard(t, '10.00');
    const auth = await authorize(t, card.cardId, { amount: 4 });
    const response = await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${auth.parentCardTransactionId as string}/expire` });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'CANCELLED', amount: 4 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
  });
});

describe('trace ids', () => {
  it('each record carries the trace of the request that wrote it; an expiry run by a clock advance carries the advance\'s; the trace lists the message\'s event', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '100.00', client);
    const swipe = await t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, key: client.key, body: { amount: 10, merchant: restaurant } });
    expect(swipe.status).toBe(201);
    const parentId = swipe.body.data.parentCardTransactionId as string;
    const completion = await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${parentId}/completions`, key: client.key, body: { amount: 4 } });
    expect(completion.status).toBe(201);
    const second = await authorize(t, card.cardId, { amount: 5 }, client);
    const advance = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 30 * 24 * 3600 } });
    expect(advance.status).toBe(200);

    const first = await lifecycle(t, parentId, client);
    expect(first.children.map((child: any) => [child.type, child.traceId])).toEqual([
      ['PRE_AUTHORIZATION', swipe.headers['x-trace-id']],
      ['PRE_AUTH_COMPLETION', completion.headers['x-trace-id']],
    ]);
    const expired = await lifecycle(t, second.parentCardTransactionId as string, client);
    expect(expired.children.at(-1)).toMatchObject({ status: 'CANCELLED', traceId: advance.headers['x-trace-id'] });
    const single = await t.request({ url: `/v1/cards/transactions/${first.children[0].id as string}`, key: client.key });
    expect(single.body.data.traceId).toBe(swipe.headers['x-trace-id']);

    const trace = await t.request({ url: `/v1/traces/${String(swipe.headers['x-trace-id'])}`, key: client.key });
    expect(trace.status).toBe(200);
    expect(trace.body.data.items.filter((item: any) => item.kind === 'EVENT').map((item: any) => item.type)).toContain('CARD_TRANSACTION_PENDING');
  });
});

describe('400', () => {
  it('card amounts are JSON numbers in major units: a string, a negative, 3 decimals are refused', async () => {
    const card = await fundedCard(t, '0');
    for (const amount of ['25.00', -1, 1.005]) {
      const response = await t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, body: { amount } });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
    }
    // Too large for DE4 is said so, in exponent notation too (1e21 read as "1e+21" was called "more than 2 decimals").
    for (const amount of [10_000_000_000, 1e21, 1e308]) {
      const response = await t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, body: { amount } });
      expect(response.status).toBe(400);
      expect(response.body.details[0]).toEqual({ field: 'amount', message: 'is larger than an ISO 8583 amount (DE4, 12 digits of cents) can carry' });
    }
  });

  it('merchant text DE43 cannot carry is refused, naming the field, not rewritten; nothing moves', async () => {
    const card = await fundedCard(t, '10.00');
    for (const [merchant, field] of [
      [{ ...restaurant, name: 'Ünïcødé ☃' }, 'merchant.name'],
      [{ ...restaurant, name: '   ' }, 'merchant.name'],
      [{ ...restaurant, city: 'C\nD' }, 'merchant.city'],
      [{ ...restaurant, state: 'ca' }, 'merchant.state'],
      [{ ...restaurant, country: 'us' }, 'merchant.country'],
    ] as const) {
      const response = await t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, body: { amount: 5, merchant } });
      expect(response.status, JSON.stringify(merchant)).toBe(400);
      expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual([field]);
    }
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
    const plain = await authorize(t, card.cardId, { amount: 5, merchant: { ...restaurant, name: "JOE'S DINER #2", state: '' } });
    expect(plain.record.merchant).toMatchObject({ name: "JOE'S DINER #2", city: 'SAN FRANCISCO' });
  });

  it('the type filter refuses the removed ONLINE_TRANSACTION, naming PURCHASE', async () => {
    const response = await t.request({ url: '/v1/cards/transactions?type=ONLINE_TRANSACTION' });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('PURCHASE');
    // An unknown value: the values quoted, as every field with a list of values (docs/api-design.md).
    const unknown = await t.request({ url: '/v1/cards/transactions?type=FOO' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([{ field: 'type', message: expect.stringMatching(/^must be one of "PRE_AUTHORIZATION", "ACCOUNT_VERIFICATION", /) }]);
  });

  it('a malformed ISO 8583 message is 400 ISO8583_MALFORMED naming the field', async () => {
    const json = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { '0': '0100', '4': '25.00' } } });
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '4' }] });
    const missing = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { '0': '0100', '3': '000000' } } });
    expect(missing.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '2' }] });
    const ascii = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'ascii', message: '0100ZZ' } });
    expect(ascii.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '1' }] });
    // Too long a packed message is a fault of the message too (until 2026-12-04 the request schema answered VALIDATION_ERROR).
    const long = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'ascii', message: `0100${'0'.repeat(9000)}` } });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '0', message: expect.stringContaining('longer than 8192 characters') }] });
  });

  // Until 2026-12-07 the codec checked only that these were digits (found by an audit).
  it('a local time, local date, settlement date or DE90 date and time that is no date or time is 400 naming its field; DE90 may carry zeros', async () => {
    const card = await fundedCard(t, '100.00');
    const base = await messageOf(card.cardId, { '4': '000000000100', '63': undefined });
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ '12': '256199' }, '12', /is not a time of day hhmmss/],
      [{ '13': '1399' }, '13', /is not a date MMDD/],
      [{ '13': '0230' }, '13', /is not a date MMDD/],
      [{ '15': '0000' }, '15', /is not a date MMDD/],
      [{ '0': '0420', '90': `0100000123${'9999999999'}${'0'.repeat(22)}` }, '90', /is not a date and time MMDDhhmmss \(or zeros\)/],
    ];
    for (const [changes, field, message] of cases) {
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...base, ...changes } } });
      expect(response.status, JSON.stringify(changes)).toBe(400);
      expect(response.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field, message: expect.stringMatching(message) }] });
    }
    const leapDay = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...base, '11': '000961', '37': '600000000961', '12': '235959', '13': '0229', '15': '1231' } } });
    expect(leapDay.status, JSON.stringify(leapDay.body)).toBe(200);
    expect(leapDay.body.data.response['39']).toBe('00');
    const zeros = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...base, '0': '0420', '11': '000962', '37': '600000000962', '90': `0100000961${'0'.repeat(32)}` } } });
    expect(zeros.status, JSON.stringify(zeros.body)).toBe(200);
  });
});

describe('message level', () => {
  it('a packed 0100 is answered packed; DE2 of another client\'s card answers 14', async () => {
    const card = await fundedCard(t, '100.00');
    const built = await authorize(t, card.cardId, { amount: 1 });
    const fields = { ...built.iso.request.fields, '2': await panOf(t, card.cardId), '11': '000321', '37': '600000000321', '63': 'VIS00000PACKEDPACKEDPACK1' };
    const { packIsoMessage } = await import('../network/index.js');
    const packed = packIsoMessage({ isoMti: '0100', fields });
    const mine = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'ascii', message: packed } });
    expect(mine.status).toBe(200);
    expect(mine.body.data.response['39']).toBe('00');
    expect(mine.body.data.packed.startsWith('0110')).toBe(true);
    const other = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: t.clientB.key, body: { format: 'ascii', message: packed } });
    expect(other.body.data).toMatchObject({ cardTransactionId: null, response: { '0': '0110', '39': '14' } });
  });
});

// Until 2026-12-07 a request's DE38 and DE54 were echoed: a decline came back with an authorization
// code, an approval with the request's DE54 as the available balance (found by an audit).
describe('a response carries the issuer\'s DE38 and DE54 only, never the request\'s', () => {
  it('a declined 0100 with DE38 has no DE38; an approved one has its own DE38 and no DE54; an unknown card\'s answer neither', async () => {
    const card = await fundedCard(t, '100.00');
    const send = async (changes: Record<string, string>) => {
      const message = await messageOf(card.cardId, { '4': '000000000100', '63': undefined, ...changes });
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data.response as Record<string, string>;
    };
    const declined = await send({ '4': '000000099005', '11': '000951', '37': '600000000951', '38': 'ABC123' });
    expect(declined['39']).toBe('05');
    expect(declined['38']).toBeUndefined();
    const approved = await send({ '11': '000952', '37': '600000000952', '38': 'ABC123', '54': '0002840C999999999999' });
    expect(approved['39']).toBe('00');
    expect(approved['38']).toMatch(/^[0-9A-Z]{6}$/);
    expect(approved['38']).not.toBe('ABC123');
    expect(approved['54']).toBeUndefined();
    const unknown = await send({ '2': '4242420000000000000'.slice(0, 16), '11': '000953', '37': '600000000953', '38': 'ABC123' });
    expect(unknown['39']).toBe('14');
    expect(unknown['38']).toBeUndefined();
  });

  it('an advice\'s response acknowledges it and echoes its DE38 (the stand-in\'s code), as a reversal\'s does', async () => {
    const card = await fundedCard(t, '100.00');
    const message = await messageOf(card.cardId, { '0': '0120', '4': '000000000500', '11': '000955', '37': '600000000955', '38': 'STD123', '39': '00', '63': undefined });
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.response).toMatchObject({ '0': '0130', '38': 'STD123', '39': '00' });
  });

  it('a balance inquiry answers the issuer\'s balance in DE54, not the request\'s', async () => {
    const card = await fundedCard(t, '100.00');
    const message = await messageOf(card.cardId, { '3': '300000', '4': '000000000000', '11': '000954', '37': '600000000954', '54': '0002840C999999999999', '63': undefined });
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(response.body.data.response['39']).toBe('00');
    expect(response.body.data.response['54']).not.toContain('999999999999');
    expect(response.body.data.response['54']).toContain('000000010000');
  });
});

describe('messages that must not take another lifecycle\'s place (found by an audit, 2026-12-02)', () => {
  it('a balance inquiry or a 0200 purchase under the networkDataRef of an open lifecycle: 57 on it, nothing opened, its completion still captures its hold', async () => {
    const card = await fundedCard(t, '500.00');
    const auth = await authorize(t, card.cardId, { amount: 40 });
    const ref = auth.record.networkDataRef as string;
    const inquiry = await authorize(t, card.cardId, { amount: 0, processingCode: '300000', networkDataRef: ref });
    expect(inquiry).toMatchObject({ responseCode: '57', parentCardTransactionId: auth.parentCardTransactionId, record: { type: 'BALANCE_INQUIRY', status: 'FAILED', declineReason: 'TRANSACTION_NOT_PERMITTED' } });
    expect(inquiry.iso.response.fields['54']).toBeUndefined();
    const purchase = await atMessageLevel(await messageOf(card.cardId, { '0': '0200', '4': '000000000500', '11': '000771', '37': '600000000771', '63': reference(ref) }));
    expect(purchase.code).toBe('57');
    expect(purchase.record).toMatchObject({ type: 'PURCHASE', status: 'FAILED', parentCardTransactionId: auth.parentCardTransactionId, amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '460.00', RESERVED: '40.00' });
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 40, postedAmount: 0 });
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', {});
    expect(completion).toMatchObject({ parentCardTransactionId: auth.parentCardTransactionId, record: { forcePost: false, amount: 40 } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '460.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a 0200 refund with the STAN and RRN of another message and other content is a duplicate transmission: 94, nothing credited', async () => {
    const card = await fundedCard(t, '100.00');
    const refundOf = (amount: string, mti = '0200') => messageOf(card.cardId, { '0': mti, '3': '200000', '4': amount, '11': '000772', '37': '600000000772', '63': undefined });
    const first = await atMessageLevel(await refundOf('000000001000'));
    expect(first).toMatchObject({ code: '00', record: { type: 'REFUND', status: 'COMPLETED', amount: 10 } });
    expect((await atMessageLevel(await refundOf('000000001000'))).code).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '110.00' });
    const other = await atMessageLevel(await refundOf('000000002000'));
    expect(other).toMatchObject({ code: '94', record: { type: 'REFUND', status: 'FAILED', declineReason: 'DUPLICATE_TRANSACTION', amount: 0 } });
    expect(other.record.parentCardTransactionId).not.toBe(first.record.parentCardTransactionId);
    expect((await atMessageLevel(await refundOf('000000003000', '0201'))).code).toBe('94');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '110.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a duplicate 0200 refund naming a lifecycle by its reference is declined 94 on that lifecycle, which stays where its messages find it', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 40 });
    const ref = auth.record.networkDataRef as string;
    const refundOf = (amount: string) =>
      messageOf(card.cardId, { '0': '0200', '3': '200000', '4': amount, '11': '000777', '37': '600000000777', '63': reference(ref) });
    const first = await atMessageLevel(await refundOf('000000000500'));
    expect(first).toMatchObject({ code: '00', record: { type: 'REFUND', parentCardTransactionId: auth.parentCardTransactionId, amount: 5 } });
    const duplicate = await atMessageLevel(await refundOf('000000000700'));
    expect(duplicate).toMatchObject({ code: '94', record: { type: 'REFUND', status: 'FAILED', parentCardTransactionId: auth.parentCardTransactionId, amount: 0 } });
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 40 });
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', {});
    expect(completion).toMatchObject({ parentCardTransactionId: auth.parentCardTransactionId, record: { forcePost: false, amount: 40 } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '65.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('DE90 names the approved 0100, not its duplicate declined 94: the reversal releases the hold, the completion captures it', async () => {
    const card = await fundedCard(t, '500.00');
    for (const [stan, ending] of [['000773', 'reversal'], ['000774', 'completion']] as const) {
      const original = await messageOf(card.cardId, { '0': '0100', '4': '000000005000', '11': stan, '37': `600000${stan}`, '63': undefined });
      const approved = await atMessageLevel(original);
      expect(approved).toMatchObject({ code: '00', record: { status: 'PENDING', heldAmount: 50 } });
      const duplicate = await atMessageLevel({ ...original, '4': '000000006000' });
      expect(duplicate.code).toBe('94');
      const de90 = await de90Of(original);
      const follow: Record<string, string> = ending === 'reversal' ? { '0': '0420', '11': `${stan.slice(0, 5)}9` } : { '0': '0220', '11': `${stan.slice(0, 5)}8`, '37': `700000${stan}` };
      const after = await atMessageLevel({ ...original, ...follow, '90': de90 });
      expect(after.code).toBe('00');
      expect(after.record.parentCardTransactionId, ending).toBe(approved.record.parentCardTransactionId);
    }
    // The first released, the second captured: 50 posted, nothing held.
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '450.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('DE90 shared by an approved 0100 and its declined duplicates (94, or 51 before the duplicate check): a partial reversal then the rest release the approved hold, whatever DE4 says', async () => {
    const card = await fundedCard(t, '500.00');
    const { formatReplacementAmounts } = await import('../network/index.js');
    const original = await messageOf(card.cardId, { '0': '0100', '4': '000000005000', '11': '000778', '37': '600000000778', '63': undefined });
    const approved = await atMessageLevel(original);
    expect(approved.code).toBe('00');
    // A duplicate whose amount is what will be left after the partial reversal, and one the funds check declines first.
    expect((await atMessageLevel({ ...original, '4': '000000003000' })).code).toBe('94');
    expect((await atMessageLevel({ ...original, '4': '000000060000' })).code).toBe('51');
    const de90 = await de90Of(original);
    const partial = await atMessageLevel({ ...original, '0': '0420', '11': '000779', '90': de90, '95': formatReplacementAmounts({ actualTransactionMinor: 3000n }) });
    expect(partial.record).toMatchObject({ parentCardTransactionId: approved.record.parentCardTransactionId, amount: 20 });
    const rest = await atMessageLevel({ ...original, '0': '0420', '4': '000000003000', '11': '000780', '90': de90 });
    expect(rest.record).toMatchObject({ parentCardTransactionId: approved.record.parentCardTransactionId, amount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '500.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a completion by DE90 whose amount is the declined duplicate\'s still completes the approved original', async () => {
    const card = await fundedCard(t, '500.00');
    const original = await messageOf(card.cardId, { '0': '0100', '4': '000000004000', '11': '000781', '37': '600000000781', '63': undefined });
    const approved = await atMessageLevel(original);
    expect((await atMessageLevel({ ...original, '4': '000000006000' })).code).toBe('94');
    const de90 = await de90Of(original);
    const completion = await atMessageLevel({ ...original, '0': '0220', '4': '000000006000', '11': '000782', '37': '700000000782', '90': de90 });
    expect(completion.record).toMatchObject({ parentCardTransactionId: approved.record.parentCardTransactionId, forcePost: false, amount: 60 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '440.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a reversal of a refund whose declined duplicate sits on the same lifecycle takes the refund back and leaves the hold', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 40 });
    const refund = await messageOf(card.cardId, { '0': '0200', '3': '200000', '4': '000000000500', '11': '000783', '37': '600000000783', '63': reference(auth.record.networkDataRef as string) });
    expect((await atMessageLevel(refund)).code).toBe('00');
    expect((await atMessageLevel({ ...refund, '4': '000000000700' })).code).toBe('94');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '65.00', RESERVED: '40.00' });
    const de90 = await de90Of(refund);
    const ofRefund = await atMessageLevel({ ...refund, '0': '0420', '11': '000785', '90': de90 });
    expect(ofRefund.record).toMatchObject({ parentCardTransactionId: auth.parentCardTransactionId, operation: 'DEBIT', amount: 5 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '40.00' });
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 40 });
    await expectLedgerClean(t);
  });

  it('a reversal naming only a declined increment (its own STAN) undoes nothing', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 40 });
    const increment = await messageOf(card.cardId, { '0': '0100', '4': '000000009000', '11': '000789', '37': '600000000789', '63': reference(auth.record.networkDataRef as string) });
    expect((await atMessageLevel(increment)).code).toBe('51');
    const de90 = await de90Of(increment);
    const reversal = await atMessageLevel({ ...increment, '0': '0420', '11': '000790', '90': de90 });
    expect(reversal.record).toMatchObject({ parentCardTransactionId: auth.parentCardTransactionId, amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '40.00' });
  });

  it('the sandbox reversal of a refund lifecycle with a declined duplicate takes the refund back; a refund authorization\'s reversal cancels it past its declined duplicate', async () => {
    const card = await fundedCard(t, '100.00');
    const refund = await messageOf(card.cardId, { '0': '0200', '3': '200000', '4': '000000000500', '11': '000786', '37': '600000000786', '63': reference('REFUNDLIFECYCLE1') });
    const credited = await atMessageLevel(refund);
    expect((await atMessageLevel({ ...refund, '4': '000000000700' })).code).toBe('94');
    const reversed = await onParent(t, credited.record.parentCardTransactionId, 'reversals');
    expect(reversed.record).toMatchObject({ operation: 'DEBIT', amount: 5 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00' });

    const announce = await messageOf(card.cardId, { '0': '0100', '3': '200000', '4': '000000001500', '11': '000787', '37': '600000000787', '63': reference('REFUNDANNOUNCED1') });
    const announced = await atMessageLevel(announce);
    expect(announced.record).toMatchObject({ status: 'PENDING' });
    expect((await atMessageLevel({ ...announce, '4': '000000001000' })).code).toBe('57');
    const de90 = await de90Of(announce);
    const { formatReplacementAmounts } = await import('../network/index.js');
    // A partial reversal keeps 10.00 announced; the rest, DE4 10.00 (the declined duplicate's amount too), cancels it.
    await atMessageLevel({ ...announce, '0': '0420', '11': '000788', '90': de90, '95': formatReplacementAmounts({ actualTransactionMinor: 1000n }) });
    expect(await lifecycle(t, announced.record.parentCardTransactionId)).toMatchObject({ status: 'PENDING', pendingRefundAmount: 10 });
    await atMessageLevel({ ...announce, '0': '0420', '4': '000000001000', '11': '000791', '90': de90 });
    expect(await lifecycle(t, announced.record.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', pendingRefundAmount: 0 });
  });

  it('a duplicate 0200 purchase under the reference of its lifecycle is told as a duplicate: 94 on that lifecycle', async () => {
    const card = await fundedCard(t, '100.00');
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 10 });
    const again = await atMessageLevel({ '0': '0200', ...purchase.iso.request.fields, '2': await panOf(t, card.cardId), '4': '000000002000' });
    expect(again).toMatchObject({ code: '94', record: { type: 'PURCHASE', status: 'FAILED', declineReason: 'DUPLICATE_TRANSACTION', parentCardTransactionId: purchase.parentCardTransactionId } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '90.00' });
  });

  it('a lifecycle opened without a DE63 reference: an increment is refused (409), a refund joins it by DE90', async () => {
    const card = await fundedCard(t, '100.00');
    const opened = await atMessageLevel(await messageOf(card.cardId, { '0': '0100', '4': '000000001000', '11': '000775', '37': '600000000775', '63': undefined }));
    expect(opened).toMatchObject({ code: '00', record: { networkDataRef: null, heldAmount: 10 } });
    const parentId = opened.record.parentCardTransactionId as string;
    const increment = await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${parentId}/increments`, body: { amount: 5 } });
    expect(increment.status).toBe(409);
    expect(increment.body.code).toBe('INVALID_STATE');
    const refund = await onParent(t, parentId, 'refunds', { amount: 3 });
    expect(refund.parentCardTransactionId).toBe(parentId);
    await onParent(t, parentId, 'completions', {});
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '93.00', RESERVED: '0.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', postedAmount: 7 });
  });

  it('the sandbox\'s follow-ups of a lifecycle in another currency are in that currency (DE49), billed to the card at 1:1', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 20, currency: 'EUR' });
    expect(auth.record).toMatchObject({ heldAmount: 20, amounts: { transaction: 20, transactionCurrency: 'EUR' } });
    const increment = await onParent(t, auth.parentCardTransactionId, 'increments', { amount: 5 });
    const partial = await onParent(t, auth.parentCardTransactionId, 'reversals', { amount: 10 });
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 12 });
    const refund = await onParent(t, auth.parentCardTransactionId, 'refunds', { amount: 2 });
    for (const [name, result] of Object.entries({ increment, partial, completion, refund })) {
      expect(result.iso.request.fields['49'], name).toBe('978');
      expect(result.record.amounts.transactionCurrency, name).toBe('EUR');
    }
    expect(completion.record).toMatchObject({ amount: 12, amounts: { transaction: 12 } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '90.00', RESERVED: '0.00' });
  });

  it('a declined authorization the network then approved by stand-in (an 0120 naming it): a reversal naming the 0100 releases the hold', async () => {
    const card = await fundedCard(t, '50.00');
    const declined = await authorize(t, card.cardId, { amount: 990.51 });
    expect(declined.responseCode).toBe('51');
    const advice = await onParent(t, declined.parentCardTransactionId, 'advices', { amount: 15 });
    expect(advice.record).toMatchObject({ parentCardTransactionId: declined.parentCardTransactionId, heldAmount: 15 });
    const reversal = await onParent(t, declined.parentCardTransactionId, 'reversals', {});
    expect(reversal.record).toMatchObject({ parentCardTransactionId: declined.parentCardTransactionId, amount: 15 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '50.00', RESERVED: '0.00' });
  });

  it('a declined increment the network then approved by stand-in (an 0120 naming it): a reversal naming the increment releases the hold', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 20 });
    const increment = await messageOf(card.cardId, { '0': '0100', '4': '000000099051', '11': '000793', '37': '600000000793', '63': reference(auth.record.networkDataRef as string) });
    expect((await atMessageLevel(increment)).code).toBe('51');
    const de90 = await de90Of(increment);
    const advice = await atMessageLevel({ ...increment, '0': '0120', '4': '000000001000', '11': '000794', '90': de90 });
    expect(advice.record).toMatchObject({ parentCardTransactionId: auth.parentCardTransactionId, heldAmount: 10 });
    const reversal = await atMessageLevel({ ...increment, '0': '0400', '4': '000000001000', '11': '000795', '90': de90 });
    expect(reversal.record).toMatchObject({ parentCardTransactionId: auth.parentCardTransactionId, amount: 10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
  });

  it('follow-ups of a lifecycle billed at another rate than 1:1 (its own DE6) stay in the card\'s currency', async () => {
    const card = await fundedCard(t, '100.00');
    const opened = await atMessageLevel(await messageOf(card.cardId, { '0': '0100', '4': '000000005000', '6': '000000005500', '49': '978', '51': '840', '11': '000792', '37': '600000000792', '63': undefined }));
    expect(opened.code, JSON.stringify(opened.record)).toBe('00');
    expect(opened.record).toMatchObject({ heldAmount: 55, amounts: { transaction: 50, transactionCurrency: 'EUR' } });
    const reversal = await onParent(t, opened.record.parentCardTransactionId, 'reversals', { amount: 10 });
    expect(reversal.iso.request.fields['49']).toBe('840');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '55.00', RESERVED: '45.00' });
  });

  it('a partial approval of a foreign-currency message answers the approved amount in DE4 and in DE6 (the billing amount), the original in DE54', async () => {
    const card = await fundedCard(t, '300.00');
    // EUR 990.10 (the sandbox's magic amount for a partial approval of half) billed USD 200.00, from a capable terminal.
    const message = await messageOf(card.cardId, { '0': '0100', '4': '000000099010', '6': '000000020000', '49': '978', '51': '840', '11': '000800', '37': '600000000800', '63': reference('PARTIALEUROS0800') });
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.response).toMatchObject({ '39': '10', '4': '000000049505', '6': '000000010000', '54': '0057978C000000099010' });
    const record = (await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}` })).body.data;
    expect(record).toMatchObject({ responseCode: '10', heldAmount: 100 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '200.00', RESERVED: '100.00' });
    // Billed 213.99: half is 106.99, which is EUR 495.026…, answered rounded half up (495.03) as every conversion here.
    const odd = await messageOf(card.cardId, { '0': '0100', '4': '000000099010', '6': '000000021399', '49': '978', '51': '840', '11': '000803', '37': '600000000803', '63': reference('PARTIALEUROS0803') });
    const oddResponse = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: odd } });
    expect(oddResponse.body.data.response).toMatchObject({ '39': '10', '4': '000000049503', '6': '000000010699' });
  });

  it('a magic amount is 990.NN in the currency\'s own major units: never in a currency of fewer than two decimals (¥99,051 is a purchase), BHD 990.510 is one and BHD 99.051 is not', async () => {
    const card = await fundedCard(t, '100.00');
    const send = async (changes: Record<string, string>, stan: string) => atMessageLevel(await messageOf(card.cardId, { '0': '0100', '51': '840', '11': stan, '37': `600000${stan}`, '63': undefined, ...changes }));
    expect((await send({ '4': '000000099051', '6': '000000000700', '49': '392' }, '000811')).code).toBe('00');
    expect((await send({ '4': '000000099051', '6': '000000000800', '49': '048' }, '000812')).code).toBe('00');
    const magic = await send({ '4': '000000990510', '6': '000000000900', '49': '048' }, '000813');
    expect(magic.code).toBe('51');
    expect(magic.record).toMatchObject({ declineReason: 'INSUFFICIENT_FUNDS' });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '85.00', RESERVED: '15.00' });
  });

  it('without DE14 the card\'s expiry is checked against track 2\'s: a past one declines 54, one that is no date is 400 naming field 35', async () => {
    const card = await fundedCard(t, '100.00');
    const message = await messageOf(card.cardId, { '0': '0100', '4': '000000001000', '11': '000821', '37': '600000000821', '63': undefined, '14': undefined });
    const pan = message['2'] ?? '';
    const past = await atMessageLevel({ ...message, '35': `${pan}=2001101` });
    expect(past.code).toBe('54');
    const notADate = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...message, '11': '000822', '37': '600000000822', '35': `${pan}=3013101` } } });
    expect(notADate.status).toBe(400);
    expect(notADate.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '35' }] });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
  });

  it('a message in another currency reads DE4 with that currency\'s decimals (ISO 4217: BHD 3, JPY 0) and shows the settlement billed to the card and the rate, on the record and the event', async () => {
    const card = await fundedCard(t, '100.00');
    // 12.500 BHD billed 33.25 USD: rate 2.66.
    const dinars = await atMessageLevel(await messageOf(card.cardId, { '0': '0100', '4': '000000012500', '6': '000000003325', '49': '048', '51': '840', '11': '000796', '37': '600000000796', '63': undefined }));
    expect(dinars.code, JSON.stringify(dinars.record)).toBe('00');
    expect(dinars.record).toMatchObject({ amount: 33.25, heldAmount: 33.25, amounts: { transaction: 12.5, transactionCurrency: 'BHD', settlement: 33.25, settlementCurrency: 'USD', conversionRate: 2.66 } });
    const event = (await t.request({ url: '/v1/events?type=CARD_TRANSACTION_PENDING&limit=100' })).body.data.find((row: any) => row.data.cardTransactionId === dinars.record.id);
    expect(event.data.amounts).toEqual({ transaction: 12.5, transactionCurrency: 'BHD', fees: [], settlement: 33.25, settlementCurrency: 'USD', conversionRate: 2.66 });
    // 1,000 JPY billed 6.67 USD: 0.00667 per yen.
    const yen = await atMessageLevel(await messageOf(card.cardId, { '0': '0100', '4': '000000001000', '6': '000000000667', '49': '392', '51': '840', '11': '000797', '37': '600000000797', '63': undefined }));
    expect(yen.record).toMatchObject({ amount: 6.67, amounts: { transaction: 1000, transactionCurrency: 'JPY', settlement: 6.67, settlementCurrency: 'USD', conversionRate: 0.00667 } });
    // 3 EUR billed 2.00 USD: 0.666666… rounds half up to 0.666667.
    const euros = await atMessageLevel(await messageOf(card.cardId, { '0': '0100', '4': '000000000300', '6': '000000000200', '49': '978', '51': '840', '11': '000798', '37': '600000000798', '63': undefined }));
    expect(euros.record.amounts).toMatchObject({ transaction: 3, settlement: 2, conversionRate: 0.666667 });
    // In the card's own currency there is nothing to settle or convert.
    const dollars = await authorize(t, card.cardId, { amount: 5 });
    expect(Object.keys(dollars.record.amounts).sort()).toEqual(['fees', 'surcharge', 'transaction', 'transactionCurrency']);
  });

  it.each([
    ['DE49', { '49': '001', '6': '000000001000', '51': '840' }, '49'],
    ['DE49 sent without DE6', { '49': '000' }, '49'],
    ['a DE54 fee', { '54': '0042001D000000000100' }, '54'],
  ])('a currency code ISO 4217 does not assign in %s: 400 ISO8583_MALFORMED naming the field, nothing held', async (_name, changes, field) => {
    const card = await fundedCard(t, '100.00');
    const message = await messageOf(card.cardId, { '0': '0100', '4': '000000001000', '11': '000799', '37': '600000000799', ...changes });
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field }] });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
  });

  it('in the card\'s own currency DE6 must equal DE4: another billing amount is 400 ISO8583_MALFORMED naming field 6, nothing held; an equal one is taken', async () => {
    const card = await fundedCard(t, '100.00');
    for (const changes of [{ '6': '000000001000', '51': '840' }, { '6': '000000001000', '49': '840' }]) {
      const message = await messageOf(card.cardId, { '0': '0100', '4': '000000000800', '11': '000798', '37': '600000000798', '63': undefined, ...changes });
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '6' }] });
    }
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    const equal = await messageOf(card.cardId, { '0': '0100', '4': '000000000800', '6': '000000000800', '51': '840', '11': '000797', '37': '600000000797', '63': undefined });
    const approved = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: equal } });
    expect(approved.body.data.response).toMatchObject({ '39': '00', '4': '000000000800', '6': '000000000800' });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '92.00', RESERVED: '8.00' });
  });

  it('a foreign-currency message with DE4 0 and a billing amount in DE6 is 400 ISO8583_MALFORMED naming field 6 (not an approved account verification), nothing held; DE4 0 with DE6 0 is a verification', async () => {
    const card = await fundedCard(t, '10.00');
    for (const [mti, stan] of [['0100', '000811'], ['0200', '000812']] as const) {
      const message = await messageOf(card.cardId, { '0': mti, '4': '000000000000', '6': '000000100000', '49': '978', '11': stan, '37': `600000${stan}`, '63': undefined });
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
      // Until 2026-12-06 the 0100 was answered 00 echoing DE6 1000.00, and its completion overdrew the wallet by 990.00.
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '6' }] });
    }
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
    const verification = await messageOf(card.cardId, { '0': '0100', '4': '000000000000', '6': '000000000000', '49': '978', '11': '000813', '37': '600000000813', '63': undefined });
    const verified = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: verification } });
    expect(verified.body.data.response).toMatchObject({ '39': '00', '6': '000000000000' });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
  });

  it('track 2 (DE35) must name the card DE2 names, with DE14\'s expiry: another card or expiry is 400 ISO8583_MALFORMED naming field 35, nothing held', async () => {
    const card = await fundedCard(t, '100.00');
    const other = await fundedCard(t, '100.00', t.clientB);
    const { expiry: cardExpiry } = await cardOfMessage(t, card.cardId);
    const expiry = `${String(cardExpiry.expiryYear % 100).padStart(2, '0')}${String(cardExpiry.expiryMonth).padStart(2, '0')}`;
    const message = await messageOf(card.cardId, { '0': '0100', '4': '000000001000', '11': '000801', '37': '600000000801', '63': undefined, '14': expiry });
    const pan = message['2'] ?? '';
    const otherPan = await panOf(t, other.cardId);
    const wrongExpiry = expiry === '3012' ? '3011' : '3012';
    for (const track2 of [`${otherPan}=${expiry}1011234`, `${pan}D${wrongExpiry}101`, `=${expiry}`]) {
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...message, '35': track2 } } });
      expect(response.status, track2).toBe(400);
      expect(response.body).toMatchObject({ code: 'ISO8583_MALFORMED', details: [{ field: '35' }] });
      expect(JSON.stringify(response.body)).not.toContain(otherPan);
    }
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    // The card's own track 2 (with or without the expiry) is fine.
    const matching = await atMessageLevel({ ...message, '35': `${pan}D${expiry}1011234` });
    expect(matching.code).toBe('00');
    const bare = await atMessageLevel({ ...message, '11': '000802', '37': '600000000802', '35': `${pan}=` });
    expect(bare.code).toBe('00');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '20.00' });
  });

  it('an advice of 0 closing a lifecycle that has money posted leaves it COMPLETED', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 40 });
    await onParent(t, auth.parentCardTransactionId, 'completions', {});
    const reopened = await onParent(t, auth.parentCardTransactionId, 'advices', { amount: 25 });
    expect(reopened.record).toMatchObject({ status: 'PENDING', heldAmount: 25 });
    const zero = await atMessageLevel({ '0': '0120', ...reopened.iso.request.fields, '2': await panOf(t, card.cardId), '4': '000000000000', '11': '000776' });
    expect(zero).toMatchObject({ code: '00', record: { parentCardTransactionId: auth.parentCardTransactionId, heldAmount: 0 } });
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: 40 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '0.00' });
  });
});

describe('stand-in advices, and reversals of one posting (found by an audit, 2026-12-02)', () => {
  it('a declined 0100 the stand-in approved with an 0120 that could reserve nothing: a full reversal closes the lifecycle, which never expires afterwards', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '0', client);
    const declined = await authorize(t, card.cardId, { amount: 50 }, client);
    expect(declined.responseCode).toBe('51');
    const parentId = declined.parentCardTransactionId as string;
    const advice = await onParent(t, parentId, 'advices', { amount: 50 }, client);
    expect(advice.record).toMatchObject({ parentCardTransactionId: parentId, status: 'PENDING', heldAmount: 0 });
    const reversal = await onParent(t, parentId, 'reversals', {}, client);
    expect(reversal.record).toMatchObject({ parentCardTransactionId: parentId, type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 0 });
    expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'CANCELLED', heldAmount: 0, expiresAt: null });
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 8 * 24 * 3600 } });
    const after = await lifecycle(t, parentId, client);
    expect(after).toMatchObject({ status: 'CANCELLED', expiredAt: null });
    expect(after.children.map((child: any) => child.type)).toEqual(['PRE_AUTHORIZATION', 'PRE_AUTHORIZATION', 'REVERSAL_ADVICE']);
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '0.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('an advice of 0 naming a declined lifecycle leaves it as it was (FAILED), recorded CANCELLED', async () => {
    const card = await fundedCard(t, '10.00');
    const declined = await authorize(t, card.cardId, { amount: 990.05 });
    const zero = await atMessageLevel({ ...(await messageOf(card.cardId, { '63': undefined })), '0': '0120', '4': '000000000000', '11': '000801', '90': await de90Of({ '0': declined.iso.request.mti, ...declined.iso.request.fields }) });
    expect(zero).toMatchObject({ code: '00', record: { parentCardTransactionId: declined.parentCardTransactionId, type: 'PRE_AUTHORIZATION', status: 'CANCELLED', amount: 0 } });
    expect(await lifecycle(t, declined.parentCardTransactionId)).toMatchObject({ status: 'FAILED', heldAmount: 0, expiresAt: null });
  });

  it('a stand-in advice sent under the declined request\'s own STAN, RRN and DE7 (no DE90, no reference) lands on its lifecycle, and a reversal naming the request undoes it', async () => {
    const card = await fundedCard(t, '2000.00');
    for (const [request, advice, stan] of [['0100', '0120', '000802'], ['0200', '0220', '000803']] as const) {
      const original = await messageOf(card.cardId, { '0': request, '4': '000000099005', '11': stan, '37': `600000${stan}`, '63': undefined });
      const declined = await atMessageLevel(original);
      expect(declined, request).toMatchObject({ code: '05', record: { status: 'FAILED' } });
      const parentId = declined.record.parentCardTransactionId as string;
      const stoodIn = await atMessageLevel({ ...original, '0': advice });
      expect(stoodIn, advice).toMatchObject({ code: '00', record: { parentCardTransactionId: parentId } });
      expect(await balances(t, card.walletId)).toMatchObject(request === '0100' ? { AVAILABLE: '1009.95', RESERVED: '990.05' } : { AVAILABLE: '1009.95', RESERVED: '0.00' });
      const reversal = await atMessageLevel({ ...original, '0': '0420', '11': `${stan.slice(0, 5)}9`, '90': await de90Of(original) });
      expect(reversal, request).toMatchObject({ code: '00', record: { parentCardTransactionId: parentId, type: 'REVERSAL_ADVICE', amount: 990.05 } });
      expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '2000.00', RESERVED: '0.00' });
      expect((await lifecycle(t, parentId)).status, request).toBe('CANCELLED');
    }
    await expectLedgerClean(t);
  });

  it('a stand-in advice naming a declined increment by DE90 with the acquirer as zeros approves it: a reversal naming the increment undoes the advised hold', async () => {
    // Until 2026-12-03 the advice's DE90 was compared with the increment's acquirer as stored, so it
    // did not count as approving the increment and the reversal undid nothing (found by the model test).
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 30 });
    const parentId = auth.parentCardTransactionId as string;
    const declined = await onParent(t, parentId, 'increments', { amount: 990.05 });
    expect(declined.responseCode).toBe('05');
    const increment: Record<string, string> = { '0': declined.iso.request.mti, ...declined.iso.request.fields, '2': await panOf(t, card.cardId) };
    const { '63': _reference, ...withoutReference } = increment;
    const advice = await atMessageLevel({ ...withoutReference, '0': '0120', '4': '000000004000', '11': '001180', '90': await de90Of(increment, { acquirerId: zeros }) });
    expect(advice).toMatchObject({ code: '00', record: { parentCardTransactionId: parentId } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '40.00' });
    const reversal = await atMessageLevel({ ...withoutReference, '0': '0420', '11': '001181', '90': await de90Of(increment) });
    expect(reversal.record).toMatchObject({ parentCardTransactionId: parentId, type: 'REVERSAL_ADVICE', amount: 40 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('two clearings of one authorization: a reversal naming one credits that one back, not the other, and only once', async () => {
    const card = await fundedCard(t, '500.00');
    const auth = await authorize(t, card.cardId, { amount: 100 });
    const parentId = auth.parentCardTransactionId as string;
    const named = await de90Of({ '0': auth.iso.request.mti, ...auth.iso.request.fields });
    const clearing = async (amount: string, stan: string) => {
      const message = await messageOf(card.cardId, { '0': '0220', '4': amount, '11': stan, '37': `700000${stan}`, '63': undefined, '90': named });
      expect((await atMessageLevel(message)).record).toMatchObject({ parentCardTransactionId: parentId, type: 'PRE_AUTH_COMPLETION' });
      return message;
    };
    await clearing('000000006000', '000804');
    const second = await clearing('000000004000', '000805');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '400.00', RESERVED: '0.00' });
    const reversal = await atMessageLevel({ ...second, '0': '0420', '11': '000806', '90': await de90Of(second) });
    expect(reversal.record).toMatchObject({ parentCardTransactionId: parentId, type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'COMPLETED', amount: 40 });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', postedAmount: 60 });
    const again = await atMessageLevel({ ...second, '0': '0420', '11': '000807', '90': await de90Of(second) });
    expect(again.record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '440.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('the sandbox reversal of a refunded 0200 purchase: the amount given comes back, then the rest of the purchase (the refund stands)', async () => {
    const card = await fundedCard(t, '100.00');
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 50 });
    const parentId = purchase.parentCardTransactionId as string;
    await onParent(t, parentId, 'refunds', { amount: 10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '60.00' });
    const partial = await onParent(t, parentId, 'reversals', { amount: 10 });
    expect(partial.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'CREDIT', amount: 10 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '70.00' });
    const rest = await onParent(t, parentId, 'reversals', {});
    expect(rest.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'CREDIT', amount: 40 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '110.00', RESERVED: '0.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', postedAmount: -10 });
    await expectLedgerClean(t);
  });

  it('a declined 0200 posted by the stand-in (a 0220 naming it), then refunded in part: a partial reversal of the purchase credits what DE95 no longer keeps of it', async () => {
    const card = await fundedCard(t, '2000.00');
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000099005', '11': '000808', '37': '600000000808', '63': undefined });
    expect((await atMessageLevel(purchase)).code).toBe('05');
    const named = await de90Of(purchase);
    const posted = await atMessageLevel({ ...purchase, '0': '0220', '11': '000809', '37': '700000000809', '90': named });
    expect(posted.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', forcePost: true, amount: 990.05 });
    const refund = await atMessageLevel({ ...purchase, '0': '0220', '3': '200000', '4': '000000030000', '11': '000810', '37': '700000000810', '90': named });
    expect(refund.record).toMatchObject({ type: 'REFUND', status: 'COMPLETED', amount: 300, parentCardTransactionId: posted.record.parentCardTransactionId });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1309.95' });
    const { formatReplacementAmounts } = await import('../network/index.js');
    const reversal = await atMessageLevel({ ...purchase, '0': '0420', '11': '000811', '90': named, '95': formatReplacementAmounts({ actualTransactionMinor: 80_000n }) });
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'CREDIT', amount: 190.05 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1500.00', RESERVED: '0.00' });
    expect(await lifecycle(t, posted.record.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: 500 });
    await expectLedgerClean(t);
  });

  it('one posting reached under two names (a declined 0200 and the stand-in 0220 that posted it) is credited back once, with DE95 or without', async () => {
    const card = await fundedCard(t, '1000.00');
    // A declined 0200, posted by a 0220 under its identifiers: reversals naming the 0200, then the 0220.
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000099051', '11': '000812', '37': '600000000812', '63': undefined });
    expect((await atMessageLevel(purchase)).code).toBe('51');
    const posted = await atMessageLevel({ ...purchase, '0': '0220' });
    expect(posted.record).toMatchObject({ forcePost: true, amount: 990.51 });
    const first = await atMessageLevel({ ...purchase, '0': '0420', '11': '000813', '90': await de90Of(purchase) });
    expect(first.record).toMatchObject({ operation: 'CREDIT', amount: 990.51 });
    const second = await atMessageLevel({ ...purchase, '0': '0420', '11': '000814', '90': await de90Of({ ...purchase, '0': '0220' }) });
    expect(second.record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1000.00' });

    // A 0200 and a 0220 under one reference: a reversal without DE90 credits the 0200 (the lifecycle's first message), one naming the 0220 that one.
    const ref = '0000000000000815';
    const opened = await atMessageLevel(await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '000815', '37': '600000000815', '63': reference(ref) }));
    expect(opened.code).toBe('00');
    const clearing = await messageOf(card.cardId, { '0': '0220', '4': '000000005000', '11': '000816', '37': '600000000816', '63': reference(ref) });
    await atMessageLevel(clearing);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '850.00' });
    const whole = await atMessageLevel({ ...clearing, '0': '0420', '4': '000000010000', '11': '000817' });
    expect(whole.record).toMatchObject({ operation: 'CREDIT', amount: 100 });
    const named = await atMessageLevel({ ...clearing, '0': '0420', '11': '000818', '90': await de90Of(clearing) });
    expect(named.record).toMatchObject({ operation: 'CREDIT', amount: 50 });
    expect((await atMessageLevel({ ...clearing, '0': '0420', '11': '000819', '90': await de90Of(clearing) })).record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1000.00', RESERVED: '0.00' });

    // The stand-in's posting, partly reversed under each of its names with the same DE95: once.
    const { formatReplacementAmounts } = await import('../network/index.js');
    const keeping = formatReplacementAmounts({ actualTransactionMinor: 80_000n });
    const other = await messageOf(card.cardId, { '0': '0200', '4': '000000099051', '11': '000820', '37': '600000000820', '63': undefined });
    await atMessageLevel(other);
    await atMessageLevel({ ...other, '0': '0220' });
    const byPurchase = await atMessageLevel({ ...other, '0': '0420', '11': '000821', '90': await de90Of(other), '95': keeping });
    expect(byPurchase.record).toMatchObject({ amount: 190.51 });
    const byClearing = await atMessageLevel({ ...other, '0': '0420', '11': '000822', '90': await de90Of({ ...other, '0': '0220' }), '95': keeping });
    expect(byClearing.record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '200.00', RESERVED: '0.00' });

    // A partial reversal sent without DE90, then with it: once.
    const single = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '000823', '37': '600000000823', '63': reference('0000000000000823') });
    await atMessageLevel(single);
    const sixty = formatReplacementAmounts({ actualTransactionMinor: 6_000n });
    expect((await atMessageLevel({ ...single, '0': '0420', '11': '000824', '95': sixty })).record).toMatchObject({ amount: 40 });
    expect((await atMessageLevel({ ...single, '0': '0420', '11': '000825', '95': sixty, '90': await de90Of(single) })).record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '140.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a 0200 lifecycle an advice opened again: a reversal without DE90 releases the hold and leaves the purchase; one naming the 0200 then credits all of it', async () => {
    const card = await fundedCard(t, '1000.00');
    const ref = '0000000000000819';
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '000819', '37': '600000000819', '63': reference(ref) });
    expect((await atMessageLevel(purchase)).code).toBe('00');
    const advice = await atMessageLevel({ ...purchase, '0': '0120', '4': '000000005000', '63': undefined as unknown as string });
    expect(advice.record).toMatchObject({ heldAmount: 50, parentCardTransactionId: (await atMessageLevel({ ...purchase })).record.parentCardTransactionId });
    const release = await atMessageLevel({ ...purchase, '0': '0420', '4': '000000005000', '11': '000820' });
    expect(release.record).toMatchObject({ amount: 50 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '900.00', RESERVED: '0.00' });
    const reversal = await atMessageLevel({ ...purchase, '0': '0420', '11': '000821', '90': await de90Of(purchase) });
    expect(reversal.record).toMatchObject({ operation: 'CREDIT', amount: 100 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1000.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a hold open on a 0200 lifecycle (an advice, or the stand-in approving a declined 0200 with an 0120): a reversal naming the 0200 releases the hold, as the sandbox reversal does; the release is not counted against the purchase, which the next reversal credits in full', async () => {
    const card = await fundedCard(t, '2000.00');
    // The sandbox: a purchase, an advice opening the lifecycle again, its reversal.
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 100 });
    const parentId = purchase.parentCardTransactionId as string;
    await onParent(t, parentId, 'advices', { amount: 50 });
    const reversal = await onParent(t, parentId, 'reversals', {});
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 50 });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: 100 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1900.00', RESERVED: '0.00' });
    const second = await onParent(t, parentId, 'reversals', {});
    expect(second.record).toMatchObject({ operation: 'CREDIT', amount: 100 });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'CANCELLED', heldAmount: 0, postedAmount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '2000.00', RESERVED: '0.00' });

    // A declined 0200 the stand-in approved with an 0120 under its identifiers.
    const declined = await messageOf(card.cardId, { '0': '0200', '4': '000000099051', '11': '000822', '37': '600000000822', '63': undefined });
    expect((await atMessageLevel(declined)).code).toBe('51');
    expect((await atMessageLevel({ ...declined, '0': '0120' })).record).toMatchObject({ heldAmount: 990.51 });
    const undone = await atMessageLevel({ ...declined, '0': '0420', '11': '000823', '90': await de90Of(declined) });
    expect(undone.record).toMatchObject({ amount: 990.51, status: 'CANCELLED' });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '2000.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('a 0200 lifecycle open with nothing held (an advice that could reserve nothing): a reversal naming the 0200 closes it, the next credits the purchase', async () => {
    const card = await fundedCard(t, '100.00');
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '000826', '37': '600000000826', '63': undefined });
    expect((await atMessageLevel(purchase)).code).toBe('00');
    const advice = await atMessageLevel({ ...purchase, '0': '0120', '4': '000000005000' });
    expect(advice.record).toMatchObject({ status: 'PENDING', heldAmount: 0 });
    const parentId = advice.record.parentCardTransactionId as string;
    const closing = await atMessageLevel({ ...purchase, '0': '0420', '11': '000827', '90': await de90Of(purchase) });
    expect(closing.record).toMatchObject({ amount: 0, status: 'CANCELLED' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', postedAmount: 100, expiresAt: null });
    const crediting = await atMessageLevel({ ...purchase, '0': '0420', '11': '000828', '90': await de90Of(purchase) });
    expect(crediting.record).toMatchObject({ operation: 'CREDIT', amount: 100 });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
  });

  it('a purchase and its refund both reversed, in either order: the wallet ends where it began', async () => {
    const card = await fundedCard(t, '1000.00');
    for (const [order, stan] of [['purchase first', '000830'], ['refund first', '000840']] as const) {
      const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': stan, '37': `600000${stan}`, '63': undefined });
      await atMessageLevel(purchase);
      const refund = { ...purchase, '0': '0220', '3': '200000', '4': '000000003000', '11': `${stan.slice(0, 5)}1`, '37': `700000${stan}`, '90': await de90Of(purchase) };
      const refunded = await atMessageLevel(refund);
      expect(refunded.record).toMatchObject({ type: 'REFUND', amount: 30 });
      const reversePurchase = { ...purchase, '0': '0420', '11': `${stan.slice(0, 5)}2`, '90': await de90Of(purchase) };
      const reverseRefund = { ...refund, '0': '0420', '11': `${stan.slice(0, 5)}3`, '90': await de90Of(refund) };
      for (const message of order === 'purchase first' ? [reversePurchase, reverseRefund] : [reverseRefund, reversePurchase]) await atMessageLevel(message);
      expect(await balances(t, card.walletId), order).toMatchObject({ AVAILABLE: '1000.00', RESERVED: '0.00' });
      expect(await lifecycle(t, refunded.record.parentCardTransactionId), order).toMatchObject({ postedAmount: 0 });
    }
    await expectLedgerClean(t);
  });

  it('a reversal of processing code 20 without DE90 on a purchase\'s lifecycle does not credit the purchase back: it names no refund, and takes nothing', async () => {
    const card = await fundedCard(t, '1000.00');
    const ref = reference('0000000000000850');
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '000850', '37': '600000000850', '63': ref });
    await atMessageLevel(purchase);
    const refund = { ...purchase, '0': '0220', '3': '200000', '4': '000000003000', '11': '000851', '37': '700000000851' };
    await atMessageLevel(refund);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '930.00' });
    const reversal = await atMessageLevel({ ...refund, '0': '0420', '11': '000852' });
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '930.00', RESERVED: '0.00' });
  });

  it('a purchase reversal (processing code 00) without DE90 on a lifecycle opened by a 0200 refund does not take the refund back', async () => {
    const card = await fundedCard(t, '100.00');
    const ref = reference('0000000000000860');
    const refund = await messageOf(card.cardId, { '0': '0200', '3': '200000', '4': '000000003000', '11': '000860', '37': '600000000860', '63': ref });
    expect((await atMessageLevel(refund)).code).toBe('00');
    const clearing = { ...refund, '0': '0220', '3': '000000', '4': '000000001000', '11': '000861', '37': '700000000861' };
    await atMessageLevel(clearing);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '120.00' });
    const reversal = await atMessageLevel({ ...clearing, '0': '0420', '11': '000862' });
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '120.00', RESERVED: '0.00' });
    // Processing code 20 still takes the refund back.
    const refundReversal = await atMessageLevel({ ...refund, '0': '0420', '11': '000863' });
    expect(refundReversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 20 });
  });

  it('a reversal of processing code 20 without DE90 on a lifecycle holding a purchase\'s hold leaves the hold', async () => {
    const card = await fundedCard(t, '1000.00');
    const auth = await authorize(t, card.cardId, { amount: 500 });
    const refund = await onParent(t, auth.parentCardTransactionId, 'refunds', { amount: 100 });
    const { '90': _named, ...fields } = refund.iso.request.fields as Record<string, string>;
    const reversal = await atMessageLevel({ ...fields, '0': '0420', '2': await panOf(t, card.cardId), '11': '000870' });
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 500 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '600.00', RESERVED: '500.00' });
  });
});

describe('what a reversal names: an increment, a processing code (found by audits, 2026-12-03)', () => {
  it('a reversal naming an increment releases only what that increment added (DE95: its actual amount), and never more than it added in all', async () => {
    const { formatReplacementAmounts } = await import('../network/index.js');
    const card = await fundedCard(t, '500.00');
    const auth = await authorize(t, card.cardId, { amount: 100 });
    const parentId = auth.parentCardTransactionId as string;
    const increment = await onParent(t, parentId, 'increments', { amount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ RESERVED: '130.00' });
    const incrementMessage = { '0': increment.iso.request.mti, ...increment.iso.request.fields, '2': await panOf(t, card.cardId) };
    const named = await de90Of(incrementMessage);
    const reversal = async (stan: string, keptMinor?: bigint) =>
      atMessageLevel({
        ...incrementMessage,
        '0': '0420',
        '11': stan,
        '90': named,
        ...(keptMinor === undefined ? {} : { '95': formatReplacementAmounts({ actualTransactionMinor: keptMinor }) }),
      });
    // 10.00 of the 30.00 kept: 20.00 released, the authorization's 100.00 untouched.
    expect(await reversal('000901', 1000n)).toMatchObject({
      code: '00',
      record: { parentCardTransactionId: parentId, type: 'REVERSAL_ADVICE', status: 'PENDING', amount: 20, heldAmount: 110, reversesCardTransactionId: increment.record.id },
    });
    // The rest of it: 10.00. Then nothing is left of the increment to release.
    expect((await reversal('000902')).record).toMatchObject({ status: 'PENDING', amount: 10, heldAmount: 100 });
    // Nothing released: the record names nothing (until 2026-12-03 it named the increment; found by an audit).
    expect((await reversal('000903')).record).toMatchObject({ status: 'PENDING', amount: 0, heldAmount: 100, reversesCardTransactionId: null });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '400.00', RESERVED: '100.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'PENDING', heldAmount: 100 });
    // The lifecycle's own reversal still releases what is held.
    await onParent(t, parentId, 'reversals');
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '500.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('an increment named after its hold closed (completed, then an advice held again), or never received, releases nothing; DE95 of an increment is taken before the hold caps it', async () => {
    const { formatReplacementAmounts } = await import('../network/index.js');
    const card = await fundedCard(t, '500.00');
    const pan = await panOf(t, card.cardId);
    const messageOfStep = (step: any) => ({ '0': step.iso.request.mti, ...step.iso.request.fields, '2': pan });
    const reverse = async (named: Record<string, string>, stan: string, keptMinor?: bigint) =>
      atMessageLevel({ ...named, '0': '0420', '11': stan, '90': await de90Of(named), ...(keptMinor === undefined ? {} : { '95': formatReplacementAmounts({ actualTransactionMinor: keptMinor }) }) });

    // An increment that timed out before it reached us: its reversal names an 0100 the lifecycle does not have.
    const first = await authorize(t, card.cardId, { amount: 50 });
    await onParent(t, first.parentCardTransactionId, 'increments', { amount: 30 });
    const unknown = await reverse({ ...messageOfStep(first), '11': '000977', '4': '000000003000' }, '000978');
    expect(unknown.record).toMatchObject({ parentCardTransactionId: first.parentCardTransactionId, type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 0, operation: 'CREDIT' });
    expect(await lifecycle(t, first.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 80 });

    // Completed (the increment captured), then an advice holds 40.00 again: the old increment has nothing left to release.
    const second = await authorize(t, card.cardId, { amount: 50 });
    const captured = await onParent(t, second.parentCardTransactionId, 'increments', { amount: 30 });
    await onParent(t, second.parentCardTransactionId, 'completions', { amount: 80 });
    await onParent(t, second.parentCardTransactionId, 'advices', { amount: 40 });
    expect((await reverse(messageOfStep(captured), '000979')).record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    expect(await lifecycle(t, second.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 40 });

    // An advice lowered the hold to 10.00: DE95 keeping 10.00 of the 30.00 increment reverses 20.00 of it, of which 10.00 is held.
    const third = await authorize(t, card.cardId, { amount: 50 });
    const lowered = await onParent(t, third.parentCardTransactionId, 'increments', { amount: 30 });
    await onParent(t, third.parentCardTransactionId, 'advices', { amount: 10 });
    expect((await reverse(messageOfStep(lowered), '000980', 1000n)).record).toMatchObject({ type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 10, heldAmount: 0 });
    expect((await lifecycle(t, third.parentCardTransactionId)).status).toBe('CANCELLED');

    // Processing code 20 naming only a declined increment: nothing undone, recorded as the debit it would have been.
    const declined = await onParent(t, first.parentCardTransactionId, 'increments', { amount: 990.05 });
    expect(declined.responseCode).toBe('05');
    expect((await reverse({ ...messageOfStep(declined), '3': '200000' }, '000981')).record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 0 });
    expect(await lifecycle(t, first.parentCardTransactionId)).toMatchObject({ status: 'PENDING', heldAmount: 80 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '300.00', RESERVED: '120.00' });
    await expectLedgerClean(t);
  });

  it('DE90 still names a message under another MTI or with the acquirer sent as zeros, and a lifecycle found by its RRN is reversed as before: only a STAN and DE7 the lifecycle never had undo nothing', async () => {
    const card = await fundedCard(t, '500.00');
    // The network's stand-in opened it with an 0120; the reversal names the 0100 the acquirer sent (same STAN, DE7, acquirer).
    const advice = await messageOf(card.cardId, { '0': '0120', '4': '000000005000', '11': '000991', '37': '600000000991', '63': reference('STANDINOPENED001') });
    const opened = await atMessageLevel(advice);
    expect(opened.record).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'PENDING', heldAmount: 50 });
    const asRequest = await atMessageLevel({ ...advice, '0': '0420', '11': '000992', '90': await de90Of({ ...advice, '0': '0100' }) });
    expect(asRequest.record).toMatchObject({ parentCardTransactionId: opened.record.parentCardTransactionId, type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 50 });
    // DE90 naming the first 0100 with its acquirer field sent as zeros.
    const request = await messageOf(card.cardId, { '0': '0100', '4': '000000004000', '11': '000993', '37': '600000000993', '63': reference('ZEROACQUIRER0001') });
    const authorized = await atMessageLevel(request);
    const asZeros = await atMessageLevel({ ...request, '0': '0420', '11': '000994', '90': await de90Of(request, { acquirerId: '0' }) });
    expect(asZeros.record).toMatchObject({ parentCardTransactionId: authorized.record.parentCardTransactionId, status: 'CANCELLED', amount: 40 });
    // No reference: the lifecycle is found by card, RRN and amount, and DE90 naming a STAN it never had does not stop the reversal.
    const plain = await messageOf(card.cardId, { '0': '0100', '4': '000000003000', '11': '000995', '37': '600000000995', '63': undefined });
    const plainAuthorized = await atMessageLevel(plain);
    const byRrn = await atMessageLevel({ ...plain, '0': '0420', '11': '000996', '90': await de90Of({ ...plain, '11': '999999' }) });
    expect(byRrn.record).toMatchObject({ parentCardTransactionId: plainAuthorized.record.parentCardTransactionId, status: 'CANCELLED', amount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '500.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('two records under one STAN, DE7 and acquirer (a STAN reused within a second): the reversal\'s processing code says which it reverses', async () => {
    const card = await fundedCard(t, '500.00');
    const ref = reference('SAMESTANTWICE001');
    expect((await atMessageLevel(await messageOf(card.cardId, { '0': '0100', '4': '000000005000', '11': '000911', '37': '600000000911', '63': ref }))).code).toBe('00');
    const completion = await messageOf(card.cardId, { '0': '0220', '4': '000000005000', '11': '000912', '37': '600000000912', '63': ref });
    const refund = { ...completion, '3': '200000', '4': '000000002000', '37': '700000000912' };
    const completed = (await atMessageLevel(completion)).record;
    expect(completed).toMatchObject({ type: 'PRE_AUTH_COMPLETION', amount: 50 });
    const refunded = (await atMessageLevel(refund)).record;
    expect(refunded).toMatchObject({ type: 'REFUND', amount: 20 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '470.00', RESERVED: '0.00' });
    const named = await de90Of(completion);
    // Processing code 00: the completion, credited back (the newest record under those identifiers is the refund); the record names it.
    expect((await atMessageLevel({ ...completion, '0': '0420', '11': '000913', '90': named })).record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'CREDIT', amount: 50, reversesCardTransactionId: completed.id });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '520.00' });
    // Processing code 20: the refund, taken back; the record names it.
    expect((await atMessageLevel({ ...refund, '0': '0420', '11': '000914', '90': named })).record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 20, reversesCardTransactionId: refunded.id });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '500.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('without DE90, a refund authorization is withdrawn by a reversal of processing code 20 only; one of another code that reverses nothing is recorded as a credit, one of 20 as a debit', async () => {
    const card = await fundedCard(t, '100.00');
    const announce = await messageOf(card.cardId, { '0': '0100', '3': '200000', '4': '000000003000', '11': '000921', '37': '600000000921', '63': reference('REFUNDANNOUNCED2') });
    const announced = await atMessageLevel(announce);
    expect(announced.record).toMatchObject({ type: 'REFUND', status: 'PENDING', amount: 30 });
    const parentId = announced.record.parentCardTransactionId as string;
    const purchaseCode = await atMessageLevel({ ...announce, '0': '0420', '3': '000000', '11': '000922' });
    expect(purchaseCode.record).toMatchObject({ parentCardTransactionId: parentId, type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'CANCELLED', amount: 0 });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'PENDING', pendingRefundAmount: 30 });
    const refundCode = await atMessageLevel({ ...announce, '0': '0420', '11': '000923' });
    expect(refundCode.record).toMatchObject({ parentCardTransactionId: parentId, type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'CANCELLED', amount: 30 });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'CANCELLED', pendingRefundAmount: 0 });
    // A purchase's lifecycle: a reversal of processing code 20 without DE90 takes nothing, and is recorded as the debit it would have been.
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 40 });
    const { '90': _none, ...fields } = purchase.iso.request.fields as Record<string, string>;
    const unnamed = await atMessageLevel({ ...fields, '0': '0420', '2': await panOf(t, card.cardId), '3': '200000', '11': '000924' });
    expect(unnamed.record).toMatchObject({ parentCardTransactionId: purchase.parentCardTransactionId, type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('a refund of 0 credits nothing and closes nothing (found by an audit, 2026-12-02)', () => {
  const refundOfNothing = (cardId: string, stan: string, ref: string) =>
    messageOf(cardId, { '0': '0220', '3': '200000', '4': '000000000000', '11': stan, '37': `600000${stan}`, '63': reference(ref) });

  it('on a reversed lifecycle it stays CANCELLED, on a declined one FAILED, with nothing posted', async () => {
    const card = await fundedCard(t, '100.00');
    const reversed = await authorize(t, card.cardId, { amount: 40 });
    await onParent(t, reversed.parentCardTransactionId, 'reversals', {});
    const declined = await authorize(t, card.cardId, { amount: 990.05 });
    expect(declined.responseCode).toBe('05');
    for (const [auth, stan, status] of [[reversed, '000990', 'CANCELLED'], [declined, '000991', 'FAILED']] as const) {
      const refund = await atMessageLevel(await refundOfNothing(card.cardId, stan, auth.record.networkDataRef as string));
      expect(refund).toMatchObject({ code: '00', record: { type: 'REFUND', amount: 0, parentCardTransactionId: auth.parentCardTransactionId } });
      expect(await lifecycle(t, auth.parentCardTransactionId)).toMatchObject({ status, heldAmount: 0, postedAmount: 0 });
    }
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('of its own it opens a CANCELLED lifecycle; clearing a refund authorization it closes it CANCELLED; after a posting the lifecycle stays COMPLETED', async () => {
    const card = await fundedCard(t, '100.00');
    const own = await atMessageLevel(await refundOfNothing(card.cardId, '000992', 'REFUNDOFNOTHING1'));
    expect(await lifecycle(t, own.record.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    const announced = await authorize(t, card.cardId, { amount: 15, processingCode: '200000' });
    expect(await lifecycle(t, announced.parentCardTransactionId)).toMatchObject({ status: 'PENDING' });
    await atMessageLevel(await refundOfNothing(card.cardId, '000993', announced.record.networkDataRef as string));
    expect(await lifecycle(t, announced.parentCardTransactionId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    const completed = await authorize(t, card.cardId, { amount: 30 });
    await onParent(t, completed.parentCardTransactionId, 'completions', {});
    await atMessageLevel(await refundOfNothing(card.cardId, '000994', completed.record.networkDataRef as string));
    expect(await lifecycle(t, completed.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: 30 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('the stand-in advice of an approved 0200, under its identifiers (found by an audit, 2026-12-02)', () => {
  it('posts nothing again; a reversal naming the advice credits the purchase back, once whichever name the next one uses', async () => {
    const card = await fundedCard(t, '100.00');
    const original = await messageOf(card.cardId, { '0': '0200', '4': '000000003000', '11': '000995', '37': '600000000995', '63': undefined });
    const purchase = await atMessageLevel(original);
    expect(purchase).toMatchObject({ code: '00', record: { type: 'PURCHASE', status: 'COMPLETED', amount: 30 } });
    const parentId = purchase.record.parentCardTransactionId as string;
    const advice = { ...original, '0': '0220' };
    const stoodIn = await atMessageLevel(advice);
    expect(stoodIn).toMatchObject({ code: '00', record: { parentCardTransactionId: parentId, type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', amount: 0, forcePost: false } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '0.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', postedAmount: 30 });
    const reversal = await atMessageLevel({ ...original, '0': '0420', '11': '000996', '90': await de90Of(advice) });
    expect(reversal).toMatchObject({ code: '00', record: { type: 'REVERSAL_ADVICE', amount: 30, reversesCardTransactionId: purchase.record.id } });
    const again = await atMessageLevel({ ...original, '0': '0420', '11': '000997', '90': await de90Of(original) });
    expect(again).toMatchObject({ code: '00', record: { type: 'REVERSAL_ADVICE', amount: 0 } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    await expectLedgerClean(t);
  });

  it('of a purchase approved in part, posts what the stand-in approved beyond it, forced, as a posting of its own', async () => {
    const card = await fundedCard(t, '1000.00');
    const original = await messageOf(card.cardId, { '0': '0200', '4': '000000099010', '11': '000998', '37': '600000000998', '63': reference('PARTIALSTANDIN01') });
    const purchase = await atMessageLevel(original);
    expect(purchase).toMatchObject({ code: '10', record: { type: 'PURCHASE', status: 'COMPLETED', amount: 495.05 } });
    const stoodIn = await atMessageLevel({ ...original, '0': '0220' });
    expect(stoodIn).toMatchObject({ code: '00', record: { parentCardTransactionId: purchase.record.parentCardTransactionId, amount: 495.05, forcePost: true } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '9.90', RESERVED: '0.00' });
    const parentId = purchase.record.parentCardTransactionId as string;
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', postedAmount: 990.1 });
    // One transaction of 990.10 under either name: DE95 keeping 500.00 credits 490.10, the sandbox's full reversal the rest.
    const { formatReplacementAmounts } = await import('../network/index.js');
    const partial = await atMessageLevel({ ...original, '0': '0420', '11': '001030', '90': await de90Of({ ...original, '0': '0220' }), '95': formatReplacementAmounts({ actualTransactionMinor: 50000n }) });
    expect(partial.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 490.1, reversesCardTransactionId: purchase.record.id });
    const rest = await onParent(t, parentId, 'reversals', {});
    expect(rest.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 500, status: 'CANCELLED' });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1000.00', RESERVED: '0.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'CANCELLED', postedAmount: 0 });
    await expectLedgerClean(t);
  });
});

describe('DE95 of a message in another currency (found by an audit, 2026-12-03)', () => {
  it('is converted to the card currency at the message\'s DE6/DE4 rate: 40.00 EUR of 80.00 EUR billed 100.00 USD keeps 50.00', async () => {
    const card = await fundedCard(t, '500.00');
    const euros = { '49': '978', '6': '000000010000', '51': '840' };
    const hold = await messageOf(card.cardId, { '0': '0100', '4': '000000008000', ...euros, '11': '000999', '37': '600000000999', '63': reference('FOREIGNPARTIAL01') });
    expect((await atMessageLevel(hold)).record).toMatchObject({ status: 'PENDING', heldAmount: 100 });
    const { formatReplacementAmounts } = await import('../network/index.js');
    const partial = await atMessageLevel({ ...hold, '0': '0420', '11': '001000', '90': await de90Of(hold), '95': formatReplacementAmounts({ actualTransactionMinor: 4000n }) });
    expect(partial.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 50, heldAmount: 50 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '450.00', RESERVED: '50.00' });
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000008000', ...euros, '11': '001001', '37': '600000001001', '63': reference('FOREIGNPARTIAL02') });
    expect((await atMessageLevel(purchase)).record).toMatchObject({ type: 'PURCHASE', amount: 100 });
    const credited = await atMessageLevel({ ...purchase, '0': '0420', '11': '001002', '90': await de90Of(purchase), '95': formatReplacementAmounts({ actualTransactionMinor: 4000n }) });
    expect(credited.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 50 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '400.00', RESERVED: '50.00' });
    await expectLedgerClean(t);
  });
});

describe('DE90 whose STAN and DE7 a record has under another MTI or acquirer names that record (found by an audit, 2026-12-03)', () => {

  it('an increment named with the acquirer as zeros, or under 0120 or 0200, releases that increment only; a declined one nothing', async () => {
    const card = await fundedCard(t, '2000.00');
    const auth = await authorize(t, card.cardId, { amount: 100 });
    const parentId = auth.parentCardTransactionId as string;
    const increment = await onParent(t, parentId, 'increments', { amount: 50 });
    const incrementMessage = { '0': increment.iso.request.mti, ...increment.iso.request.fields, '2': await panOf(t, card.cardId) };
    const declined = await onParent(t, parentId, 'increments', { amount: 990.05 });
    expect(declined.responseCode).toBe('05');
    const declinedMessage = { '0': declined.iso.request.mti, ...declined.iso.request.fields, '2': await panOf(t, card.cardId) };
    expect(await balances(t, card.walletId)).toMatchObject({ RESERVED: '150.00' });
    const reverse = async (named: string, stan: string) => (await atMessageLevel({ ...incrementMessage, '0': '0420', '11': stan, '90': named })).record;
    expect(await reverse(await de90Of(declinedMessage, { mti: '0100', acquirerId: zeros }), '001010')).toMatchObject({ amount: 0, status: 'CANCELLED' });
    const second = await onParent(t, parentId, 'increments', { amount: 30 });
    const secondMessage = { '0': second.iso.request.mti, ...second.iso.request.fields, '2': await panOf(t, card.cardId) };
    expect(await reverse(await de90Of(incrementMessage, { mti: '0100', acquirerId: zeros }), '001011')).toMatchObject({ amount: 50, heldAmount: 130, status: 'PENDING', reversesCardTransactionId: increment.record.id });
    expect(await reverse(await de90Of(secondMessage, { mti: '0120' }), '001012')).toMatchObject({ amount: 30, heldAmount: 100, status: 'PENDING', reversesCardTransactionId: second.record.id });
    expect(await reverse(await de90Of(secondMessage, { mti: '0200' }), '001013')).toMatchObject({ amount: 0, heldAmount: 100 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1900.00', RESERVED: '100.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'PENDING', heldAmount: 100 });
    await expectLedgerClean(t);
  });

  it('a posting named with the acquirer as zeros, or a stand-in 0220 named as the 0200 it approved, is credited back once', async () => {
    const card = await fundedCard(t, '500.00');
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000006000', '11': '001020', '37': '600000001020', '63': reference('ZEROACQUIRER0001') });
    expect((await atMessageLevel(purchase)).code).toBe('00');
    const standIn = await messageOf(card.cardId, { '0': '0220', '4': '000000004000', '11': '001021', '37': '600000001021', '63': reference('STANDINNAMED0001') });
    const posted = await atMessageLevel(standIn);
    expect(posted.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', forcePost: true, amount: 40 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '400.00' });
    const zeroAcquirer = await atMessageLevel({ ...purchase, '0': '0420', '11': '001022', '90': await de90Of(purchase, { mti: '0200', acquirerId: zeros }) });
    expect(zeroAcquirer.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 60, status: 'CANCELLED' });
    const asRequest = await atMessageLevel({ ...standIn, '0': '0420', '11': '001023', '90': await de90Of(standIn, { mti: '0200' }) });
    expect(asRequest.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 40, status: 'CANCELLED', reversesCardTransactionId: posted.record.id });
    expect((await atMessageLevel({ ...standIn, '0': '0420', '11': '001024', '90': await de90Of(standIn, { mti: '0220' }) })).record).toMatchObject({ amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '500.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('reversals that name their message by STAN and DE7 alone, followed up (found by an audit, 2026-12-03)', () => {
  it('a refund named with the acquirer as zeros is taken back once, however many reversals name it, under either name', async () => {
    const card = await fundedCard(t, '100.00');
    const refund = await messageOf(card.cardId, { '0': '0200', '3': '200000', '4': '000000005000', '11': '001040', '37': '600000001040', '63': reference('REFUNDZEROACQ001') });
    const credited = await atMessageLevel(refund);
    expect(credited.record).toMatchObject({ type: 'REFUND', amount: 50 });
    const reverse = async (stan: string, named: string) => (await atMessageLevel({ ...refund, '0': '0420', '11': stan, '90': named })).record;
    expect(await reverse('001041', await de90Of(refund, { mti: '0200', acquirerId: zeros }))).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 50, reversesCardTransactionId: credited.record.id });
    expect(await reverse('001042', await de90Of(refund, { mti: '0200', acquirerId: zeros }))).toMatchObject({ operation: 'DEBIT', amount: 0 });
    expect(await reverse('001043', await de90Of(refund))).toMatchObject({ operation: 'DEBIT', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('DE90\'s own MTI comes first among the records sharing its STAN and DE7; a DE90 naming a reversal names no other message', async () => {
    const card = await fundedCard(t, '500.00');
    const auth = await authorize(t, card.cardId, { amount: 100 });
    const parentId = auth.parentCardTransactionId as string;
    const increment = await onParent(t, parentId, 'increments', { amount: 50 });
    const incrementMessage = { '0': increment.iso.request.mti, ...increment.iso.request.fields, '2': await panOf(t, card.cardId) };
    // A completion of 150 reusing the increment's STAN and DE7 (an acquirer's reuse within one second).
    const completion = await atMessageLevel({ ...incrementMessage, '0': '0220', '4': '000000015000', '37': '700000001050' });
    expect(completion.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', amount: 150, forcePost: false });
    // DE90 of an 0100 with the acquirer as zeros names the increment (captured: nothing left), not the completion.
    const reversal = await atMessageLevel({ ...incrementMessage, '0': '0420', '11': '001051', '90': await de90Of(incrementMessage, { mti: '0100', acquirerId: zeros }) });
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    // A DE90 naming a reversal (none has that STAN and DE7) is not taken for the messages that have them.
    const again = await atMessageLevel({ ...incrementMessage, '0': '0420', '11': '001051', '7': incrementMessage['7'] ?? '', '37': '700000001052', '90': await de90Of(incrementMessage, { mti: '0420', acquirerId: zeros }) });
    expect(again.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '350.00', RESERVED: '0.00' });
    expect(await lifecycle(t, parentId)).toMatchObject({ status: 'COMPLETED', postedAmount: 150 });
    await expectLedgerClean(t);
  });

  it('without DE63, a purchase named with the acquirer as zeros is found by its STAN and DE7 and credited back', async () => {
    const card = await fundedCard(t, '100.00');
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000004000', '11': '001060', '37': '600000001060', '63': undefined });
    const posted = await atMessageLevel(purchase);
    expect(posted.code).toBe('00');
    const reversal = await atMessageLevel({ ...purchase, '0': '0420', '11': '001061', '37': '600000001061', '90': await de90Of(purchase, { mti: '0200', acquirerId: zeros }) });
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 40, parentCardTransactionId: posted.record.parentCardTransactionId, reversesCardTransactionId: posted.record.id });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('STANs are unique per acquirer: DE90\'s STAN and DE7 alone name a message of its acquirer only (found by an audit, 2026-12-03)', () => {
  it('another acquirer\'s reversal of a message OpenBaaS never saw undoes nothing of this card; DE90 of another MTI finds its own acquirer\'s lifecycle; one of processing code 20 sent as zeros, the refund', async () => {
    const card = await fundedCard(t, '500.00');
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '001070', '32': '111111', '37': '600000001070', '63': undefined });
    expect((await atMessageLevel(purchase)).code).toBe('00');
    const other = { ...purchase, '4': '000000003000', '32': '222222', '37': '600000001071' };
    expect((await atMessageLevel(other)).code).toBe('00');
    const refund = { ...purchase, '3': '200000', '4': '000000004000', '32': '333333', '37': '600000001072' };
    const refunded = await atMessageLevel(refund);
    expect(refunded.record).toMatchObject({ type: 'REFUND', amount: 40 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '410.00' });
    // Acquirer 444444 reverses its own 0200, never seen here: an orphan.
    const foreign = await atMessageLevel({ ...purchase, '0': '0420', '11': '001073', '32': '444444', '37': '600000001073', '90': await de90Of(purchase, { mti: '0200', acquirerId: '00000444444' }) });
    expect(foreign.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0, orphan: true });
    // DE90 wrong in its MTI only: 111111's purchase, not the newer one of 222222.
    const named = await atMessageLevel({ ...purchase, '0': '0420', '11': '001074', '90': await de90Of(purchase, { mti: '0220', acquirerId: '00000111111' }) });
    expect(named.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'CREDIT', amount: 100 });
    // Processing code 20 with the acquirer as zeros: the refund, not a purchase.
    const ofRefund = await atMessageLevel({ ...refund, '0': '0420', '11': '001075', '90': await de90Of(refund, { mti: '0200', acquirerId: zeros }) });
    expect(ofRefund.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 40, reversesCardTransactionId: refunded.record.id });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '470.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });

  it('DE90 sending the acquirer as zeros names the reversal\'s own acquirer\'s message first, not the newest of another', async () => {
    const card = await fundedCard(t, '500.00');
    for (const [mti, stan] of [['0200', '001090'], ['0100', '001091']] as const) {
      const own = await messageOf(card.cardId, { '0': mti, '4': '000000001000', '11': stan, '32': '111111', '37': `600000${stan}`, '63': undefined });
      const ownRecord = (await atMessageLevel(own)).record;
      const other = { ...own, '4': '000000002000', '32': '222222', '37': `610000${stan}` };
      const otherRecord = (await atMessageLevel(other)).record;
      const reversal = await atMessageLevel({ ...own, '0': '0420', '11': `${stan.slice(0, 5)}9`, '90': await de90Of(own, { mti: mti, acquirerId: zeros }) });
      expect(reversal.record, mti).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 10, parentCardTransactionId: ownRecord.parentCardTransactionId });
      expect((await lifecycle(t, otherRecord.parentCardTransactionId)).status, mti).toBe(mti === '0200' ? 'COMPLETED' : 'PENDING');
    }
    // The 0200 of 20.00 posted, the 0100 of 20.00 held; both of 10.00 undone.
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '460.00', RESERVED: '20.00' });
    await expectLedgerClean(t);
  });

  it('a 0220 under a 0200\'s STAN, DE7 and acquirer with another RRN is a posting of its own, reversed on its own', async () => {
    const card = await fundedCard(t, '500.00');
    const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '001080', '37': '600000001080', '63': reference('OWNRRNPOSTING001') });
    const posted = await atMessageLevel(purchase);
    const clearing = await atMessageLevel({ ...purchase, '0': '0220', '4': '000000006000', '37': '700000001080' });
    expect(clearing.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', amount: 60, parentCardTransactionId: posted.record.parentCardTransactionId });
    const { formatOriginalDataElements } = await import('../network/index.js');
    const named = formatOriginalDataElements({ mti: '0220', stan: purchase['11'] ?? '', transmissionDateTime: purchase['7'] ?? '', acquirerId: purchase['32'] ?? '' });
    expect((await atMessageLevel({ ...purchase, '0': '0420', '11': '001081', '90': named })).record).toMatchObject({ amount: 60, reversesCardTransactionId: clearing.record.id });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '400.00' });
    await expectLedgerClean(t);
  });
});

describe('a reversal\'s DE90 naming a message exactly, without DE63, is chosen among its lifecycles as by STAN and DE7 alone (found by an audit, 2026-12-03)', () => {
  it('a purchase and a refund of one acquirer under one STAN and DE7: each reversal undoes its own, in either order', async () => {
    const card = await fundedCard(t, '1000.00');
    for (const [order, stan] of [['purchase first', '001100'], ['refund first', '001110']] as const) {
      const purchase = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': stan, '32': '111111', '37': `600000${stan}`, '63': undefined });
      const refund = { ...purchase, '3': '200000', '4': '000000003000', '37': `610000${stan}` };
      const purchased = await atMessageLevel(purchase);
      const refunded = await atMessageLevel(refund);
      expect(await balances(t, card.walletId), order).toMatchObject({ AVAILABLE: '930.00' });
      const ofPurchase = { ...purchase, '0': '0420', '11': `${stan.slice(0, 4)}01`, '90': await de90Of(purchase) };
      const ofRefund = { ...refund, '0': '0420', '11': `${stan.slice(0, 4)}02`, '90': await de90Of(refund) };
      const [firstSent, secondSent] = order === 'purchase first' ? [ofPurchase, ofRefund] : [ofRefund, ofPurchase];
      await atMessageLevel(firstSent);
      await atMessageLevel(secondSent);
      // Until 2026-12-03 the newest lifecycle under DE90's identifiers was taken (the refund's): the
      // purchase's reversal took the refund back, the refund's then took nothing (or, refund first, credited the purchase).
      expect(await lifecycle(t, purchased.record.parentCardTransactionId), order).toMatchObject({ postedAmount: 0 });
      expect(await lifecycle(t, refunded.record.parentCardTransactionId), order).toMatchObject({ postedAmount: 0 });
      expect(await balances(t, card.walletId), order).toMatchObject({ AVAILABLE: '1000.00' });
    }
    await expectLedgerClean(t);
  });

  it('two purchases of one acquirer under one STAN and DE7 (two terminals): the reversal undoes the one of its RRN', async () => {
    const card = await fundedCard(t, '1000.00');
    const first = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '001120', '32': '111111', '37': '600000001120', '63': undefined });
    const firstRecord = (await atMessageLevel(first)).record;
    const second = { ...first, '4': '000000002000', '37': '600000001121' };
    const secondRecord = (await atMessageLevel(second)).record;
    const reversal = await atMessageLevel({ ...first, '0': '0420', '11': '001122', '90': await de90Of(first) });
    expect(reversal.record).toMatchObject({ operation: 'CREDIT', amount: 100, parentCardTransactionId: firstRecord.parentCardTransactionId, reversesCardTransactionId: firstRecord.id });
    expect(await lifecycle(t, secondRecord.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: 20 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '980.00' });
    await expectLedgerClean(t);
  });

  it('DE90 sending the acquirer as zeros names the reversal\'s own acquirer\'s message before one sent without DE32 (stored under zeros)', async () => {
    const card = await fundedCard(t, '1000.00');
    const own = await messageOf(card.cardId, { '0': '0200', '4': '000000010000', '11': '001130', '32': '111111', '37': '600000001130', '63': undefined });
    const ownRecord = (await atMessageLevel(own)).record;
    const withoutAcquirer = Object.fromEntries(Object.entries({ ...own, '4': '000000004000', '37': '600000001131' }).filter(([field]) => field !== '32'));
    const withoutRecord = (await atMessageLevel(withoutAcquirer)).record;
    expect(withoutRecord).toMatchObject({ type: 'PURCHASE', amount: 40 });
    const reversal = await atMessageLevel({ ...own, '0': '0420', '11': '001132', '90': await de90Of(own, { acquirerId: zeros }) });
    expect(reversal.record).toMatchObject({ operation: 'CREDIT', amount: 100, reversesCardTransactionId: ownRecord.id });
    expect(await lifecycle(t, withoutRecord.parentCardTransactionId)).toMatchObject({ status: 'COMPLETED', postedAmount: 40 });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '960.00' });
    await expectLedgerClean(t);
  });

  it('DE90 sending the acquirer as zeros: the reversal\'s RRN comes before its acquirer (a purchase sent without DE32 and a refund of the reversal\'s acquirer under one STAN and DE7)', async () => {
    const card = await fundedCard(t, '1000.00');
    const purchase = Object.fromEntries(Object.entries(await messageOf(card.cardId, { '0': '0200', '4': '000000008000', '11': '001150', '37': '600000001150', '63': undefined })).filter(([field]) => field !== '32'));
    const purchased = (await atMessageLevel(purchase)).record;
    const refund = { ...purchase, '3': '200000', '4': '000000003000', '32': '123456', '37': '600000001151' };
    const refunded = (await atMessageLevel(refund)).record;
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '950.00' });
    // Until 2026-12-03 the acquirer came first: this took the refund back and the purchase could not be reversed.
    const reversal = await atMessageLevel({ ...purchase, '0': '0420', '11': '001152', '32': '123456', '90': await de90Of(purchase, { acquirerId: zeros }) });
    expect(reversal.record).toMatchObject({ operation: 'CREDIT', amount: 80, reversesCardTransactionId: purchased.id });
    const ofRefund = await atMessageLevel({ ...refund, '0': '0420', '11': '001153', '90': await de90Of(refund, { acquirerId: zeros }) });
    expect(ofRefund.record).toMatchObject({ operation: 'DEBIT', amount: 30, reversesCardTransactionId: refunded.id });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1000.00' });
    await expectLedgerClean(t);
  });

  it('a completion or an advice without DE63 whose DE90 sends the acquirer as zeros completes the authorization it names (its own acquirer\'s first), not a posting beside the hold', async () => {
    // Until 2026-12-03 only a reversal read DE90's zeros as any acquirer: a 0220 with a new RRN or
    // an 0120 of another amount opened a lifecycle of its own, and the hold stood beside it.
    const card = await fundedCard(t, '1000.00');
    for (const [mti, stan] of [['0220', '001160'], ['0120', '001170']] as const) {
      const own = await messageOf(card.cardId, { '0': '0100', '4': '000000010000', '11': stan, '32': '111111', '37': `600000${stan}`, '63': undefined });
      const ownRecord = (await atMessageLevel(own)).record;
      const other = { ...own, '4': '000000002000', '32': '222222', '37': `610000${stan}` };
      const otherRecord = (await atMessageLevel(other)).record;
      const follow = await atMessageLevel({ ...own, '0': mti, '4': '000000008000', '11': `${stan.slice(0, 5)}9`, '37': `700000${stan}`, '90': await de90Of(own, { acquirerId: zeros }) });
      expect(follow.code, mti).toBe('00');
      expect(follow.record.parentCardTransactionId, mti).toBe(ownRecord.parentCardTransactionId);
      expect(await lifecycle(t, otherRecord.parentCardTransactionId), mti).toMatchObject({ status: 'PENDING', heldAmount: 20 });
    }
    // The 0220 posted 80.00 of the first 100.00 hold; the 0120 changed the second to 80.00; both holds of 20.00 stand.
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '800.00', RESERVED: '120.00' });
    await expectLedgerClean(t);
  });

  it('DE90 sending the acquirer as zeros names a message sent without DE32 that opened its lifecycle: a purchase, a refund, a force post (the first version of the rule above undid nothing)', async () => {
    const card = await fundedCard(t, '1000.00');
    const withoutAcquirer = async (changes: Record<string, string | undefined>) => {
      const message = await messageOf(card.cardId, { ...changes, '32': undefined, '63': undefined });
      return { message, record: (await atMessageLevel(message)).record };
    };
    const purchase = await withoutAcquirer({ '0': '0200', '4': '000000004000', '11': '001140', '37': '600000001140' });
    const refund = await withoutAcquirer({ '0': '0200', '3': '200000', '4': '000000001500', '11': '001141', '37': '600000001141' });
    const forced = await withoutAcquirer({ '0': '0220', '4': '000000002500', '11': '001142', '37': '600000001142' });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '950.00' });
    for (const [name, sent, operation, amount] of [['purchase', purchase, 'CREDIT', 40], ['refund', refund, 'DEBIT', 15], ['force post', forced, 'CREDIT', 25]] as const) {
      const reversal = await atMessageLevel({ ...sent.message, '0': '0420', '11': `${(sent.message['11'] ?? '').slice(0, 5)}9`, '90': await de90Of(sent.message, { acquirerId: zeros }) });
      expect(reversal.record, name).toMatchObject({ operation, amount, reversesCardTransactionId: sent.record.id });
    }
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '1000.00', RESERVED: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('the sandbox acquirer never reuses a STAN and RRN of the card (found by an audit, 2026-12-05)', () => {
  // STANs are drawn at random and an RRN keeps only the hour: until 2026-12-05 two messages of a
  // card within the hour could share both, and the second was answered as a repeat of the first
  // (a completion as an earlier lifecycle's, its own hold left open).
  it('a drawn STAN that the card used with the same RRN is drawn again, the RRN made from it again; one of another RRN is kept', async () => {
    const { withTransaction } = await import('../../../platform/db/transaction.js');
    const { retrievalReferenceNumber } = await import('../network/index.js');
    const { withUnusedStan } = await import('../sandbox/sandbox-stan.js');
    const card = await fundedCard(t, '100.00');
    const first = await authorize(t, card.cardId, { amount: 1 });
    const context = { clientId: t.clientA.id, traceId: 'stan-check', now: t.clock.now() };
    expect(first.rrn).toBe(retrievalReferenceNumber(context.now, first.stan));
    const drawn = await withTransaction(t.deps.db, (tx) => withUnusedStan(tx, context, card.cardId, { isoMti: '0220', fields: { '11': first.stan, '37': first.rrn } }));
    expect(drawn.fields['11']).not.toBe(first.stan);
    expect(drawn.fields['37']).toBe(retrievalReferenceNumber(context.now, drawn.fields['11'] ?? ''));
    // A completion keeping the lifecycle's RRN: only the STAN is drawn again.
    const kept = await withTransaction(t.deps.db, (tx) => withUnusedStan(tx, context, card.cardId, { isoMti: '0220', fields: { '11': first.stan, '37': first.rrn.replace(/.$/, (digit: string) => String((Number(digit) + 1) % 10)) } }));
    expect(kept.fields['11']).toBe(first.stan);
    const sameRrn = { isoMti: '0420', fields: { '11': first.stan, '37': first.rrn, '90': 'kept as it is' } };
    expect(first.rrn).not.toBe(retrievalReferenceNumber(new Date(context.now.getTime() + 3_600_000), first.stan));
    const later = { ...context, now: new Date(context.now.getTime() + 3_600_000) };
    const redrawn = await withTransaction(t.deps.db, (tx) => withUnusedStan(tx, later, card.cardId, sameRrn));
    expect(redrawn.fields['11']).not.toBe(first.stan);
    expect(redrawn.fields).toMatchObject({ '37': first.rrn, '90': 'kept as it is' });
  });
});

describe('a message that waited for its card behind another process\'s is dated after that one\'s change (found by a two-process money audit, 2026-12-06)', () => {
  // The message's moment is read when it arrives; these call the processor with a moment before
  // the lifecycle's last change, as a message that arrived first on another process and waited
  // for the card's row lock while this one's change committed has (the clock never moves back).
  const before = (iso: string, ms: number): Date => new Date(Date.parse(iso) - ms);
  const ids = (children: { id: string }[]) => children.map((child) => child.id);

  it('a completion: its record comes after the authorization\'s, GET of the lifecycle answers it, and the events come in that order', async () => {
    // A client of its own: the helpers read its latest events, and this file's other messages are dated up to a few ms ahead of the test clock.
    const client = await t.newClient();
    const card = await fundedCard(t, '100.00', client);
    const auth = await authorize(t, card.cardId, { amount: 25 }, client);
    const { processCardMessage } = await import('./processor.js');
    const { withTransaction } = await import('../../../platform/db/transaction.js');
    const { buildSandboxMessage } = await import('../sandbox/sandbox-messages.js');
    const { networkDataRefOf } = await import('../network/index.js');
    const now = before(auth.record.createdAt, 2000);
    const message = buildSandboxMessage(await cardOfMessage(t, card.cardId), now, { mti: '0220', processingCode: '000000', amountMinor: 2500n, networkDataRef: networkDataRefOf(auth.iso.request.fields['63']) ?? '' });
    const step = await withTransaction(t.deps.db, (tx) => processCardMessage(tx, { clientId: client.id, traceId: 'late-completion', now }, t.deps, message));
    if (!('record' in step) || step.record === null) throw new Error('expected an outcome with a record');
    expect(step.record).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', parentCardTransactionId: auth.parentCardTransactionId });
    expect(Date.parse(step.record.createdAt)).toBeGreaterThan(Date.parse(auth.record.createdAt));
    expect((await t.request({ url: `/v1/cards/transactions/${auth.parentCardTransactionId as string}`, key: client.key })).body.data).toMatchObject({ id: step.record.id, status: 'COMPLETED' });
    expect(ids((await lifecycle(t, auth.parentCardTransactionId, client)).children)).toEqual([auth.cardTransactionId, step.record.id]);
    expect((await cardEventsOf(t, auth.parentCardTransactionId, client)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING', 'CARD_TRANSACTION_COMPLETED']);
    // Newest first: the capture is posted after the hold.
    expect((await walletRecordsOf(t, auth.parentCardTransactionId, client)).map((record) => record.purpose)).toEqual(['CAPTURE', 'HOLD']);
    expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: '75.00', RESERVED: '0.00', PENDING: '0.00' });
    await expectLedgerClean(t);
  });

  it('a hold\'s expiry: its record comes after a partial reversal\'s', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '100.00', client);
    const auth = await authorize(t, card.cardId, { amount: 30 }, client);
    // The hold is due (7 days) when the reversal comes, and its timer runs late, at a moment before
    // the reversal (the file's last test: the shared clock moves on).
    t.clock.advance(8 * 24 * 3600 * 1000);
    const reversal = await onParent(t, auth.parentCardTransactionId, 'reversals', { amount: 10 }, client);
    const { expireSwipe } = await import('./processor.js');
    const { withTransaction } = await import('../../../platform/db/transaction.js');
    const now = before(reversal.record.createdAt, 1500);
    const expired = await withTransaction(t.deps.db, (tx) => expireSwipe(tx, { clientId: client.id, traceId: 'late-expiry', now }, auth.parentCardTransactionId));
    expect(expired).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'CANCELLED', amount: 20 });
    expect(Date.parse(expired?.createdAt ?? '')).toBeGreaterThan(Date.parse(reversal.record.createdAt));
    expect((await t.request({ url: `/v1/cards/transactions/${auth.parentCardTransactionId as string}`, key: client.key })).body.data).toMatchObject({ id: expired?.id, status: 'CANCELLED' });
    expect(ids((await lifecycle(t, auth.parentCardTransactionId, client)).children)).toEqual([auth.cardTransactionId, reversal.cardTransactionId, expired?.id]);
    expect((await cardEventsOf(t, auth.parentCardTransactionId, client)).map((event) => event.type)).toEqual(['CARD_TRANSACTION_PENDING', 'CARD_TRANSACTION_PENDING', 'CARD_TRANSACTION_CANCELLED']);
    expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: '100.00', RESERVED: '0.00', PENDING: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('a hold due to expire', () => {
  it('an increment that comes once the hold is due, before its timer has run, is declined 57 on the lifecycle; the timer then releases the hold', async () => {
    const client = await t.newClient();
    const card = await fundedCard(t, '100.00', client);
    const auth = await authorize(t, card.cardId, { amount: 30 }, client);
    // The client's clock reaches the expiry; nothing runs the timer yet (no worker in the tests).
    t.clock.set(auth.record.expiresAt as string);
    const increment = await onParent(t, auth.parentCardTransactionId, 'increments', { amount: 5 }, client);
    // Until 2026-12-06 it was approved and moved the expiry 7 days on.
    expect(increment).toMatchObject({ responseCode: '57', parentCardTransactionId: auth.parentCardTransactionId });
    expect(increment.record).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'FAILED', declineReason: 'TRANSACTION_NOT_PERMITTED', amount: 0 });
    expect(await lifecycle(t, auth.parentCardTransactionId, client)).toMatchObject({ status: 'PENDING', heldAmount: 30 });
    const advance = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 1 }, key: client.key });
    expect((advance.body.data.ran as { kind: string }[]).map((timer) => timer.kind)).toEqual(['card.hold-expiry']);
    expect(await lifecycle(t, auth.parentCardTransactionId, client)).toMatchObject({ status: 'CANCELLED', heldAmount: 0 });
    expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: '100.00', RESERVED: '0.00', PENDING: '0.00' });
    await expectLedgerClean(t);
  });
});
