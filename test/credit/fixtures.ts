/* eslint-disable @typescript-eslint/no-explicit-any */
import type { TestClient, TestContext } from '../harness.js';
import { linkedWallet, type LinkedWallet } from '../bank/fixtures.js';
import { fundWallet } from '../ledger/fixtures.js';
import { cardPrograms } from '../cards/fixtures.js';

/** Helpers of the credit line tests: everything over HTTP except funding (the ledger fixture). */

export interface OpenLine {
  wallet: LinkedWallet;
  lineId: string;
}

async function ok(t: TestContext, method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, body: unknown, client: TestClient, expected: number): Promise<any> {
  const response = await t.request({ method, url, key: client.key, ...(body === undefined ? {} : { body }) });
  if (response.status !== expected) throw new Error(`${method} ${url} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/**
 * An approved customer whose wallet holds `collateral` BTC (minor units: satoshi) and `usd` cents,
 * with a credit line of `creditLimit` USD; `lock` (default all the collateral) is locked on it.
 */
export async function openLine(
  t: TestContext,
  options: { collateral?: bigint; usd?: bigint; creditLimit?: string; apr?: string; lock?: string | null; asset?: 'BTC' | 'ETH'; client?: TestClient } = {},
): Promise<OpenLine> {
  const client = options.client ?? t.clientA;
  const asset = options.asset ?? 'BTC';
  const wallet = await linkedWallet(t, client);
  await fundWallet(t, client.id, wallet.walletId, options.collateral ?? 100_000_000n, asset);
  if (options.usd) await fundWallet(t, client.id, wallet.walletId, options.usd, 'USD');
  const line = await ok(
    t,
    'POST',
    '/v1/credit-lines',
    { customerId: wallet.customerId, collateralWalletId: wallet.walletId, collateralAsset: asset, currency: 'USD', creditLimit: options.creditLimit ?? '15000.00', ...(options.apr === undefined ? {} : { apr: options.apr }) },
    client,
    201,
  );
  const lock = options.lock === undefined ? (asset === 'BTC' ? '1.00000000' : '1') : options.lock;
  if (lock !== null) await ok(t, 'POST', `/v1/credit-lines/${line.id as string}/collateral`, { amount: lock }, client, 200);
  return { wallet, lineId: line.id };
}

export async function lineOf(t: TestContext, lineId: string, client: TestClient = t.clientA): Promise<any> {
  return ok(t, 'GET', `/v1/credit-lines/${lineId}`, undefined, client, 200);
}

/** A virtual credit card on the line. */
export async function creditCard(t: TestContext, line: OpenLine, client: TestClient = t.clientA): Promise<string> {
  const programs = await cardPrograms(t, client);
  const card = await ok(
    t,
    'POST',
    '/v1/cards/credit',
    { customerId: line.wallet.customerId, cardProgramId: programs['Crypto-backed Credit'].id, isVirtual: true, isPrimary: false, collateralWalletId: line.wallet.walletId, creditLineId: line.lineId },
    client,
    201,
  );
  return card.id;
}

export async function setPrice(t: TestContext, symbol: string, price: string, client: TestClient = t.clientA): Promise<void> {
  await ok(t, 'PUT', `/v1/sandbox/prices/${symbol}`, { price }, client, 200);
}

/** The LTV events of one line, oldest first. */
export async function ltvEventsOf(t: TestContext, lineId: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: '/v1/events?limit=200', key: client.key });
  return (response.body.data as any[]).filter((event) => event.type.startsWith('LTV_') && event.data.creditLineId === lineId).reverse();
}

export async function repay(t: TestContext, line: OpenLine, amount: string, client: TestClient = t.clientA): Promise<any> {
  return ok(t, 'POST', `/v1/credit-lines/${line.lineId}/payments`, { walletId: line.wallet.walletId, amount }, client, 201);
}

/** A card purchase of `amount` USD, authorized and completed in full (it becomes principal on the card's line). */
export async function spend(t: TestContext, cardId: string, amount: number, client: TestClient = t.clientA): Promise<string> {
  const auth = await ok(t, 'POST', `/v1/sandbox/cards/${cardId}/authorizations`, { amount }, client, 201);
  if (auth.responseCode !== '00') throw new Error(`the authorization of ${amount} was declined: ${JSON.stringify(auth)}`);
  await ok(t, 'POST', `/v1/sandbox/card-transactions/${auth.parentCardTransactionId as string}/completions`, { amount }, client, 201);
  return auth.parentCardTransactionId;
}

/** Moves the client's sandbox clock forward. */
export async function advanceClock(t: TestContext, seconds: number, client: TestClient = t.clientA): Promise<void> {
  await ok(t, 'POST', '/v1/sandbox/clock/advance', { seconds }, client, 200);
}
