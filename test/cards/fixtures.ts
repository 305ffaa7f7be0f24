/* eslint-disable @typescript-eslint/no-explicit-any */
import type { TestClient, TestContext } from '../harness.js';
import { linkedWallet, type LinkedWallet } from '../bank/fixtures.js';

/** The client's card programs by name (the three default ones). */
export async function cardPrograms(t: TestContext, client: TestClient = t.clientA): Promise<Record<string, any>> {
  const response = await t.request({ url: '/v1/cards/programs', key: client.key });
  if (response.status !== 200) throw new Error(`listing card programs failed: ${JSON.stringify(response.body)}`);
  return Object.fromEntries((response.body.data as any[]).map((program) => [program.name, program]));
}

/** An approved customer whose primary wallet has a virtual account, with a card of `programName` on it. */
export async function issuedCard(
  t: TestContext,
  client: TestClient = t.clientA,
  options: { programName?: string; isVirtual?: boolean; wallet?: LinkedWallet } = {},
): Promise<{ wallet: LinkedWallet; cardId: string; referenceNumber: string }> {
  const wallet = options.wallet ?? (await linkedWallet(t, client));
  const programs = await cardPrograms(t, client);
  const program = programs[options.programName ?? 'Standard Debit'];
  const response = await t.request({
    method: 'POST',
    url: '/v1/cards/debit',
    key: client.key,
    body: { customerId: wallet.customerId, cardProgramId: program.id, walletId: wallet.walletId, isVirtual: options.isVirtual ?? true, isPrimary: true },
  });
  if (response.status !== 201) throw new Error(`issuing a card failed: ${JSON.stringify(response.body)}`);
  return { wallet, cardId: response.body.data.id, referenceNumber: response.body.data.referenceNumber };
}
