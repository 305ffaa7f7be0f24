import * as ledger from '../../src/modules/ledger/index.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { findAsset } from '../../src/platform/money/assets.js';
import { createIndividual } from '../customers/fixtures.js';
import type { TestClient, TestContext } from '../harness.js';

/** A new individual customer of `client`, returning the id of its primary wallet. */
export async function newWallet(t: TestContext, client: TestClient = t.clientA): Promise<string> {
  const customer = await createIndividual(t, client);
  const response = await t.request({ url: `/v1/wallets?customerId=${customer.id}`, key: client.key });
  const walletId = response.body.data?.[0]?.id as string | undefined;
  if (!walletId) throw new Error(`no wallet for the new customer: ${JSON.stringify(response.body)}`);
  return walletId;
}

/** Puts money into a wallet as a cleared deposit from the bank settlement account would. */
export async function fundWallet(t: TestContext, clientId: string, walletId: string, amountMinor: bigint, assetCode = 'USD'): Promise<void> {
  const asset = findAsset(assetCode, 'sandbox');
  if (!asset) throw new Error(`unknown asset ${assetCode}`);
  await withTransaction(t.deps.db, (tx) =>
    ledger.postTransfer(tx, {
      clientId,
      now: t.clock.now(),
      asset,
      legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId }, amount: amountMinor }],
      history: { parentTransactionId: crypto.randomUUID(), type: 'DEPOSIT', traceId: 'test-trace' },
    }),
  );
}

export async function availableOf(t: TestContext, walletId: string, client: TestClient = t.clientA, asset = 'USD'): Promise<string | undefined> {
  const response = await t.request({ url: `/v1/wallets/${walletId}/balance`, key: client.key });
  return response.body.data.AVAILABLE.find((entry: { asset: string }) => entry.asset === asset)?.amount;
}
