import { expect } from 'vitest';
import type { TestClient, TestContext } from '../harness.js';
import { createIndividual } from '../customers/fixtures.js';

/** Helpers shared by the crypto deposit and withdrawal tests. Tests read response bodies freely. */
/* eslint-disable @typescript-eslint/no-explicit-any */

/** A new customer's primary wallet. */
export async function newWallet(t: TestContext, client: TestClient = t.clientA): Promise<string> {
  const customer = await createIndividual(t, client);
  return customer.portfolios[0].wallets[0] as string;
}

/** The wallet's deposit address for the asset (and network), made on first call. */
export async function addressOf(t: TestContext, walletId: string, asset: string, network?: string, client: TestClient = t.clientA): Promise<string> {
  const response = await t.request({ method: 'POST', url: '/v1/digital/addresses', key: client.key, body: { walletId, asset, ...(network ? { network } : {}) } });
  if (response.status !== 201 && response.status !== 200) throw new Error(`the address failed: ${JSON.stringify(response.body)}`);
  return response.body.data.address;
}

export async function cryptoDeposit(t: TestContext, body: Record<string, unknown>, client: TestClient = t.clientA) {
  return t.request({ method: 'POST', url: '/v1/sandbox/crypto-deposits', key: client.key, body });
}

export async function mine(t: TestContext, network: string, count: number, client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ method: 'POST', url: `/v1/sandbox/chains/${network}/blocks`, key: client.key, body: { count } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/** A completed deposit of `amount` into the wallet (deposited with its confirmations already). */
export async function fundCrypto(t: TestContext, walletId: string, asset: string, amount: string, network?: string, client: TestClient = t.clientA): Promise<void> {
  const address = await addressOf(t, walletId, asset, network, client);
  const response = await cryptoDeposit(t, { address, asset, amount, confirmations: 1000 }, client);
  if (response.status !== 201 || response.body.data.status !== 'COMPLETED') throw new Error(`funding failed: ${JSON.stringify(response.body)}`);
}

/** The client's CRYPTO_* events about one deposit or withdrawal, oldest first. */
export async function cryptoEventsOf(t: TestContext, parentCryptoTransactionId: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: '/v1/events?limit=200', key: client.key });
  return (response.body.data as any[]).filter((event) => event.data.parentCryptoTransactionId === parentCryptoTransactionId).reverse();
}

/** Valid destinations of each network (from the networks' documentation and test vectors). */
export const destinations = {
  BITCOIN: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx',
  ETHEREUM: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  TRON: 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf',
  SOLANA: '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY',
} as const;
