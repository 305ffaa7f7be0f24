import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { businessBody, createIndividual } from '../../../test/customers/fixtures.js';
import { assignDedicated, assignVrn, linkedWallet, type LinkedWallet } from '../../../test/bank/fixtures.js';
import { sandboxOperatingBank } from '../../platform/config.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { luhnCheckDigit } from '../../platform/luhn.js';
import { findWallet } from '../customers/index.js';
import { accountNumberSerialKeys, virtualAccountSerialKey } from '../routes.js';
import { assignVirtualAccount } from '../virtual-accounts/index.js';
import { accountNumberKinds, accountSerialFor, checkOperatingBank, formatAccountNumber, isValidAccountNumber, type AccountNumberKind } from './index.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const operatingBank = { name: 'OpenBaaS Sandbox Bank (fictional)', routing_number: '026009991', bank_address: '100 Example Plaza, New York, NY 10004, US' };
const details = (walletId: string, type: string, key = t.clientA.key) => t.request({ url: `/v1/virtual-accounts/banking-details/${walletId}?type=${type}`, key });

describe('account number format', () => {
  it('is 12 digits: the kind prefix, a 9-digit serial and a Luhn check digit', () => {
    expect(formatAccountNumber('DEDICATED', 1n)).toBe(`71000000001${luhnCheckDigit('71000000001')}`);
    expect(formatAccountNumber('VRN', 123n)).toMatch(/^72000000123[0-9]$/);
    expect(isValidAccountNumber('VRN', formatAccountNumber('VRN', 99n))).toBe(true);
    const valid = formatAccountNumber('DEDICATED', 42n);
    const mistyped = `${valid.slice(0, -1)}${(Number(valid.slice(-1)) + 1) % 10}`;
    expect(isValidAccountNumber('DEDICATED', mistyped)).toBe(false);
    expect(isValidAccountNumber('VRN', valid)).toBe(false);
    expect(() => formatAccountNumber('VRN', 0n)).toThrow();
    expect(() => formatAccountNumber('VRN', 1_000_000_000n)).toThrow();
  });
});

describe('POST /v1/virtual-accounts/assign-dedicated-account-number', () => {
  let wallet: LinkedWallet;
  beforeAll(async () => {
    wallet = await linkedWallet(t);
  });

  it('201 with the new number; 200 with the same number the second time', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-dedicated-account-number', body: { walletId: wallet.walletId } });
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({ walletId: wallet.walletId, virtualAccountNumber: wallet.virtualAccountNumber, dedicatedAccountNumber: expect.stringMatching(/^71[0-9]{10}$/) });
    expect(isValidAccountNumber('DEDICATED', first.body.data.dedicatedAccountNumber)).toBe(true);
    const second = await t.request({ method: 'POST', url: '/v1/baas/virtual-accounts/assign-dedicated-account-number', body: { walletId: wallet.walletId } });
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
    const shown = await t.request({ url: `/v1/wallets/${wallet.walletId}` });
    expect(shown.body.data.virtualAccount.dedicatedAccountNumber).toBe(first.body.data.dedicatedAccountNumber);
  });

  it('numbers are unique across clients and never reused', async () => {
    const others = [await linkedWallet(t), await linkedWallet(t, t.clientB), await linkedWallet(t, t.clientB)];
    const numbers = [];
    for (const [index, other] of others.entries()) numbers.push(await assignDedicated(t, other, index === 0 ? t.clientA : t.clientB));
    expect(new Set(numbers).size).toBe(numbers.length);
    // The database refuses a second wallet with the same number, whichever client it belongs to.
    const taken = numbers[0] ?? '';
    await expect(t.deps.db.updateTable('wallets').set({ dedicated_account_number: taken }).where('id', '=', others[1]?.walletId ?? '').execute()).rejects.toThrow(/wallets_dedicated_account_number_key/);
  });

  it('409 VIRTUAL_ACCOUNT_REQUIRED for a wallet without a virtual account', async () => {
    const customer = await createIndividual(t);
    const response = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-dedicated-account-number', body: { walletId: customer.portfolios[0].wallets[0] } });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('VIRTUAL_ACCOUNT_REQUIRED');
  });

  it("404 for an unknown, malformed or other client's wallet", async () => {
    const foreign = await linkedWallet(t, t.clientB);
    for (const walletId of ['019ca945-0a00-74c1-8797-3bfde107f365', 'x', foreign.walletId]) {
      const response = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-dedicated-account-number', body: { walletId } });
      expect(response.status).toBe(404);
    }
  });

  it('400 without walletId', async () => {
    const response = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-dedicated-account-number', body: {} });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('walletId');
  });
});

