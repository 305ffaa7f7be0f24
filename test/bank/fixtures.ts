import { expect } from 'vitest';
import type { TestClient, TestContext } from '../harness.js';
import { approveIndividual } from '../compliance/helpers.js';
import { verifyLedger } from '../../src/modules/ledger/index.js';

/** Helpers shared by the bank rail tests. Tests read response bodies freely. */
/* eslint-disable @typescript-eslint/no-explicit-any */

export interface LinkedWallet {
  customerId: string;
  portfolioId: string;
  walletId: string;
  virtualAccountNumber: string;
}

/** An approved individual whose primary wallet has a virtual account (KYC approved through the sandbox, over HTTP). */
export async function linkedWallet(t: TestContext, client: TestClient = t.clientA): Promise<LinkedWallet> {
  const customer = await approveIndividual(t, client);
  const walletId = customer.portfolios[0].wallets[0] as string;
  const wallet = await t.request({ url: `/v1/wallets/${walletId}`, key: client.key });
  if (wallet.status !== 200 || !wallet.body.data.virtualAccount) throw new Error(`the approved customer's wallet has no virtual account: ${JSON.stringify(wallet.body)}`);
  return { customerId: customer.id, portfolioId: customer.portfolios[0].id, walletId, virtualAccountNumber: wallet.body.data.virtualAccount.virtualAccountNumber };
}

export async function assignVrn(t: TestContext, wallet: LinkedWallet, client: TestClient = t.clientA): Promise<string> {
  const response = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-vrn', key: client.key, body: { userId: wallet.customerId, virtualAccountNumber: wallet.virtualAccountNumber } });
  if (response.status !== 201 && response.status !== 200) throw new Error(`assigning a VRN failed: ${JSON.stringify(response.body)}`);
  return response.body.data.vrnNumber;
}

export async function assignDedicated(t: TestContext, wallet: LinkedWallet, client: TestClient = t.clientA): Promise<string> {
  const response = await t.request({ method: 'POST', url: '/v1/virtual-accounts/assign-dedicated-account-number', key: client.key, body: { walletId: wallet.walletId } });
  if (response.status !== 201 && response.status !== 200) throw new Error(`assigning a dedicated number failed: ${JSON.stringify(response.body)}`);
  return response.body.data.dedicatedAccountNumber;
}

export const sender = { name: 'Charles Babbage', accountNumber: '987654321', routingNumber: '021000021' };

export function depositBody(accountNumber: string, amount: string, overrides: Record<string, unknown> = {}) {
  return { accountNumber, amount, asset: 'USD', network: 'ACH', counterparty: sender, ...overrides };
}

export async function deposit(t: TestContext, accountNumber: string, amount: string, overrides: Record<string, unknown> = {}, client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ method: 'POST', url: '/v1/sandbox/bank-deposits', key: client.key, body: depositBody(accountNumber, amount, overrides) });
  if (response.status !== 201) throw new Error(`the deposit failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function settle(t: TestContext, id: string, client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${id}/settle`, key: client.key });
  if (response.status !== 200) throw new Error(`settling failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** Puts AVAILABLE money on the wallet: a deposit to its virtual account number, settled at once. */
export async function fund(t: TestContext, wallet: LinkedWallet, amount: string, asset = 'USD', client: TestClient = t.clientA): Promise<void> {
  const received = await deposit(t, wallet.virtualAccountNumber, amount, { asset }, client);
  await settle(t, received.id, client);
}

export interface Balances {
  AVAILABLE: string;
  RESERVED: string;
  PENDING: string;
}

/** The wallet's three balances in one asset ("0.00" when it never held the asset). */
export async function balanceOf(t: TestContext, walletId: string, asset = 'USD', client: TestClient = t.clientA): Promise<Balances> {
  const response = await t.request({ url: `/v1/wallets/${walletId}/balance`, key: client.key });
  if (response.status !== 200) throw new Error(`the balance failed: ${JSON.stringify(response.body)}`);
  const pick = (kind: 'AVAILABLE' | 'RESERVED' | 'PENDING') =>
    (response.body.data[kind] as { asset: string; amount: string }[]).find((entry) => entry.asset === asset)?.amount ?? '0.00';
  return { AVAILABLE: pick('AVAILABLE'), RESERVED: pick('RESERVED'), PENDING: pick('PENDING') };
}

/** The client's BANK_* events about one payment, oldest first. */
export async function bankEventsOf(t: TestContext, parentBankTransactionId: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: '/v1/events?limit=200', key: client.key });
  return (response.body.data as any[]).filter((event) => event.data.parentBankTransactionId === parentBankTransactionId).reverse();
}

/** `openbaas ledger verify` over the whole database: every invariant holds. */
export async function expectLedgerClean(t: TestContext): Promise<void> {
  const report = await verifyLedger(t.deps.db);
  expect(report.checks.filter((check) => check.violationCount > 0)).toEqual([]);
  expect(report.ok).toBe(true);
}

/** An ACH withdrawal body to a real bank of the built-in directory. */
export function withdrawalBody(walletId: string, overrides: Record<string, unknown> = {}) {
  return {
    walletId,
    amount: '25.00',
    name: 'Grace Hopper',
    transferNetwork: 'ACH_DOMESTIC',
    personTypeCode: 'P',
    routingNumber: '021000021',
    accountNumber: '123456789',
    street1: '1 Main Street',
    cityCounty: 'Arlington',
    stateRegion: 'VA',
    zip: '22201',
    countryCode: 'US',
    ...overrides,
  };
}
