import { sql } from 'kysely';
import { nextSequenceValue } from '../../platform/db/sequence.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { drawUnusedNumber } from '../../platform/unused-serial.js';
import { findCustomer, findWallet, type WalletRow } from '../customers/index.js';
import { recordEvent } from '../webhooks/index.js';
import { formatVirtualAccountNumber, virtualAccountSerialFor } from './virtual-account-number.js';

export interface VirtualAccountView {
  walletId: string;
  virtualAccountNumber: string;
}

/**
 * The next number: the next value of the shared sequence (outside the transaction's rollback:
 * never reused), through the keyed permutation (virtual-account-number.ts), passed over while some
 * wallet of any client already holds it (drawUnusedNumber says why; the lookup uses the unique
 * index wallets_virtual_account_number_key).
 */
function nextVirtualAccountNumber(tx: Tx, serialKey: Buffer): Promise<string> {
  return drawUnusedNumber({
    nextSequenceValue: () => nextSequenceValue(tx, 'virtual_account_serial', 'the virtual account sequence'),
    serialFor: (sequenceValue) => virtualAccountSerialFor(sequenceValue, serialKey),
    format: formatVirtualAccountNumber,
    isTaken: async (number) => (await tx.selectFrom('wallets').select('id').where('virtual_account_number', '=', number).executeTakeFirst()) !== undefined,
    description: 'virtual account number',
  });
}

/**
 * Gives the wallet a virtual account number and records VIRTUAL_ACCOUNT_CREATED, in the caller's
 * transaction. The caller holds the customer's row lock. A wallet that already has a number
 * keeps it: undefined is returned and nothing is recorded. `serialKey` keys the permutation of
 * the serials (virtualAccountSerialKey in modules/routes.ts).
 */
export async function assignVirtualAccount(tx: Tx, context: RequestContext, wallet: WalletRow, serialKey: Buffer): Promise<VirtualAccountView | undefined> {
  if (wallet.virtual_account_number !== null) return undefined;
  const number = await nextVirtualAccountNumber(tx, serialKey);
  const updated = await tx
    .updateTable('wallets')
    .set({ virtual_account_number: number })
    .where('client_id', '=', context.clientId)
    .where('id', '=', wallet.id)
    .where('virtual_account_number', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!updated) return undefined;
  await recordEvent(tx, context, 'VIRTUAL_ACCOUNT_CREATED', { customerId: wallet.customer_id, walletId: wallet.id });
  return { walletId: wallet.id, virtualAccountNumber: number };
}

/**
 * POST /v1/virtual-accounts: a number for any wallet of a customer whose KYC (or KYB) is
 * APPROVED. Rules, first failing wins: the wallet exists for this client (404); the customer is
 * APPROVED (409 KYC_NOT_APPROVED); the wallet has no number yet (409 VIRTUAL_ACCOUNT_EXISTS).
 */
export async function createVirtualAccount(tx: Tx, context: RequestContext, walletId: string, serialKey: Buffer): Promise<VirtualAccountView> {
  const found = await findWallet(tx, context.clientId, walletId);
  if (!found) throw notFound('Wallet', 'walletId');
  // Lock the owner first (the order every compliance write uses), then read the wallet again.
  await sql`SELECT 1 FROM customers WHERE client_id = ${context.clientId} AND id = ${found.customer_id} FOR UPDATE`.execute(tx);
  const customer = await findCustomer(tx, context.clientId, found.customer_id);
  const wallet = await findWallet(tx, context.clientId, walletId);
  if (!customer || !wallet) throw notFound('Wallet', 'walletId');
  if (customer.onboarding_status !== 'APPROVED') {
    throw new AppError(
      'KYC_NOT_APPROVED',
      `A virtual account needs the customer's ${customer.type === 'LEGAL' ? 'KYB' : 'KYC'} to be APPROVED; it is ${customer.onboarding_status ?? 'not started'}.`,
    );
  }
  if (wallet.virtual_account_number !== null) {
    throw new AppError('VIRTUAL_ACCOUNT_EXISTS', 'This wallet already has a virtual account.');
  }
  const created = await assignVirtualAccount(tx, context, wallet, serialKey);
  if (!created) throw new AppError('VIRTUAL_ACCOUNT_EXISTS', 'This wallet already has a virtual account.');
  return created;
}
