/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appWithLogCapture } from '../../../test/support/log-capture.js';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { linkedWallet } from '../../../test/bank/fixtures.js';
import { cardPrograms, issuedCard } from '../../../test/cards/fixtures.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import { cardVaultOf, defaultCardPrograms, seedMissingCardPrograms } from './index.js';
import { isValidPan } from './network/index.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The card's number, read from the vault the way only the server can. */
async function panOf(cardId: string, clientId = t.clientA.id): Promise<string> {
  const row = await t.deps.db.selectFrom('cards').select('pan_encrypted').where('client_id', '=', clientId).where('id', '=', cardId).executeTakeFirstOrThrow();
  return cardVaultOf(t.deps).decryptPan(row.pan_encrypted, clientId, cardId);
}

describe('card programs', () => {
  it('every client starts with the three default programs, with the contract defaults', async () => {
    const response = await t.request({ url: '/v1/cards/programs' });
    expect(response.status).toBe(200);
    const programs = response.body.data as any[];
    expect(programs.map((program) => [program.name, program.cardType, program.cardTransactionHandler])).toEqual([
      ['Standard Debit', 'DEBIT', 'STANDARD'],
      ['Cooperative Debit', 'DEBIT', 'COOP_AUTH'],
      ['Crypto-backed Credit', 'CREDIT', 'STANDARD'],
    ]);
    const [standard, coop] = programs;
    expect(standard.coopAuth).toBeNull();
    expect(coop.coopAuth).toEqual({ timeoutMs: 2000, standIn: { mode: 'DECLINE', responseCode: '91', maxAmountMinor: null }, partialApprovalEnabled: true });
    expect(standard.holdExpiry).toMatchObject({ defaultDays: 7, extendedDays: 31 });
    expect(standard.holdExpiry.extendedMccs).toEqual(expect.arrayContaining(['7011', '3501-3999', '7512', '7513', '3351-3500', '4411']));
    expect(standard.overCapture.byMcc).toContainEqual({ mccs: ['7512', '7513', '3351-3500'], pct: 15, maxAmountMinor: 7500 });
    expect(standard).toMatchObject({ currency: 'USD', network: 'VISA', bin: '424242', revealPhysicalCards: false });

    const one = await t.request({ url: `/v1/cards/programs/${coop.id as string}` });
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(coop);
  });

  it('a client created before card programs existed gets them at the next start, and nothing is added twice', async () => {
    const client = await t.newClient('Older client');
    await t.deps.db.deleteFrom('card_programs').where('client_id', '=', client.id).execute();
    expect((await t.request({ url: '/v1/cards/programs', key: client.key })).body.data).toEqual([]);
    expect(await seedMissingCardPrograms(t.deps.db, t.clock.now())).toBe(1);
    expect(await seedMissingCardPrograms(t.deps.db, t.clock.now())).toBe(0);
    const names = ((await t.request({ url: '/v1/cards/programs', key: client.key })).body.data as any[]).map((program) => program.name);
    expect(names).toEqual(defaultCardPrograms.map((program) => program.name));
  });

  it('PATCH replaces whole settings documents and keeps the others', async () => {
    const client = await t.newClient();
    const coop = (await cardPrograms(t, client))['Cooperative Debit'];
    const coopAuth = { timeoutMs: 500, standIn: { mode: 'APPROVE_UP_TO', responseCode: '05', maxAmountMinor: 2500 }, partialApprovalEnabled: false };
    const limits = { perTransactionMinor: 10_000, dailyMinor: 50_000, dailyCount: 5 };
    const response = await t.request({ method: 'PATCH', url: `/v1/cards/programs/${coop.id as string}`, key: client.key, body: { coopAuth, limits } });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ coopAuth, limits, holdExpiry: coop.holdExpiry, overCapture: coop.overCapture });
    expect((await t.request({ url: `/v1/cards/programs/${coop.id as string}`, key: client.key })).body.data.coopAuth).toEqual(coopAuth);
  });

  it('PATCH takes back a STANDARD program\'s settings as GET shows them, coopAuth null included', async () => {
    const client = await t.newClient();
    const standard = (await cardPrograms(t, client))['Standard Debit'];
    expect(standard.coopAuth).toBeNull();
    const limits = { perTransactionMinor: 20_000, dailyMinor: 60_000, dailyCount: 9 };
    const body = { coopAuth: standard.coopAuth, holdExpiry: standard.holdExpiry, overCapture: standard.overCapture, limits, revealPhysicalCards: standard.revealPhysicalCards };
    const response = await t.request({ method: 'PATCH', url: `/v1/cards/programs/${standard.id as string}`, key: client.key, body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ coopAuth: null, limits, holdExpiry: standard.holdExpiry, overCapture: standard.overCapture });
  });
});