describe('POST /v1/virtual-accounts/assign-vrn', () => {
  it('201 with the VRN; 200 with the same VRN the second time (also at the /v1/baas alias)', async () => {
    const wallet = await linkedWallet(t);
    const body = { userId: wallet.customerId, virtualAccountNumber: wallet.virtualAccountNumber };
    const first = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-vrn', body });
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({ walletId: wallet.walletId, vrnNumber: expect.stringMatching(/^72[0-9]{10}$/), virtualAccountNumber: wallet.virtualAccountNumber });
    const second = await t.request({ method: 'POST', url: '/v1/baas/virtual-accounts/assign-vrn', body });
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
    const customer = await t.request({ url: `/v1/customers/${wallet.customerId}` });
    expect(customer.body.data.bankingInfo).toEqual({ virtual_account_number: wallet.virtualAccountNumber, virtual_reference_number: first.body.data.vrnNumber });
  });

  it("404 when the virtual account number is not one of the customer's wallets", async () => {
    const wallet = await linkedWallet(t);
    const other = await linkedWallet(t);
    const foreign = await linkedWallet(t, t.clientB);
    const cases = [
      { userId: wallet.customerId, virtualAccountNumber: other.virtualAccountNumber },
      { userId: wallet.customerId, virtualAccountNumber: '700000999998' },
      { userId: wallet.customerId, virtualAccountNumber: 'not a number' },
      { userId: wallet.customerId, virtualAccountNumber: foreign.virtualAccountNumber },
      { userId: foreign.customerId, virtualAccountNumber: foreign.virtualAccountNumber },
      { userId: 'nobody', virtualAccountNumber: wallet.virtualAccountNumber },
    ];
    for (const body of cases) {
      const response = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-vrn', body });
      expect(response.status, JSON.stringify(body)).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
  });
});

describe('dedicated account numbers and VRNs drawn from the shared sequences', () => {
  /** The value the kind's sequence gives next (a new schema per file on PostgreSQL, a new database on PGlite: nothing else draws from it). */
  async function nextSequenceValue(kind: AccountNumberKind): Promise<bigint> {
    const sequence = sql.table(accountNumberKinds[kind].sequence);
    const result = await sql<{ last_value: string; is_called: boolean }>`SELECT last_value::text AS last_value, is_called FROM ${sequence}`.execute(t.deps.db);
    const row = result.rows[0];
    if (!row) throw new Error('no sequence row');
    return row.is_called ? BigInt(row.last_value) + 1n : BigInt(row.last_value);
  }
  const serialOf = (number: string) => BigInt(number.slice(2, 11));
  const assign = (kind: AccountNumberKind, wallet: LinkedWallet, client = t.clientA) => (kind === 'DEDICATED' ? assignDedicated(t, wallet, client) : assignVrn(t, wallet, client));

  it.each(['DEDICATED', 'VRN'] as const)('%s: valid and unique, but five assigned in a row by one client are not consecutive serials', async (kind) => {
    const wallets = [];
    for (let index = 0; index < 5; index++) wallets.push(await linkedWallet(t));
    const numbers = [];
    for (const wallet of wallets) numbers.push(await assign(kind, wallet));
    for (const number of numbers) {
      expect(number).toMatch(kind === 'DEDICATED' ? /^71[0-9]{10}$/ : /^72[0-9]{10}$/);
      expect(isValidAccountNumber(kind, number)).toBe(true);
    }
    expect(new Set(numbers).size).toBe(5);
    // With the bare sequence every step was +1; the permutation scatters them over 10^9 serials.
    const serials = numbers.map(serialOf);
    const steps = serials.slice(1).map((serial, index) => serial - (serials[index] ?? 0n));
    expect(steps.filter((step) => step > -1000n && step < 1000n)).toEqual([]);
    expect(serials.at(-1)).not.toBe((await nextSequenceValue(kind)) - 1n);
  });

  it.each(['DEDICATED', 'VRN'] as const)('%s: a number some wallet of any client already holds (given before serials were permuted) is passed over', async (kind) => {
    const key = accountNumberSerialKeys(t.deps)[kind];
    const next = await nextSequenceValue(kind);
    const taken = formatAccountNumber(kind, accountSerialFor(next, key));
    // Another client's wallet holds the number the next sequence value permutes to, as an old unpermuted number would.
    const holder = await linkedWallet(t, t.clientB);
    await t.deps.db.updateTable('wallets').set(kind === 'DEDICATED' ? { dedicated_account_number: taken } : { vrn: taken }).where('id', '=', holder.walletId).execute();
    const number = await assign(kind, await linkedWallet(t));
    expect(number).not.toBe(taken);
    expect(isValidAccountNumber(kind, number)).toBe(true);
    expect(number).toBe(formatAccountNumber(kind, accountSerialFor(next + 1n, key)));
    expect(await nextSequenceValue(kind)).toBe(next + 2n);
  });

  it('each kind has its own key: the same sequence value gives different serials', () => {
    const keys = accountNumberSerialKeys(t.deps);
    const serials = [virtualAccountSerialKey(t.deps), keys.DEDICATED, keys.VRN].map((key) => accountSerialFor(1n, key));
    expect(new Set(serials).size).toBe(3);
  });
});

describe('GET /v1/virtual-accounts/banking-details/:walletId', () => {
  it('without a dedicated number or VRN: ACH is 409 VRN_NOT_ASSIGNED; FEDWIRE gives the master account and a reference; SWIFT is nested', async () => {
    const wallet = await linkedWallet(t);
    const ach = await details(wallet.walletId, 'ACH');
    expect(ach.status).toBe(409);
    expect(ach.body.code).toBe('VRN_NOT_ASSIGNED');
    expect(ach.body.message).toMatch(/assign-vrn/);

    const fedwire = await details(wallet.walletId, 'FEDWIRE');
    expect(fedwire.status).toBe(200);
    expect(fedwire.body.data).toEqual({
      beneficiary: { name: 'Ada Lovelace', address: '350 Fifth Avenue, New York, NY 10118, US', account_number: '8000000001' },
      beneficiary_bank: operatingBank,
      reference: wallet.virtualAccountNumber,
    });

    const swift = await details(wallet.walletId, 'SWIFT');
    expect(swift.body.data).toEqual({
      beneficiary: { name: 'Ada Lovelace', address: '350 Fifth Avenue, New York, NY 10118, US', account_number: '8000000001' },
      beneficiary_bank: { name: operatingBank.name, swift: 'OBSBUS30', bank_address: operatingBank.bank_address },
      intermediary_bank: { name: 'OpenBaaS Correspondent Bank (fictional)', routing_number: '026011112', bic_code: 'OBCBUS30' },
      reference: wallet.virtualAccountNumber,
    });
  });

  it('with a VRN: ACH shows it; FEDWIRE includes it and needs no reference', async () => {
    const wallet = await linkedWallet(t);
    const vrn = await assignVrn(t, wallet);
    const ach = await details(wallet.walletId, 'ACH');
    expect(ach.status).toBe(200);
    expect(ach.body.data).toEqual({ beneficiary: { name: 'Ada Lovelace', address: expect.any(String), account_number: vrn }, beneficiary_bank: operatingBank, vrn });
    const fedwire = await details(wallet.walletId, 'FEDWIRE');
    expect(fedwire.body.data).toEqual({ beneficiary: { name: 'Ada Lovelace', address: expect.any(String), account_number: vrn }, beneficiary_bank: operatingBank, vrn });
    expect(fedwire.body.data).not.toHaveProperty('reference');
  });

  it('with a dedicated number: FEDWIRE and SWIFT give it without a reference; ACH still needs a VRN, then shows the dedicated number', async () => {
    const wallet = await linkedWallet(t);
    const dedicated = await assignDedicated(t, wallet);
    const fedwire = await details(wallet.walletId, 'FEDWIRE');
    expect(fedwire.body.data).toEqual({ beneficiary: { name: 'Ada Lovelace', address: expect.any(String), account_number: dedicated }, beneficiary_bank: operatingBank });
    const swift = await details(wallet.walletId, 'SWIFT');
    expect(swift.body.data.beneficiary.account_number).toBe(dedicated);
    expect(swift.body.data).not.toHaveProperty('reference');
    expect((await details(wallet.walletId, 'ACH')).status).toBe(409);
    const vrn = await assignVrn(t, wallet);
    const ach = await details(wallet.walletId, 'ACH');
    expect(ach.body.data.beneficiary.account_number).toBe(dedicated);
    expect(ach.body.data.vrn).toBe(vrn);
    expect((await details(wallet.walletId, 'FEDWIRE')).body.data).toMatchObject({ vrn, beneficiary: { account_number: dedicated } });
  });

  it('uses the legal name of a business and is served at the /v1/baas alias', async () => {
    const business = await t.request({ method: 'POST', url: '/v1/customers/business', body: businessBody() });
    const walletId = business.body.data.portfolios[0].wallets[0];
    // A business wallet gets its virtual account through KYB; here through the virtual-accounts module directly.
    await withTransaction(t.deps.db, async (tx) => {
      const row = await findWallet(tx, t.clientA.id, walletId);
      if (!row) throw new Error('wallet missing');
      await assignVirtualAccount(tx, { clientId: t.clientA.id, traceId: 'test', now: t.clock.now() }, row, virtualAccountSerialKey(t.deps));
    });
    const response = await t.request({ url: `/v1/baas/virtual-accounts/banking-details/${walletId}?type=SWIFT` });
    expect(response.status).toBe(200);
    expect(response.body.data.beneficiary).toMatchObject({ name: 'Analytical Engines LLC', address: '1 Market Street, San Francisco, CA 94105, US' });
  });

  it('409 VIRTUAL_ACCOUNT_REQUIRED for a wallet without a virtual account', async () => {
    const customer = await createIndividual(t);
    const response = await details(customer.portfolios[0].wallets[0], 'FEDWIRE');
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('VIRTUAL_ACCOUNT_REQUIRED');
  });

  it("404 for an unknown, malformed or other client's wallet", async () => {
    const foreign = await linkedWallet(t, t.clientB);
    for (const walletId of ['019ca945-0a00-74c1-8797-3bfde107f365', 'x', foreign.walletId]) {
      expect((await details(walletId, 'SWIFT')).status).toBe(404);
    }
  });

  it('400 without type or with another type', async () => {
    const wallet = await linkedWallet(t);
    expect((await t.request({ url: `/v1/virtual-accounts/banking-details/${wallet.walletId}` })).status).toBe(400);
    const wrong = await details(wallet.walletId, 'SEPA');
    expect(wrong.status).toBe(400);
    expect(wrong.body.details[0].field).toBe('type');
  });
});

describe('operating bank configuration', () => {
  it('refuses to start with a routing number that fails the checksum', () => {
    expect(() => checkOperatingBank({ ...sandboxOperatingBank, routingNumber: '026009992' })).toThrow(/OPERATING_BANK_ROUTING_NUMBER/);
    expect(() => checkOperatingBank({ ...sandboxOperatingBank, intermediaryBic: 'OBCB1230' })).toThrow(/INTERMEDIARY_BANK_BIC/);
    expect(() => checkOperatingBank(sandboxOperatingBank)).not.toThrow();
  });
});
