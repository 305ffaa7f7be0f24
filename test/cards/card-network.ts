/* eslint-disable @typescript-eslint/no-explicit-any */
import type { TestClient, TestContext } from '../harness.js';
import { balanceOf, fund, type Balances } from '../bank/fixtures.js';
import { issuedCard } from './fixtures.js';
import { cardVaultOf } from '../../src/modules/cards/index.js';
import type { CardOfMessage } from '../../src/modules/cards/sandbox/sandbox-messages.js';

/** Helpers of the card processor tests: drive the sandbox card network over HTTP. */

export interface FundedCard {
  cardId: string;
  walletId: string;
}

/** A Standard Debit card on a wallet funded with `amount` USD. */
export async function fundedCard(t: TestContext, amount: string, client: TestClient = t.clientA, programName?: string): Promise<FundedCard> {
  const card = await issuedCard(t, client, programName === undefined ? {} : { programName });
  if (amount !== '0') await fund(t, card.wallet, amount, 'USD', client);
  return { cardId: card.cardId, walletId: card.wallet.walletId };
}

export async function send(t: TestContext, url: string, body: unknown = {}, client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ method: 'POST', url, key: client.key, body });
  if (response.status !== 201) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export const authorize = (t: TestContext, cardId: string, body: Record<string, unknown>, client?: TestClient) =>
  send(t, `/v1/sandbox/cards/${cardId}/authorizations`, body, client);

export const onParent = (t: TestContext, parentId: string, action: string, body: Record<string, unknown> = {}, client?: TestClient) =>
  send(t, `/v1/sandbox/card-transactions/${parentId}/${action}`, body, client);

export async function balances(t: TestContext, walletId: string, client?: TestClient): Promise<Balances> {
  return balanceOf(t, walletId, 'USD', client);
}

/** The client's CARD_TRANSACTION_* events of one lifecycle, oldest first. */
export async function cardEventsOf(t: TestContext, parentId: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: '/v1/events?limit=200', key: client.key });
  return (response.body.data as any[]).filter((event) => event.data.parentCardTransactionId === parentId).reverse();
}

/** Every wallet transaction of one swipe (specification rule 4). */
export async function walletRecordsOf(t: TestContext, parentId: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: `/v1/transactions?parentCardTransactionId=${parentId}&limit=200`, key: client.key });
  if (response.status !== 200) throw new Error(`listing wallet transactions failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function lifecycle(t: TestContext, parentId: string, client: TestClient = t.clientA): Promise<any> {
  const card = await t.request({ url: `/v1/cards/transactions/${parentId}`, key: client.key });
  const list = await t.request({ url: `/v1/cards/transactions?cardId=${card.body.data.cardId as string}&limit=200`, key: client.key });
  return (list.body.data as any[]).find((group) => group.parentCardTransactionId === parentId);
}

/** The card as the sandbox acquirer writes it into a message (buildSandboxMessage): its number, expiry and network. */
export async function cardOfMessage(t: TestContext, cardId: string): Promise<CardOfMessage> {
  const row = await t.deps.db
    .selectFrom('cards')
    .innerJoin('card_programs', (join) => join.onRef('card_programs.client_id', '=', 'cards.client_id').onRef('card_programs.id', '=', 'cards.card_program_id'))
    .select(['cards.expiry_month', 'cards.expiry_year', 'card_programs.network'])
    .where('cards.id', '=', cardId)
    .executeTakeFirstOrThrow();
  return { pan: await panOf(t, cardId), expiry: { expiryMonth: row.expiry_month, expiryYear: row.expiry_year }, network: row.network };
}

/** The card's number, read from the vault the way the processor would (to build messages by hand). */
export async function panOf(t: TestContext, cardId: string): Promise<string> {
  const row = await t.deps.db.selectFrom('cards').select(['pan_encrypted', 'client_id']).where('id', '=', cardId).executeTakeFirstOrThrow();
  return cardVaultOf(t.deps).decryptPan(row.pan_encrypted, row.client_id, cardId);
}