describe('card programs: refused changes', () => {
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['coopAuth on a STANDARD program', 'Standard Debit', { coopAuth: { timeoutMs: 1000, standIn: { mode: 'DECLINE', responseCode: '91', maxAmountMinor: null }, partialApprovalEnabled: true } }, 'coopAuth'],
    ['a timeout over 4 s', 'Cooperative Debit', { coopAuth: { timeoutMs: 5000, standIn: { mode: 'DECLINE', responseCode: '91', maxAmountMinor: null }, partialApprovalEnabled: true } }, 'coopAuth.timeoutMs'],
    ['APPROVE_UP_TO without its maximum', 'Cooperative Debit', { coopAuth: { timeoutMs: 1000, standIn: { mode: 'APPROVE_UP_TO', responseCode: '91', maxAmountMinor: null }, partialApprovalEnabled: true } }, 'coopAuth.standIn.maxAmountMinor'],
    ['an approving stand-in decline code', 'Cooperative Debit', { coopAuth: { timeoutMs: 1000, standIn: { mode: 'DECLINE', responseCode: '00', maxAmountMinor: null }, partialApprovalEnabled: true } }, 'coopAuth.standIn.responseCode'],
    ['extended hold days below the default', 'Standard Debit', { holdExpiry: { defaultDays: 10, extendedDays: 5, extendedMccs: [] } }, 'holdExpiry.extendedDays'],
    ['an MCC range backwards', 'Standard Debit', { holdExpiry: { defaultDays: 7, extendedDays: 31, extendedMccs: ['3999-3501'] } }, 'holdExpiry.extendedMccs'],
    ['an MCC named twice in one list', 'Standard Debit', { holdExpiry: { defaultDays: 7, extendedDays: 30, extendedMccs: ['7011', '4411', '7011'] } }, 'holdExpiry.extendedMccs'],
    ['an MCC inside a range of the same list', 'Standard Debit', { holdExpiry: { defaultDays: 7, extendedDays: 30, extendedMccs: ['3000-3999', '3500'] } }, 'holdExpiry.extendedMccs'],
    ['two over-capture rules sharing MCCs', 'Standard Debit', { overCapture: { defaultPct: 0, byMcc: [{ mccs: ['5000-6000'], pct: 20 }, { mccs: ['4121', '5812'], pct: 10 }] } }, 'overCapture.byMcc[1].mccs'],
    ['coopAuth null on a COOP_AUTH program', 'Cooperative Debit', { coopAuth: null }, 'coopAuth'],
    ['an over-capture entry of no MCC', 'Standard Debit', { overCapture: { defaultPct: 0, byMcc: [{ mccs: [], pct: 10 }] } }, 'overCapture.byMcc[0].mccs'],
    ['a malformed MCC', 'Standard Debit', { overCapture: { defaultPct: 0, byMcc: [{ mccs: ['58'], pct: 20 }] } }, 'overCapture.byMcc[0].mccs[0]'],
    ['a daily limit below the per-transaction one', 'Standard Debit', { limits: { perTransactionMinor: 10_000, dailyMinor: 5_000, dailyCount: 5 } }, 'limits.dailyMinor'],
    ['an amount as a decimal string', 'Standard Debit', { limits: { perTransactionMinor: '100.00', dailyMinor: 5_000, dailyCount: 5 } }, 'limits.perTransactionMinor'],
    ['an unknown field', 'Standard Debit', { network: 'MASTERCARD' }, 'network'],
    ['an empty body', 'Standard Debit', {}, ''],
  ];
  it.each(cases)('%s: 400 naming the field', async (_name, programName, body, field) => {
    const program = (await cardPrograms(t))[programName];
    const response = await t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, body });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    if (field) expect((response.body.details as any[]).map((detail) => detail.field)).toContain(field);
  });

  it('an overlap is named by its later entry and the one it shares MCCs with; ranges that touch without sharing are taken', async () => {
    const program = (await cardPrograms(t))['Standard Debit'];
    const patch = (body: unknown) => t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, body });
    const across = await patch({ overCapture: { defaultPct: 0, byMcc: [{ mccs: ['5000-6000'], pct: 20 }, { mccs: ['4121', '5812'], pct: 10 }] } });
    expect(across.body.details).toEqual([{ field: 'overCapture.byMcc[1].mccs', message: '"5812" shares MCCs with "5000-6000" of overCapture.byMcc[0].mccs: name each MCC once' }]);
    const within = await patch({ holdExpiry: { defaultDays: 7, extendedDays: 30, extendedMccs: ['3500', '3000-3999'] } });
    expect(within.body.details).toEqual([{ field: 'holdExpiry.extendedMccs', message: '"3000-3999" shares MCCs with "3500": name each MCC once' }]);
    const touching = await patch({ holdExpiry: { defaultDays: 7, extendedDays: 30, extendedMccs: ['3351-3500', '3501-3999', '7011'] } });
    expect(touching.status, JSON.stringify(touching.body)).toBe(200);
    const defaults = await patch({ overCapture: program.overCapture, holdExpiry: program.holdExpiry });
    expect(defaults.status, JSON.stringify(defaults.body)).toBe(200);
  });

  it('an unknown program: 404', async () => {
    const response = await t.request({ method: 'PATCH', url: '/v1/cards/programs/019ca945-0a00-7000-8000-000000000000', body: { limits: { perTransactionMinor: 1, dailyMinor: 1, dailyCount: 1 } } });
    expect(response.status).toBe(404);
  });
});

