import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import {
  balanceOf,
  bankEventsOf,
  expectLedgerClean,
  fund,
  linkedWallet,
  withdrawalBody,
  type LinkedWallet,
} from '../../../test/bank/fixtures.js';
import { importDirectoryFiles } from '../bank-directory/index.js';

let t: TestContext;
let wallet: LinkedWallet;

beforeAll(async () => {
  t = await createTestApp();
  wallet = await linkedWallet(t);
  await fund(t, wallet, '100000.00');
  await fund(t, wallet, '500.00', 'USD_TEST');
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  await expectLedgerClean(t);
});

const url = '/v1/baas/transactions/withdrawal';
const withdraw = (overrides: Record<string, unknown> = {}, options: { url?: string; idempotencyKey?: string } = {}) =>
  t.request({ method: 'POST', url: options.url ?? url, body: withdrawalBody(wallet.walletId, overrides), ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}) });

/** The beneficiary fields a saved counterparty supplies. */
const beneficiaryFieldNames = ['name', 'transferNetwork', 'routingNumber', 'bicSwiftCode', 'accountNumber', 'street1', 'street2', 'cityCounty', 'stateRegion', 'zip', 'countryCode'];

const bankTransferCount = async () =>
  Number((await t.deps.db.selectFrom('bank_transfers').select((eb) => eb.fn.countAll<string>().as('count')).where('client_id', '=', t.clientA.id).executeTakeFirst())?.count ?? 0);

/** A 400 naming the field, with the code. */
async function expectRefused(overrides: Record<string, unknown>, field: string, code = 'VALIDATION_ERROR', pattern?: RegExp) {
  const before = await bankTransferCount();
  const response = await withdraw(overrides);
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.body.code).toBe(code);
  const detail = (response.body.details as { field: string; message: string }[]).find((entry) => entry.field === field);
  expect(detail, JSON.stringify(response.body)).toBeDefined();
  if (pattern) expect(detail?.message).toMatch(pattern);
  expect(await bankTransferCount()).toBe(before);
  return response;
}

// The specification's table, one row per network, with the identifiers each takes.
const usBank = { routingNumber: '021000021', bicSwiftCode: undefined };
const bicBank = { routingNumber: undefined, bicSwiftCode: 'DEUTDEFF' };
const networkRows = [
  { network: 'ACH_DOMESTIC', required: 'routingNumber', refused: 'bicSwiftCode', bank: usBank, bankNetwork: 'ACH', bankName: 'JPMorgan Chase Bank, N.A.' },
  { network: 'ACH_CROSSBORDER', required: 'routingNumber', refused: 'bicSwiftCode', bank: usBank, bankNetwork: 'ACH', bankName: 'JPMorgan Chase Bank, N.A.' },
  { network: 'FEDWIRE_DOMESTIC', required: 'routingNumber', refused: 'bicSwiftCode', bank: usBank, bankNetwork: 'FEDWIRE', bankName: 'JPMorgan Chase Bank, N.A.' },
  { network: 'FEDWIRE_CROSSBORDER', required: 'bicSwiftCode', refused: 'routingNumber', bank: bicBank, bankNetwork: 'FEDWIRE', bankName: 'Deutsche Bank AG' },
  { network: 'SWIFT', required: 'bicSwiftCode', refused: 'routingNumber', bank: bicBank, bankNetwork: 'SWIFT', bankName: 'Deutsche Bank AG' },
] as const;

