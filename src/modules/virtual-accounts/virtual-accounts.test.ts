import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext, type TestClient } from '../../../test/harness.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import { linkedWallet, type LinkedWallet } from '../../../test/bank/fixtures.js';
import { virtualAccountSerialKey } from '../routes.js';
import { formatVirtualAccountNumber, isValidVirtualAccountNumber, virtualAccountSerialFor } from './index.js';

/**
 * Virtual account numbers come from one sequence shared by every client, through a keyed
 * permutation: consecutive numbers of one client are not consecutive serials, and a permuted
 * number that a wallet already holds (a number given before serials were permuted) is passed over.
 */
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The value the sequence gives next (a new schema per file on PostgreSQL, a new database on PGlite: nothing else draws from it). */
async function nextSequenceValue(): Promise<bigint> {
  const result = await sql<{ last_value: string; is_called: boolean }>`SELECT last_value::text AS last_value, is_called FROM virtual_account_serial`.execute(t.deps.db);
  const row = result.rows[0];
  if (!row) throw new Error('no sequence row');
  return row.is_called ? BigInt(row.last_value) + 1n : BigInt(row.last_value);
}

/** A new wallet of the linked wallet's customer (approved), given a virtual account over POST /v1/virtual-accounts. */
async function createVirtualAccountForNewWallet(owner: LinkedWallet, client: TestClient = t.clientA): Promise<string> {
  const wallet = await t.request({ method: 'POST', url: `/v1/customers/${owner.customerId}/portfolios/${owner.portfolioId}/wallets`, key: client.key, body: { name: 'Extra' } });
  if (wallet.status !== 201) throw new Error(`creating a wallet failed: ${JSON.stringify(wallet.body)}`);
  const created = await t.request({ method: 'POST', url: '/v1/virtual-accounts', key: client.key, body: { walletId: wallet.body.data.id } });
  expect(created.status).toBe(201);
  return created.body.data.virtualAccountNumber;
}

const serialOf = (number: string) => BigInt(number.slice(2, 11));

describe('virtual account numbers drawn from the shared sequence', () => {
  it('are valid and unique, but one client creating five in a row does not get consecutive serials', async () => {
    const owner = await linkedWallet(t);
    const numbers: string[] = [];
    for (let index = 0; index < 5; index++) numbers.push(await createVirtualAccountForNewWallet(owner));
    for (const number of numbers) {
      expect(number).toMatch(/^70[0-9]{10}$/);
      expect(isValidVirtualAccountNumber(number)).toBe(true);
    }
    expect(new Set([owner.virtualAccountNumber, ...numbers]).size).toBe(6);
    // With the bare sequence every step was +1; the permutation scatters them over 10^9 serials.
    const serials = numbers.map(serialOf);
    const steps = serials.slice(1).map((serial, index) => serial - (serials[index] ?? 0n));
    expect(steps.filter((step) => step > -1000n && step < 1000n)).toEqual([]);
    // Nor is the last serial the sequence's value, which the bare sequence gave.
    expect(serials.at(-1)).not.toBe((await nextSequenceValue()) - 1n);
  });

  it('do not show how many accounts another client opened in between', async () => {
    const mine = await linkedWallet(t);
    const theirs = await linkedWallet(t, t.clientB);
    const first = serialOf(await createVirtualAccountForNewWallet(mine));
    for (let index = 0; index < 3; index++) await createVirtualAccountForNewWallet(theirs, t.clientB);
    const second = serialOf(await createVirtualAccountForNewWallet(mine));
    // With the bare sequence the second was the first plus 4 (three of the other client's in between).
    expect(second - first).not.toBe(4n);
    expect(second - first > 1000n || second - first < -1000n).toBe(true);
  });

  it('pass over a number some wallet of any client already holds (one given before serials were permuted)', async () => {
    const key = virtualAccountSerialKey(t.deps);
    const next = await nextSequenceValue();
    const taken = formatVirtualAccountNumber(virtualAccountSerialFor(next, key));
    // Another client's wallet holds the number the next sequence value permutes to, as an old unpermuted number would.
    const holder = await createIndividual(t, t.clientB);
    await t.deps.db.updateTable('wallets').set({ virtual_account_number: taken }).where('id', '=', holder.portfolios[0].wallets[0]).execute();

    // Through KYC approval (the compliance module's path) and then through POST /v1/virtual-accounts.
    const approved = await linkedWallet(t);
    expect(approved.virtualAccountNumber).not.toBe(taken);
    expect(isValidVirtualAccountNumber(approved.virtualAccountNumber)).toBe(true);
    expect(approved.virtualAccountNumber).toBe(formatVirtualAccountNumber(virtualAccountSerialFor(next + 1n, key)));

    const takenToo = formatVirtualAccountNumber(virtualAccountSerialFor(next + 2n, key));
    await t.deps.db.updateTable('wallets').set({ virtual_account_number: takenToo }).where('id', '=', (await createIndividual(t, t.clientB)).portfolios[0].wallets[0]).execute();
    const requested = await createVirtualAccountForNewWallet(approved);
    expect(requested).not.toBe(takenToo);
    expect(isValidVirtualAccountNumber(requested)).toBe(true);
    expect(requested).toBe(formatVirtualAccountNumber(virtualAccountSerialFor(next + 3n, key)));
    expect(await nextSequenceValue()).toBe(next + 4n);
  });
});