describe('debit cards: issued', () => {
  it('a virtual card is ACTIVE at once; its number has the program BIN, passes Luhn and is stored only encrypted', async () => {
    const wallet = await linkedWallet(t);
    const program = (await cardPrograms(t))['Standard Debit'];
    const created = await t.request({
      method: 'POST',
      url: '/v1/cards/debit',
      body: { customerId: wallet.customerId, cardProgramId: program.id, walletId: wallet.walletId, isVirtual: true, isPrimary: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ id: expect.any(String), referenceNumber: expect.stringMatching(/^CR[0-9]{10}$/), status: 'ACTIVE', walletId: wallet.walletId });

    const card = (await t.request({ url: `/v1/cards/${created.body.data.id as string}` })).body.data;
    const pan = await panOf(card.id);
    expect(isValidPan(pan)).toBe(true);
    expect(pan.startsWith(program.bin)).toBe(true);
    expect(card).toMatchObject({
      customerId: wallet.customerId,
      cardProgramId: program.id,
      cardType: 'DEBIT',
      cardTransactionHandler: 'STANDARD',
      isVirtual: true,
      isPrimary: true,
      last4: pan.slice(-4),
      expiryMonth: 3,
      expiryYear: 2030,
      creditLineId: null,
      activatedAt: t.clock.now().toISOString(),
    });
    const stored = await sql<{ row: string }>`SELECT row_to_json(c)::text AS row FROM cards c WHERE id = ${card.id}`.execute(t.deps.db);
    expect(stored.rows[0]?.row).not.toContain(pan);
    expect(JSON.stringify(card)).not.toContain(pan);
  });

  it('a standard program without walletId uses the primary wallet, even one without a virtual account', async () => {
    const wallet = await linkedWallet(t);
    // A wallet approved before virtual accounts were given at approval has none.
    await t.deps.db.updateTable('wallets').set({ virtual_account_number: null }).where('client_id', '=', t.clientA.id).where('id', '=', wallet.walletId).execute();
    const program = (await cardPrograms(t))['Standard Debit'];
    const created = await t.request({ method: 'POST', url: '/v1/cards/debit', body: { customerId: wallet.customerId, cardProgramId: program.id, isVirtual: false, isPrimary: false } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ walletId: wallet.walletId, status: 'BLOCKED' });
    const card = (await t.request({ url: `/v1/cards/${created.body.data.id as string}` })).body.data;
    expect(card).toMatchObject({ walletId: wallet.walletId, cardTransactionHandler: 'STANDARD', isVirtual: false, activatedAt: null });
  });

  it('a cooperative program without walletId gets a new wallet of the customer, one per card, and the handler COOP_AUTH', async () => {
    const client = await t.newClient();
    const wallet = await linkedWallet(t, client);
    const program = (await cardPrograms(t, client))['Cooperative Debit'];
    const body = { customerId: wallet.customerId, cardProgramId: program.id, isVirtual: true, isPrimary: false };
    const first = await t.request({ method: 'POST', url: '/v1/cards/debit', key: client.key, body });
    expect(first.status).toBe(201);
    const walletId = first.body.data.walletId as string;
    expect(walletId).not.toBe(wallet.walletId);

    const created = await t.request({ url: `/v1/wallets/${walletId}`, key: client.key });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ id: walletId, customerId: wallet.customerId, portfolioId: wallet.portfolioId, primary: false });
    const card = (await t.request({ url: `/v1/cards/${first.body.data.id as string}`, key: client.key })).body.data;
    expect(card).toMatchObject({ walletId, customerId: wallet.customerId, cardProgramId: program.id, cardTransactionHandler: 'COOP_AUTH' });

    const second = await t.request({ method: 'POST', url: '/v1/cards/debit', key: client.key, body });
    expect(second.status).toBe(201);
    expect([wallet.walletId, walletId]).not.toContain(second.body.data.walletId);
    const wallets = await t.request({ url: `/v1/wallets?customerId=${wallet.customerId}`, key: client.key });
    const ofCustomer = wallets.body.data as any[];
    expect(ofCustomer.map((one) => one.id).sort()).toEqual([wallet.walletId, walletId, second.body.data.walletId].sort());
    expect(ofCustomer.filter((one) => one.primary).map((one) => one.id)).toEqual([wallet.walletId]);
  });

  it('a new primary card takes the mark from the previous one', async () => {
    const first = await issuedCard(t);
    const second = await issuedCard(t, t.clientA, { wallet: first.wallet });
    expect((await t.request({ url: `/v1/cards/${first.cardId}` })).body.data.isPrimary).toBe(false);
    expect((await t.request({ url: `/v1/cards/${second.cardId}` })).body.data.isPrimary).toBe(true);
  });

  it('lists filter by customer, status and card type, newest first', async () => {
    const client = await t.newClient();
    const one = await issuedCard(t, client);
    const two = await issuedCard(t, client, { isVirtual: false });
    const other = await issuedCard(t, client);
    const all = await t.request({ url: '/v1/cards', key: client.key });
    expect(all.body.data.map((card: any) => card.id)).toEqual([other.cardId, two.cardId, one.cardId]);
    expect(all.body.pagination).toEqual({ totalResults: 3, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });
    const blocked = await t.request({ url: '/v1/cards?status=BLOCKED', key: client.key });
    expect(blocked.body.data.map((card: any) => card.id)).toEqual([two.cardId]);
    const ofCustomer = await t.request({ url: `/v1/cards?customerId=${one.wallet.customerId}&cardType=DEBIT`, key: client.key });
    expect(ofCustomer.body.data.map((card: any) => card.id)).toEqual([one.cardId]);
    expect((await t.request({ url: '/v1/cards?cardType=CREDIT', key: client.key })).body.data).toEqual([]);
    const unknown = await t.request({ url: '/v1/cards?customerId=not-an-id', key: client.key });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND', details: [{ field: 'customerId' }] });
  });
});