describe('201', () => {
  it.each(networkRows)('$network with its $required: bank data from the directory, bankNetwork $bankNetwork', async (row) => {
    const response = await withdraw({ transferNetwork: row.network, ...row.bank });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const data = response.body.data;
    expect(data).toMatchObject({
      type: 'WITHDRAWAL_INITIATED',
      status: 'PENDING',
      direction: 'WITHDRAWAL',
      operation: 'DEBIT',
      amount: '25.00',
      asset: 'USD',
      walletId: wallet.walletId,
      transferNetwork: row.network,
      bankNetwork: row.bankNetwork,
      counterparty: null,
      remittanceMemo: null,
    });
    expect(data.beneficiary.bankName).toBe(row.bankName);
    expect(data.beneficiary[row.required]).toBe(row.required === 'routingNumber' ? '021000021' : 'DEUTDEFF');
    expect(data.beneficiary[row.refused]).toBeNull();
    expect(data.createdAt).toBe(t.clock.now().toISOString());
    expect(data).not.toHaveProperty('currencyCode');
  });

  it('reserves the amount at once and records BANK_WITHDRAWAL_TRANSACTION_PENDING with every payload field', async () => {
    const other = await linkedWallet(t);
    await fund(t, other, '100.00');
    const response = await t.request({ method: 'POST', url, body: withdrawalBody(other.walletId, { amount: '40.10', remittanceMemo: 'Rent March' }) });
    expect(response.status).toBe(201);
    expect(await balanceOf(t, other.walletId)).toEqual({ AVAILABLE: '59.90', RESERVED: '40.10', PENDING: '0.00' });
    const events = await bankEventsOf(t, response.body.data.parentBankTransactionId);
    expect(events.map((event) => event.type)).toEqual(['BANK_WITHDRAWAL_TRANSACTION_PENDING']);
    expect(events[0].data).toEqual({
      walletId: other.walletId,
      bankTransactionId: response.body.data.id,
      parentBankTransactionId: response.body.data.parentBankTransactionId,
      amount: '40.10',
      asset: 'USD',
      bankNetwork: 'ACH',
      counterparty: null,
      traceId: response.body.traceId,
    });
    expect(response.body.data.remittanceMemo).toBe('Rent March');
  });

  it('is served at POST /v1/baas/withdrawals as well', async () => {
    const response = await withdraw({}, { url: '/v1/baas/withdrawals' });
    expect(response.status).toBe(201);
    expect(response.body.data.type).toBe('WITHDRAWAL_INITIATED');
  });

  it.each([
    ['ACH_DOMESTIC', usBank, 20],
    ['ACH_CROSSBORDER', usBank, 20],
    ['FEDWIRE_DOMESTIC', usBank, 35],
    ['FEDWIRE_CROSSBORDER', bicBank, 35],
    ['SWIFT', bicBank, 120],
  ] as const)('%s takes a remittanceMemo of exactly %i characters', async (network, bank, length) => {
    const memo = 'A'.repeat(length);
    const response = await withdraw({ transferNetwork: network, ...bank, remittanceMemo: memo });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.remittanceMemo).toBe(memo);
  });

  it("takes every allowed memo character: letters, digits, spaces and / - . , ( ) ' + : ? # &", async () => {
    const memo = "Ab 9/-.,()'+:?#&";
    const response = await withdraw({ remittanceMemo: memo });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.remittanceMemo).toBe(memo);
  });

  it('leaves the memo out of the payment when remittanceMemo is absent or null', async () => {
    expect((await withdraw({ remittanceMemo: null })).body.data.remittanceMemo).toBeNull();
    expect((await withdraw()).body.data.remittanceMemo).toBeNull();
  });

  it('takes an IBAN as the account number on SWIFT, and an intermediary bank of 11 characters', async () => {
    const response = await withdraw({ transferNetwork: 'SWIFT', ...bicBank, accountNumber: 'DE89370400440532013000', intermediaryBankBic: 'CHASUS33XXX' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.beneficiary).toMatchObject({ accountNumber: 'DE89370400440532013000', intermediaryBankBic: 'CHASUS33XXX', bankCountry: 'DE' });
  });

  it('accepts USD_TEST in the sandbox', async () => {
    const before = await balanceOf(t, wallet.walletId, 'USD_TEST');
    const response = await withdraw({ asset: 'USD_TEST', amount: '5.00' });
    expect(response.status).toBe(201);
    expect(response.body.data.asset).toBe('USD_TEST');
    const after = await balanceOf(t, wallet.walletId, 'USD_TEST');
    expect(Number(after.RESERVED) - Number(before.RESERVED)).toBeCloseTo(5);
  });

  it('takes null for the identifier a network does not use', async () => {
    const response = await withdraw({ bicSwiftCode: null, intermediaryBankBic: null, street2: null });
    expect(response.status).toBe(201);
  });

  it('masks the party identification in the response', async () => {
    const response = await withdraw({ identificationTypeCode: 'SSN', identificationValue: '123456789' });
    expect(response.body.data.beneficiary.identificationValue).toBe('*****6789');
  });

  it('fills the beneficiary from a saved counterparty (counterpartyId)', async () => {
    const created = await t.request({
      method: 'POST',
      url: `/v1/customers/${wallet.customerId}/portfolios/${wallet.portfolioId}/counterparties`,
      body: { transferNetwork: 'FEDWIRE_DOMESTIC', accountHolderName: 'Ada Byron', routingNumber: '021000089', accountNumberValue: '555000111', street1: '2 Side Road', cityCounty: 'Boston', stateRegion: 'MA', zip: '02110', countryCode: 'US' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const response = await t.request({ method: 'POST', url, body: { walletId: wallet.walletId, amount: '12.00', personTypeCode: 'P', counterpartyId: created.body.data.id } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({ counterpartyId: created.body.data.id, transferNetwork: 'FEDWIRE_DOMESTIC', bankNetwork: 'FEDWIRE' });
    expect(response.body.data.beneficiary).toMatchObject({ name: 'Ada Byron', accountNumber: '555000111', routingNumber: '021000089', bankName: 'Citibank, N.A.', cityCounty: 'Boston' });
  });

  it('takes accented letters and other scripts in the name and address, as sent (only control and format characters are refused)', async () => {
    const text = { name: 'Zoë Dvořák-Ñúñez 🚀', street1: 'Hauptstraße 1', street2: 'Bâtiment B', cityCounty: 'Zürich', stateRegion: 'Île-de-France', zip: 'Ōsaka 530' };
    const response = await withdraw(text);
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.beneficiary).toMatchObject(text);
  });

  it('keeps an IBAN in its electronic form (upper case), as it does the BIC, in the answer and in what is stored', async () => {
    const response = await withdraw({ transferNetwork: 'SWIFT', routingNumber: undefined, bicSwiftCode: 'deutdeff', accountNumber: 'de89370400440532013000' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.beneficiary).toMatchObject({ accountNumber: 'DE89370400440532013000', bicSwiftCode: 'DEUTDEFF' });
    const stored = await t.request({ url: `/v1/baas/transactions/${response.body.data.id}` });
    expect(stored.body.data.beneficiary).toMatchObject({ accountNumber: 'DE89370400440532013000', bicSwiftCode: 'DEUTDEFF' });
    // An account number that is not an IBAN is kept as sent.
    const plain = await withdraw({ accountNumber: '00012ab' });
    expect(plain.body.data.beneficiary.accountNumber).toBe('00012ab');
  });

  it('takes null as absent for every optional field: counterpartyId, asset, and the beneficiary fields next to counterpartyId', async () => {
    const flat = await withdraw({ counterpartyId: null, asset: null, street2: null, identificationTypeCode: null, identificationValue: null });
    expect(flat.status, JSON.stringify(flat.body)).toBe(201);
    expect(flat.body.data).toMatchObject({ counterpartyId: null, asset: 'USD' });
    const created = await t.request({
      method: 'POST',
      url: `/v1/customers/${wallet.customerId}/portfolios/${wallet.portfolioId}/counterparties`,
      body: { transferNetwork: 'ACH_DOMESTIC', accountHolderName: 'Null Safe', routingNumber: '021000021', accountNumberValue: '777000111', street1: '3 Rue', cityCounty: 'Austin', stateRegion: 'TX', zip: '73301', countryCode: 'US' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const nulls = Object.fromEntries(beneficiaryFieldNames.map((field) => [field, null]));
    const response = await t.request({ method: 'POST', url, body: { walletId: wallet.walletId, amount: '2.00', personTypeCode: 'P', counterpartyId: created.body.data.id, ...nulls } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.beneficiary).toMatchObject({ name: 'Null Safe', accountNumber: '777000111', routingNumber: '021000021', street2: null });
  });

  it('reserves once for a repeated Idempotency-Key', async () => {
    const before = await balanceOf(t, wallet.walletId);
    const first = await withdraw({ amount: '3.00' }, { idempotencyKey: 'withdrawal-once' });
    const second = await withdraw({ amount: '3.00' }, { idempotencyKey: 'withdrawal-once' });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    const after = await balanceOf(t, wallet.walletId);
    expect(Math.round((Number(after.RESERVED) - Number(before.RESERVED)) * 100)).toBe(300);
  });
});

describe('400', () => {
  describe('routingNumber and bicSwiftCode per transferNetwork (every row of the table)', () => {
    it.each(networkRows)('$network without its $required', async (row) => {
      await expectRefused({ transferNetwork: row.network, routingNumber: undefined, bicSwiftCode: undefined }, row.required, 'VALIDATION_ERROR', /is required for/);
    });

    it.each(networkRows)('$network with $refused as well', async (row) => {
      await expectRefused({ transferNetwork: row.network, routingNumber: '021000021', bicSwiftCode: 'DEUTDEFF' }, row.refused, 'VALIDATION_ERROR', /is not allowed for/);
    });

    it.each(networkRows)('$network with only the identifier of the other kind', async (row) => {
      const contrary = row.required === 'routingNumber' ? { routingNumber: undefined, bicSwiftCode: 'DEUTDEFF' } : { routingNumber: '021000021', bicSwiftCode: undefined };
      const response = await expectRefused({ transferNetwork: row.network, ...contrary }, row.required, 'VALIDATION_ERROR', /is required for/);
      expect(response.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['bicSwiftCode', 'routingNumber']);
    });
  });

  it('a routing number that fails the ABA checksum', async () => {
    await expectRefused({ routingNumber: '021000022' }, 'routingNumber', 'INVALID_ROUTING_NUMBER', /check digit/);
  });

  it('an empty routingNumber or bicSwiftCode counts as given and malformed, as on counterparties (docs/bank-directory.md)', async () => {
    await expectRefused({ routingNumber: '' }, 'routingNumber', 'INVALID_ROUTING_NUMBER');
    await expectRefused({ transferNetwork: 'SWIFT', routingNumber: undefined, bicSwiftCode: '' }, 'bicSwiftCode', 'INVALID_SWIFT_CODE');
    await expectRefused({ bicSwiftCode: '' }, 'bicSwiftCode', 'VALIDATION_ERROR', /is not allowed for/);
  });

  it('a malformed SWIFT code', async () => {
    await expectRefused({ transferNetwork: 'SWIFT', routingNumber: undefined, bicSwiftCode: 'DEUT12FF' }, 'bicSwiftCode', 'INVALID_SWIFT_CODE');
  });

  it('an IBAN, or any account number over 17 characters, on ACH_DOMESTIC', async () => {
    await expectRefused({ transferNetwork: 'ACH_DOMESTIC', ...usBank, accountNumber: 'DE89370400440532013000' }, 'accountNumber', 'VALIDATION_ERROR', /not an ACH account number but an IBAN/);
    // One short enough for the field (Belgium's have 16 characters) all the same: until 2026-12-03 only the length was checked (found by an audit).
    await expectRefused({ transferNetwork: 'ACH_DOMESTIC', ...usBank, accountNumber: 'BE68539007547034' }, 'accountNumber', 'VALIDATION_ERROR', /not an ACH account number but an IBAN/);
    await expectRefused({ transferNetwork: 'ACH_DOMESTIC', ...usBank, accountNumber: '1'.repeat(18) }, 'accountNumber', 'VALIDATION_ERROR', /at most 17 characters on ACH_DOMESTIC/);
  });

  it('an account number that looks like an IBAN but fails its checksum', async () => {
    await expectRefused({ transferNetwork: 'SWIFT', ...bicBank, accountNumber: 'DE89370400440532013001' }, 'accountNumber', 'INVALID_IBAN');
  });

  it.each([
    ['ACH_DOMESTIC', usBank, 21],
    ['ACH_CROSSBORDER', usBank, 21],
    ['FEDWIRE_DOMESTIC', usBank, 36],
    ['FEDWIRE_CROSSBORDER', bicBank, 36],
    ['SWIFT', bicBank, 121],
    ['SWIFT', bicBank, 140],
  ] as const)('%s refuses a remittanceMemo of %i characters, naming the network limit', async (network, bank, length) => {
    await expectRefused({ transferNetwork: network, ...bank, remittanceMemo: 'B'.repeat(length) }, 'remittanceMemo', 'VALIDATION_ERROR', /must be at most (20|35|120) characters/);
  });

  it('refuses 141 characters on any network (the ceiling)', async () => {
    for (const [network, bank] of [['ACH_DOMESTIC', usBank], ['SWIFT', bicBank]] as const) {
      await expectRefused({ transferNetwork: network, ...bank, remittanceMemo: 'C'.repeat(141) }, 'remittanceMemo', 'VALIDATION_ERROR', /140/);
    }
  });

  it.each(['!', '"', '$', '%', '*', ';', '<', '=', '>', '@', '[', '\\', ']', '^', '_', '`', '{', '|', '}', '~', 'é', 'ß', '€', '\n', '\t'])(
    'refuses the memo character %j',
    async (character) => {
      await expectRefused({ remittanceMemo: `Pay ${character} 1` }, 'remittanceMemo', 'VALIDATION_ERROR', /not allowed/);
    },
  );

  describe('name and address fields: control characters, format characters, blank values', () => {
    const textFields = ['name', 'street1', 'street2', 'cityCounty', 'stateRegion', 'zip'] as const;
    /** The message names the one refused character by its code point, such as (U+000A). */
    const namesCharacter = (codePoint: string) => new RegExp(`^contains characters that are not allowed \\(${codePoint.replace('+', '\\+')}\\)`);

    it.each(textFields)('%s with a line break, a bidi override or a zero-width space', async (field) => {
      for (const [character, shown] of [['\n', 'U+000A'], ['\u202e', 'U+202E'], ['\u200b', 'U+200B']] as const) {
        await expectRefused({ [field]: `A${character}B` }, field, 'VALIDATION_ERROR', namesCharacter(shown));
      }
    });

    it.each(['identificationTypeCode', 'identificationValue'])('%s (always read from the body) with a line break, a bidi override or a zero-width space', async (field) => {
      for (const [character, shown] of [['\n', 'U+000A'], ['\u202e', 'U+202E'], ['\u200b', 'U+200B']] as const) {
        await expectRefused({ identificationTypeCode: 'SSN', identificationValue: '123456789', [field]: `A${character}B` }, field, 'VALIDATION_ERROR', namesCharacter(shown));
      }
      await expectRefused({ identificationTypeCode: 'SSN', identificationValue: '123456789', [field]: '  ' }, field, 'VALIDATION_ERROR', /must not be empty or only white space/);
    });

    it('an identification type without its value, or a value without its type: 400 naming the missing one, nothing written', async () => {
      await expectRefused({ identificationTypeCode: 'SSN' }, 'identificationValue', 'VALIDATION_ERROR', /send both or neither/);
      await expectRefused({ identificationValue: '123456789', identificationTypeCode: null }, 'identificationTypeCode', 'VALIDATION_ERROR', /send both or neither/);
    });

    it.each(textFields)('%s that is only white space', async (field) => {
      await expectRefused({ [field]: '   ' }, field, 'VALIDATION_ERROR', /must not be empty or only white space/);
      await expectRefused({ [field]: '\u00a0\u3000' }, field, 'VALIDATION_ERROR', /must not be empty or only white space/);
    });

    it.each([
      ['\u0007', 'BEL (C0)'],
      ['\t', 'tab'],
      ['\r', 'carriage return'],
      ['\u007f', 'DEL'],
      ['\u0085', 'next line (C1)'],
      ['\u009b', 'CSI (C1)'],
      ['\u200d', 'zero-width joiner (Cf)'],
      ['\u2066', 'left-to-right isolate (Cf)'],
      ['\ufeff', 'byte order mark (Cf)'],
      ['\u00ad', 'soft hyphen (Cf)'],
      ['\u2028', 'line separator'],
      ['\u2029', 'paragraph separator'],
    ])('name with %j (%s), named by its code point', async (character) => {
      const codePoint = `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
      await expectRefused({ name: `Grace${character}Hopper` }, 'name', 'VALIDATION_ERROR', namesCharacter(codePoint));
    });

    it("the audit's name with a bell and a line break, and every blank field at once", async () => {
      const bell = await expectRefused({ name: 'Zoë 🚀 \u0007bell\nnewline' }, 'name');
      expect(bell.body.details).toEqual([{ field: 'name', message: expect.stringMatching(/^contains characters that are not allowed \(U\+0007, U\+000A\)/) }]);
      const blank = await withdraw({ name: '   ', street1: ' ', cityCounty: ' ', stateRegion: ' ', zip: ' ' });
      expect(blank.status).toBe(400);
      expect(blank.body.details.map((detail: { field: string }) => detail.field)).toEqual(['name', 'street1', 'cityCounty', 'stateRegion', 'zip']);
    });
  });

  it('refuses a blank memo', async () => {
    await expectRefused({ remittanceMemo: '   ' }, 'remittanceMemo', 'VALIDATION_ERROR', /leave the field out/);
  });

  it.each([
    ['destination', { name: 'x' }, /flat since 2025-12-08/],
    ['details', { note: 'x' }, /flat since 2025-12-08/],
    ['preferredPaymentScheme', 'ACH', /renamed transferNetwork/],
    ['bankName', 'Some Bank', /derived from the routingNumber or bicSwiftCode/],
    ['bankAddress', '1 Bank Street', /derived from the routingNumber or bicSwiftCode/],
  ] as const)('refuses the removed field %s, naming its replacement', async (field, value, replacement) => {
    const response = await withdraw({ [field]: value });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('FIELD_REMOVED');
    expect(response.body.details[0].field).toBe(field);
    expect(response.body.message).toMatch(replacement);
  });

  it('intermediaryBankBic: 12 characters, a malformed BIC, and on a domestic network', async () => {
    await expectRefused({ transferNetwork: 'SWIFT', ...bicBank, intermediaryBankBic: 'CHASUS33XXXX' }, 'intermediaryBankBic', 'VALIDATION_ERROR', /at most 11 characters/);
    await expectRefused({ transferNetwork: 'SWIFT', ...bicBank, intermediaryBankBic: 'CHAS1234' }, 'intermediaryBankBic', 'INVALID_SWIFT_CODE');
    await expectRefused({ intermediaryBankBic: 'CHASUS33' }, 'intermediaryBankBic', 'VALIDATION_ERROR', /not allowed for ACH_DOMESTIC/);
  });

  it('personTypeCode other than P or L, or missing', async () => {
    await expectRefused({ personTypeCode: 'X' }, 'personTypeCode');
    await expectRefused({ personTypeCode: 'p' }, 'personTypeCode');
    await expectRefused({ personTypeCode: undefined }, 'personTypeCode');
  });

  it('an amount that is a JSON number, or has too many decimals', async () => {
    await expectRefused({ amount: 25 }, 'amount');
    await expectRefused({ amount: '10.001' }, 'amount', 'INVALID_AMOUNT');
    await expectRefused({ amount: '0' }, 'amount', 'INVALID_AMOUNT');
  });

  it('an asset other than USD (and USD_TEST in the sandbox)', async () => {
    await expectRefused({ asset: 'EUR' }, 'asset', 'VALIDATION_ERROR', /USD or USD_TEST/);
    await expectRefused({ asset: 'DOGE' }, 'asset', 'UNKNOWN_ASSET');
    // An unknown code is offered the assets a bank payment takes, not every asset.
    await expectRefused({ asset: 'usd' }, 'asset', 'UNKNOWN_ASSET', /one of USD, USD_TEST$/);
  });

  it('an unknown field, or a country code that is not ISO 3166-1', async () => {
    await expectRefused({ nickname: 'x' }, 'nickname');
    await expectRefused({ countryCode: 'XX' }, 'countryCode');
  });

  it('names every missing beneficiary field when there is no counterpartyId', async () => {
    const response = await t.request({ method: 'POST', url, body: { walletId: wallet.walletId, amount: '1.00', personTypeCode: 'P' } });
    expect(response.status).toBe(400);
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual(['name', 'transferNetwork', 'accountNumber', 'street1', 'cityCounty', 'stateRegion', 'zip', 'countryCode']);
  });

  // Until the thirty-fourth session `{}` named walletId, amount and personTypeCode, and the
  // beneficiary fields only on the next try (the route's own check runs after the schema).
  it('an empty body names every missing field at once, the beneficiary fields too; with counterpartyId only the schema\'s', async () => {
    const empty = await t.request({ method: 'POST', url, body: {} });
    expect(empty.status).toBe(400);
    const beneficiary = ['name', 'transferNetwork', 'accountNumber', 'street1', 'cityCounty', 'stateRegion', 'zip', 'countryCode'];
    expect(empty.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['walletId', 'amount', 'personTypeCode', ...beneficiary].sort());
    expect(empty.body.details).toContainEqual({ field: 'name', message: 'is required (or counterpartyId)' });
    const withCounterparty = await t.request({ method: 'POST', url, body: { counterpartyId: crypto.randomUUID() } });
    expect(withCounterparty.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['amount', 'personTypeCode', 'walletId']);
    // null is the same as absent (the schema takes it): the same eleven fields.
    const nulls = await t.request({ method: 'POST', url, body: { counterpartyId: null, name: null, transferNetwork: null } });
    expect(nulls.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['walletId', 'amount', 'personTypeCode', ...beneficiary].sort());
  });

  it('refuses beneficiary fields next to counterpartyId', async () => {
    const created = await t.request({
      method: 'POST',
      url: `/v1/customers/${wallet.customerId}/portfolios/${wallet.portfolioId}/counterparties`,
      body: { transferNetwork: 'ACH_DOMESTIC', accountHolderName: 'No Address', routingNumber: '021000021', accountNumberValue: '42' },
    });
    const withName = await t.request({ method: 'POST', url, body: { walletId: wallet.walletId, amount: '1.00', personTypeCode: 'P', counterpartyId: created.body.data.id, name: 'Other' } });
    expect(withName.status).toBe(400);
    expect(withName.body.details[0]).toEqual({ field: 'name', message: expect.stringMatching(/comes from the counterparty/) });
    // This counterparty has no address, which a withdrawal needs.
    const incomplete = await t.request({ method: 'POST', url, body: { walletId: wallet.walletId, amount: '1.00', personTypeCode: 'P', counterpartyId: created.body.data.id } });
    expect(incomplete.status).toBe(400);
    expect(incomplete.body.details[0]).toEqual({ field: 'counterpartyId', message: expect.stringMatching(/has no street1/) });
  });

  it('WALLET_NOT_LINKED for a wallet without a virtual account', async () => {
    const customer = await createIndividual(t);
    const response = await t.request({ method: 'POST', url, body: withdrawalBody(customer.portfolios[0].wallets[0]) });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('WALLET_NOT_LINKED');
    expect(response.body.message).toMatch(/must be linked to a virtual account first/);
  });

  it('ROUTING_NUMBER_NOT_ELIGIBLE when the bank does not take the network', async () => {
    // TD Bank 031101266 takes Fedwire but not ACH; Bank of America 011000138 takes ACH but not Fedwire.
    await expectRefused({ routingNumber: '031101266' }, 'routingNumber', 'ROUTING_NUMBER_NOT_ELIGIBLE', /does not take ACH entries .*; send the payment by FEDWIRE_DOMESTIC$/);
    await expectRefused({ transferNetwork: 'FEDWIRE_DOMESTIC', routingNumber: '011000138' }, 'routingNumber', 'ROUTING_NUMBER_NOT_ELIGIBLE', /cannot receive Fedwire.*; send the payment by ACH_DOMESTIC$/);
    // Cross-border, the suggestion is a cross-border network (FEDWIRE_DOMESTIC refuses an account abroad).
    await expectRefused(
      { transferNetwork: 'ACH_CROSSBORDER', routingNumber: '031101266', accountNumber: 'GB82WEST12345698765432', countryCode: 'GB' },
      'routingNumber',
      'ROUTING_NUMBER_NOT_ELIGIBLE',
      /does not take ACH entries .*; send the payment by SWIFT or FEDWIRE_CROSSBORDER, which name the bank by its BIC$/,
    );
    expect((await withdraw({ transferNetwork: 'FEDWIRE_DOMESTIC', routingNumber: '031101266' })).status).toBe(201);
  });

  describe('ROUTING_NUMBER_NOT_ELIGIBLE at a bank that takes neither network', () => {
    // Its own database: the Fedwire directory is replaced by a file listing a settlement-only
    // participant, which is in neither FedACH nor the Fedwire funds-transfer set.
    let own: TestContext;
    let ownWallet: LinkedWallet;
    const settlementOnly = '021053968';

    beforeAll(async () => {
      own = await createTestApp();
      const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-withdrawal-fedwire-'));
      const fpddir = path.join(folder, 'fpddir.txt');
      const line = (routingNumber: string, name: string, status: string) =>
        `${routingNumber}${name.slice(0, 18).padEnd(18)}${name.padEnd(36)}NY${'NEW YORK'.padEnd(25)}${status}20240102`;
      fs.writeFileSync(fpddir, `${line('021000021', 'JPMORGAN CHASE BANK, NA', 'Y Y')}\n${line(settlementOnly, 'RTPS PREFUNDED ACCOUNT', 'YSN')}\n`);
      try {
        await importDirectoryFiles(own.deps.db, { fedwire: fpddir }, own.clock.now());
      } finally {
        fs.rmSync(folder, { recursive: true, force: true });
      }
      ownWallet = await linkedWallet(own);
      await fund(own, ownWallet, '100.00');
    });
    afterAll(async () => {
      await own?.close();
    });

    // Until 2026-12-05 each message sent the payment to the other network, which refused it too.
    it.each(['ACH_DOMESTIC', 'ACH_CROSSBORDER', 'FEDWIRE_DOMESTIC'])('%s: says the bank takes neither, and suggests no other network', async (transferNetwork) => {
      const response = await own.request({ method: 'POST', url, body: withdrawalBody(ownWallet.walletId, { transferNetwork, routingNumber: settlementOnly }) });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.code).toBe('ROUTING_NUMBER_NOT_ELIGIBLE');
      expect(response.body.details).toEqual([
        {
          field: 'routingNumber',
          message: `RTPS PREFUNDED ACCOUNT (${settlementOnly}) takes neither ACH entries nor Fedwire funds transfers (it is not in the FedACH directory, and the Fedwire directory lists it as settlement-only or not eligible for funds transfers); check the routing number with the beneficiary`,
        },
      ]);
      expect(response.body.message).toBe(`routingNumber: ${response.body.details[0].message}.`);
      expect(response.body.message).not.toMatch(/send the payment by/);
      await expectLedgerClean(own);
    });
  });

  it('a counterparty of another portfolio than the wallet', async () => {
    const other = await linkedWallet(t);
    const created = await t.request({
      method: 'POST',
      url: `/v1/customers/${other.customerId}/portfolios/${other.portfolioId}/counterparties`,
      body: { transferNetwork: 'ACH_DOMESTIC', accountHolderName: 'X', routingNumber: '021000021', accountNumberValue: '42', street1: 'a', cityCounty: 'b', stateRegion: 'NY', zip: '1', countryCode: 'US' },
    });
    const response = await t.request({ method: 'POST', url, body: { walletId: wallet.walletId, amount: '1.00', personTypeCode: 'L', counterpartyId: created.body.data.id } });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('counterpartyId');
  });
});

describe('404', () => {
  it('an unknown, malformed or other client\'s wallet', async () => {
    const otherClient = await linkedWallet(t, t.clientB);
    for (const walletId of ['019ca945-0a00-74c1-8797-3bfde107f365', 'not-a-uuid', otherClient.walletId]) {
      const response = await t.request({ method: 'POST', url, body: withdrawalBody(walletId) });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
      expect(response.body.message).toBe('Wallet not found');
    }
  });

  it('BANK_NOT_FOUND for a well-formed routing number or BIC the directory does not know', async () => {
    const routing = await withdraw({ routingNumber: '123456780' });
    expect(routing.status).toBe(404);
    expect(routing.body.code).toBe('BANK_NOT_FOUND');
    expect(routing.body.details[0].field).toBe('routingNumber');
    const bic = await withdraw({ transferNetwork: 'SWIFT', ...bicBank, bicSwiftCode: 'ZZZZDEFF' });
    expect(bic.status).toBe(404);
    expect(bic.body.details[0].field).toBe('bicSwiftCode');
    // The intermediary bank is looked up as the beneficiary's bank is (until 2026-12-04 only its form was checked).
    const before = await bankTransferCount();
    const intermediary = await withdraw({ transferNetwork: 'SWIFT', ...bicBank, intermediaryBankBic: 'ZZZZUS33' });
    expect(intermediary.status).toBe(404);
    expect(intermediary.body).toMatchObject({ code: 'BANK_NOT_FOUND', details: [{ field: 'intermediaryBankBic' }] });
    expect(await bankTransferCount()).toBe(before);
  });

  it('an unknown or malformed counterpartyId', async () => {
    for (const counterpartyId of ['019ca945-0a00-74c1-8797-3bfde107f365', 'nope']) {
      const response = await t.request({ method: 'POST', url, body: { walletId: wallet.walletId, amount: '1.00', personTypeCode: 'P', counterpartyId } });
      expect(response.status).toBe(404);
      expect(response.body.message).toBe('Counterparty not found');
    }
  });
});

describe('422', () => {
  it('INSUFFICIENT_FUNDS when the amount exceeds AVAILABLE: nothing is reserved, no event', async () => {
    const poor = await linkedWallet(t);
    await fund(t, poor, '10.00');
    const eventsBefore = (await t.request({ url: '/v1/events?limit=200&type=BANK_WITHDRAWAL_TRANSACTION_PENDING' })).body.pagination.totalResults;
    const response = await t.request({ method: 'POST', url, body: withdrawalBody(poor.walletId, { amount: '10.01' }) });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(response.body.details).toEqual([{ field: 'amount', message: 'exceeds the AVAILABLE balance of walletId' }]);
    expect(await balanceOf(t, poor.walletId)).toEqual({ AVAILABLE: '10.00', RESERVED: '0.00', PENDING: '0.00' });
    expect((await t.request({ url: '/v1/events?limit=200&type=BANK_WITHDRAWAL_TRANSACTION_PENDING' })).body.pagination.totalResults).toBe(eventsBefore);
    // Exactly the available amount is fine.
    expect((await t.request({ method: 'POST', url, body: withdrawalBody(poor.walletId, { amount: '10.00' }) })).status).toBe(201);
    expect(await balanceOf(t, poor.walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '10.00', PENDING: '0.00' });
  });
});