describe('debit cards: refused', () => {
  it('a card issued after 2095 would expire past 2099, which a two-digit expiry year cannot carry: 422 CARD_EXPIRY_OUT_OF_RANGE, not a 500', async () => {
    const late = await createTestApp({ clockStart: '2096-01-15T00:00:00.000Z' });
    try {
      const wallet = await linkedWallet(late);
      const program = (await cardPrograms(late))['Standard Debit'];
      const response = await late.request({ method: 'POST', url: '/v1/cards/debit', body: { customerId: wallet.customerId, cardProgramId: program.id, walletId: wallet.walletId, isVirtual: true, isPrimary: true } });
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      expect(response.body.code).toBe('CARD_EXPIRY_OUT_OF_RANGE');
      expect((await late.request({ url: `/v1/cards?customerId=${wallet.customerId}` })).body.data).toEqual([]);
    } finally {
      await late.close();
    }
  });

  it('a CREDIT program: 422 CARD_PROGRAM_MISMATCH naming cardProgramId', async () => {
    const wallet = await linkedWallet(t);
    const program = (await cardPrograms(t))['Crypto-backed Credit'];
    const response = await t.request({ method: 'POST', url: '/v1/cards/debit', body: { customerId: wallet.customerId, cardProgramId: program.id, isVirtual: true, isPrimary: false } });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: 'CARD_PROGRAM_MISMATCH', details: [{ field: 'cardProgramId' }] });
  });

  it('a customer whose KYC is not approved: 409 KYC_NOT_APPROVED', async () => {
    const customer = await createIndividual(t);
    const program = (await cardPrograms(t))['Standard Debit'];
    const response = await t.request({ method: 'POST', url: '/v1/cards/debit', body: { customerId: customer.id, cardProgramId: program.id, isVirtual: true, isPrimary: false } });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('KYC_NOT_APPROVED');
  });

  it('unknown customer, program or wallet, or a wallet of another customer: 404', async () => {
    const wallet = await linkedWallet(t);
    const otherWallet = await linkedWallet(t);
    const program = (await cardPrograms(t))['Standard Debit'];
    const missing = '019ca945-0a00-7000-8000-000000000000';
    const base = { customerId: wallet.customerId, cardProgramId: program.id, isVirtual: true, isPrimary: false };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, customerId: missing }, 'customerId'],
      [{ ...base, cardProgramId: missing }, 'cardProgramId'],
      [{ ...base, walletId: missing }, 'walletId'],
      [{ ...base, walletId: otherWallet.walletId }, 'walletId'],
    ];
    for (const [body, field] of cases) {
      const response = await t.request({ method: 'POST', url: '/v1/cards/debit', body });
      expect(response.status, JSON.stringify(body)).toBe(404);
      // Each names the reference that failed (the wallet's did not until 2026-12-02; found by an audit).
      expect(response.body.details, JSON.stringify(body)).toEqual([{ field, message: expect.any(String) }]);
    }
  });

  it('missing or mistyped fields: 400 naming the field', async () => {
    const response = await t.request({ method: 'POST', url: '/v1/cards/debit', body: { customerId: 'x', cardProgramId: 'y', isVirtual: 'yes' } });
    expect(response.status).toBe(400);
    const fields = (response.body.details as any[]).map((detail) => detail.field);
    expect(fields.join(' ')).toMatch(/isVirtual|isPrimary/);
  });
});

describe('card status: changed', () => {
  it('ACTIVE → SUSPENDED → ACTIVE → CANCELLED; asking for the current status changes nothing', async () => {
    const { cardId } = await issuedCard(t);
    for (const status of ['SUSPENDED', 'SUSPENDED', 'ACTIVE', 'CANCELLED']) {
      const response = await t.request({ method: 'PATCH', url: `/v1/cards/${cardId}`, body: { status } });
      expect(response.status, status).toBe(200);
      expect(response.body.data.status).toBe(status);
    }
    expect((await t.request({ url: `/v1/cards/${cardId}` })).body.data).toMatchObject({ status: 'CANCELLED', isPrimary: false });
  });

  it('a physical card is activated once; activating it again succeeds and changes nothing', async () => {
    const { cardId } = await issuedCard(t, t.clientA, { isVirtual: false });
    const first = await t.request({ method: 'POST', url: `/v1/cards/${cardId}/activate` });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ status: 'ACTIVE', activatedAt: t.clock.now().toISOString() });
    t.clock.advance(60_000);
    const again = await t.request({ method: 'POST', url: `/v1/cards/${cardId}/activate` });
    expect(again.status).toBe(200);
    expect(again.body.data.activatedAt).toBe(first.body.data.activatedAt);
  });
});

describe('card status: refused with 409 INVALID_CARD_STATUS_TRANSITION', () => {
  it('BLOCKED → ACTIVE by PATCH, BLOCKED → SUSPENDED, anything from CANCELLED, activating a SUSPENDED or CANCELLED card', async () => {
    const blocked = await issuedCard(t, t.clientA, { isVirtual: false });
    for (const status of ['ACTIVE', 'SUSPENDED']) {
      const response = await t.request({ method: 'PATCH', url: `/v1/cards/${blocked.cardId}`, body: { status } });
      expect(response.status, status).toBe(409);
      expect(response.body).toMatchObject({ code: 'INVALID_CARD_STATUS_TRANSITION', details: [{ field: 'status' }] });
    }
    const suspended = await issuedCard(t);
    await t.request({ method: 'PATCH', url: `/v1/cards/${suspended.cardId}`, body: { status: 'SUSPENDED' } });
    expect((await t.request({ method: 'POST', url: `/v1/cards/${suspended.cardId}/activate` })).status).toBe(409);
    await t.request({ method: 'PATCH', url: `/v1/cards/${suspended.cardId}`, body: { status: 'CANCELLED' } });
    expect((await t.request({ method: 'PATCH', url: `/v1/cards/${suspended.cardId}`, body: { status: 'ACTIVE' } })).body.code).toBe('INVALID_CARD_STATUS_TRANSITION');
    expect((await t.request({ method: 'POST', url: `/v1/cards/${suspended.cardId}/activate` })).body.code).toBe('INVALID_CARD_STATUS_TRANSITION');
  });

  it('→ BLOCKED from ACTIVE, SUSPENDED or CANCELLED (a physical card starts BLOCKED; PATCH never leads there), as contract §12.2 says of any other change', async () => {
    const card = await issuedCard(t);
    for (const status of ['ACTIVE', 'SUSPENDED', 'CANCELLED']) {
      if (status !== 'ACTIVE') expect((await t.request({ method: 'PATCH', url: `/v1/cards/${card.cardId}`, body: { status } })).status).toBe(200);
      const response = await t.request({ method: 'PATCH', url: `/v1/cards/${card.cardId}`, body: { status: 'BLOCKED' } });
      expect(response.status, status).toBe(409);
      expect(response.body).toMatchObject({ code: 'INVALID_CARD_STATUS_TRANSITION', details: [{ field: 'status' }] });
    }
    expect((await t.request({ url: `/v1/cards/${card.cardId}` })).body.data.status).toBe('CANCELLED');
  });
});

describe('card numbers never leave the vault', () => {
  it('no response, log line (trace level) or event carries a card number issued in this run, whole or after its BIN', async () => {
    const capture = await appWithLogCapture(t);
    const { app } = capture;
    const responses: string[] = [];
    try {
      const client = await t.newClient('PAN scan');
      const headers = { authorization: client.key, 'content-type': 'application/json' };
      const wallet = await linkedWallet(t, client);
      const programs = await cardPrograms(t, client);
      const cardIds: string[] = [];
      for (const [name, isVirtual] of [['Standard Debit', true], ['Cooperative Debit', false]] as const) {
        const created = await app.inject({
          method: 'POST',
          url: '/v1/cards/debit',
          headers,
          payload: { customerId: wallet.customerId, cardProgramId: programs[name].id, walletId: wallet.walletId, isVirtual, isPrimary: false },
        });
        expect(created.statusCode).toBe(201);
        responses.push(created.body);
        cardIds.push(created.json().data.id);
      }
      for (const cardId of cardIds) {
        for (const request of [
          { method: 'GET' as const, url: `/v1/cards/${cardId}` },
          { method: 'POST' as const, url: `/v1/cards/${cardId}/activate` },
          { method: 'PATCH' as const, url: `/v1/cards/${cardId}`, payload: { status: 'SUSPENDED' } },
          { method: 'PATCH' as const, url: `/v1/cards/${cardId}`, payload: { status: 'BLOCKED' } },
        ]) {
          responses.push((await app.inject({ ...request, headers })).body);
        }
      }
      responses.push((await app.inject({ method: 'GET', url: '/v1/cards', headers })).body);
      const events = await t.deps.db.selectFrom('events').select(sql<string>`data::text`.as('payload')).where('client_id', '=', client.id).execute();
      const pans = await Promise.all(cardIds.map((id) => panOf(id, client.id)));
      expect(capture.logged()).toContain(cardIds[0]);
      const everything = [capture.logged(), ...responses, ...events.map((event) => event.payload)].join('\n');
      for (const pan of pans) {
        expect(everything).not.toContain(pan);
        expect(everything).not.toContain(pan.slice(6));
      }
    } finally {
      await app.close();
    }
  });
});
