import type { OperatingBankConfig } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/ids.js';
import { findCustomer, findWallet, type Address, type CustomerRow, type WalletRow } from '../customers/index.js';
import { accountNumberKinds, type AccountNumberKind, type AccountNumberSerialKeys } from './account-numbers.js';
import * as store from './bank-accounts.store.js';

type Queryable = Db | Tx;

export interface DedicatedAccountNumberView {
  walletId: string;
  virtualAccountNumber: string;
  dedicatedAccountNumber: string;
}

export interface VrnView {
  walletId: string;
  vrnNumber: string;
  virtualAccountNumber: string;
}

/** Whether the call created the number (201) or found one already there (200). */
export interface Assigned<T> {
  created: boolean;
  data: T;
}

function virtualAccountRequired(walletId: string): AppError {
  return new AppError('VIRTUAL_ACCOUNT_REQUIRED', 'The wallet must be linked to a virtual account first (POST /v1/virtual-accounts, or approve the customer\'s KYC/KYB).', {
    details: [{ field: 'walletId', message: `wallet ${walletId} has no virtual account` }],
  });
}

/**
 * Gives the wallet a number of the kind unless it has one. Two requests at once both take a
 * serial, but only the first update lands (the WHERE … IS NULL); the other's serial is simply
 * never used, and it answers with the number that was set. `serialKeys` key the permutations of
 * the serials (account-numbers.ts).
 */
async function assign(tx: Tx, clientId: string, wallet: WalletRow, kind: AccountNumberKind, serialKeys: AccountNumberSerialKeys): Promise<{ created: boolean; wallet: WalletRow }> {
  const current = kind === 'DEDICATED' ? wallet.dedicated_account_number : wallet.vrn;
  if (current !== null) return { created: false, wallet };
  const number = await store.nextAccountNumber(tx, kind, serialKeys[kind]);
  const created = await store.setAccountNumberIfUnset(tx, clientId, wallet.id, kind, number);
  const reread = await findWallet(tx, clientId, wallet.id);
  if (!reread) throw notFound('Wallet');
  return { created, wallet: reread };
}

/**
 * POST /v1/virtual-accounts/assign-dedicated-account-number. Rules, first failing wins: the
 * wallet exists for this client (404), it has a virtual account (409 VIRTUAL_ACCOUNT_REQUIRED).
 * A wallet that already has a dedicated number keeps it and gets it back.
 */
export async function assignDedicatedAccountNumber(
  tx: Tx,
  context: RequestContext,
  walletId: string,
  serialKeys: AccountNumberSerialKeys,
): Promise<Assigned<DedicatedAccountNumberView>> {
  const wallet = await findWallet(tx, context.clientId, walletId);
  if (!wallet) throw notFound('Wallet', 'walletId');
  if (wallet.virtual_account_number === null) throw virtualAccountRequired(wallet.id);
  const result = await assign(tx, context.clientId, wallet, 'DEDICATED', serialKeys);
  const { virtual_account_number: virtualAccountNumber, dedicated_account_number: dedicatedAccountNumber } = result.wallet;
  if (virtualAccountNumber === null || dedicatedAccountNumber === null) throw new Error('a dedicated account number was assigned but cannot be read back');
  return { created: result.created, data: { walletId: wallet.id, virtualAccountNumber, dedicatedAccountNumber } };
}

/**
 * POST /v1/virtual-accounts/assign-vrn: the VRN goes to the customer's wallet that has this
 * virtual account number. An unknown customer, or a number that is not one of that customer's
 * wallets (including a malformed one), answers 404. A wallet that already has a VRN keeps it.
 */
export async function assignVrn(
  tx: Tx,
  context: RequestContext,
  input: { userId: string; virtualAccountNumber: string },
  serialKeys: AccountNumberSerialKeys,
): Promise<Assigned<VrnView>> {
  const customer = await findCustomer(tx, context.clientId, input.userId);
  if (!customer) throw notFound('Customer', 'userId');
  const wallet = /^[0-9]{1,34}$/.test(input.virtualAccountNumber)
    ? await store.findWalletByVirtualAccountNumber(tx, context.clientId, input.virtualAccountNumber)
    : undefined;
  if (!wallet || wallet.customer_id !== customer.id) {
    throw new AppError('NOT_FOUND', 'Virtual account not found', { details: [{ field: 'virtualAccountNumber', message: 'is not a virtual account of this customer' }] });
  }
  const result = await assign(tx, context.clientId, wallet, 'VRN', serialKeys);
  const { virtual_account_number: virtualAccountNumber, vrn } = result.wallet;
  if (virtualAccountNumber === null || vrn === null) throw new Error('a VRN was assigned but cannot be read back');
  return { created: result.created, data: { walletId: wallet.id, vrnNumber: vrn, virtualAccountNumber } };
}

export type DepositRoute = 'VIRTUAL_ACCOUNT_NUMBER' | 'DEDICATED_ACCOUNT_NUMBER' | 'VRN' | 'MASTER_ACCOUNT_REFERENCE';

/** Numbers that may be a wallet's virtual account number inside a memo (the master account's reference). */
const referencePattern = /(?<![0-9])70[0-9]{10}(?![0-9])/g;

/**
 * Finds the client's wallet an inbound deposit is for, the way the operating bank would: by the
 * account number the sender used (the wallet's virtual account number, dedicated account number
 * or VRN), or, for a deposit to the master account, by the reference (the wallet's virtual
 * account number) written in the memo. When nothing matches, the deposit is unroutable, and
 * `unroutable` says what it was sent to, for its failure reason.
 */
export async function routeDeposit(
  db: Queryable,
  clientId: string,
  operatingBank: OperatingBankConfig,
  accountNumber: string,
  memo: string | null,
): Promise<{ wallet: WalletRow; route: DepositRoute } | { wallet?: undefined; unroutable: string }> {
  if (accountNumber === operatingBank.masterAccountNumber) {
    // The memo must name one wallet: one that names two of the client's is returned, as one that
    // names none, rather than credited to whichever comes first in free text (until 2026-12-03 the
    // first; found by an audit). Numbers that name no wallet of the client do not count.
    const named = new Map<string, WalletRow>();
    for (const [reference] of (memo ?? '').matchAll(referencePattern)) {
      const wallet = await store.findWalletByVirtualAccountNumber(db, clientId, reference);
      if (wallet) named.set(wallet.id, wallet);
    }
    const [only] = named.values();
    if (named.size === 1 && only !== undefined) return { wallet: only, route: 'MASTER_ACCOUNT_REFERENCE' };
    // The reason says which (until 2026-12-03 a memo naming several said it named none; found by an audit).
    return { unroutable: named.size === 0 ? `master account ${accountNumber} without a known reference in the memo` : `master account ${accountNumber} whose memo names ${named.size} wallets` };
  }
  const unroutable = { unroutable: `account ${accountNumber}` };
  if (!/^[0-9]{1,34}$/.test(accountNumber)) return unroutable;
  const wallet = await store.findWalletByAnyNumber(db, clientId, accountNumber);
  if (!wallet) return unroutable;
  if (wallet.virtual_account_number === accountNumber) return { wallet, route: 'VIRTUAL_ACCOUNT_NUMBER' };
  if (wallet.dedicated_account_number === accountNumber) return { wallet, route: 'DEDICATED_ACCOUNT_NUMBER' };
  return { wallet, route: 'VRN' };
}

export function isWalletAccountNumberForm(value: string): boolean {
  return /^70[0-9]{10}$/.test(value) || accountNumberKinds.DEDICATED.pattern.test(value) || accountNumberKinds.VRN.pattern.test(value);
}

// ---- banking details (deposit instructions) ----

export type BankingDetailsType = 'ACH' | 'FEDWIRE' | 'SWIFT';

interface Beneficiary {
  name: string;
  address: string | null;
  account_number: string;
}

export interface AchDetails {
  beneficiary: Beneficiary;
  beneficiary_bank: { name: string; routing_number: string; bank_address: string };
  vrn: string;
}

export interface FedwireDetails {
  beneficiary: Beneficiary;
  beneficiary_bank: { name: string; routing_number: string; bank_address: string };
  vrn?: string;
  reference?: string;
}

export interface SwiftDetails {
  beneficiary: Beneficiary;
  beneficiary_bank: { name: string; swift: string; bank_address: string };
  intermediary_bank: { name: string; routing_number: string; bic_code: string };
  reference?: string;
}

export function formatAddress(address: Address | null): string | null {
  if (!address) return null;
  const cityLine = [address.cityCounty, [address.stateRegion, address.zip].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return [address.street1, address.street2, cityLine, address.countryCode].filter((part): part is string => Boolean(part)).join(', ');
}

/** The account holder's name as a bank shows it: the person's full name, or the business's legal name. */
export function holderName(customer: CustomerRow): string {
  if (customer.type === 'PRIVATE') {
    return [customer.first_name, customer.middle_name, customer.last_name].filter((part): part is string => Boolean(part)).join(' ');
  }
  return customer.kyb?.legalName ?? customer.kyb?.tradeName ?? customer.email;
}

/**
 * Deposit instructions for a wallet, per type:
 *
 * - ACH needs a VRN (409 VRN_NOT_ASSIGNED otherwise). account_number is the dedicated account
 *   number when there is one, else the VRN; `vrn` is always shown.
 * - FEDWIRE: account_number is the dedicated account number; without one, the VRN (the bank
 *   routes it like an account number, so no reference is needed); without either, the master
 *   account, with `reference` (the wallet's virtual account number) to write in the wire's memo.
 *   `vrn` is shown when assigned.
 * - SWIFT: the nested beneficiary / beneficiary_bank / intermediary_bank form; account_number is
 *   the dedicated account number, else the master account with `reference`.
 *
 * The wallet must exist (404) and have a virtual account (409 VIRTUAL_ACCOUNT_REQUIRED).
 */
export async function bankingDetails(
  db: Queryable,
  clientId: string,
  operatingBank: OperatingBankConfig,
  walletId: string,
  type: BankingDetailsType,
): Promise<AchDetails | FedwireDetails | SwiftDetails> {
  if (!isUuid(walletId)) throw notFound('Wallet');
  const wallet = await findWallet(db, clientId, walletId);
  if (!wallet) throw notFound('Wallet');
  const virtualAccountNumber = wallet.virtual_account_number;
  if (virtualAccountNumber === null) throw virtualAccountRequired(wallet.id);
  const customer = await findCustomer(db, clientId, wallet.customer_id);
  if (!customer) throw notFound('Wallet');
  const name = holderName(customer);
  const address = formatAddress(customer.main_address);
  const { dedicated_account_number: dedicated, vrn } = wallet;

  if (type === 'ACH') {
    if (vrn === null) {
      throw new AppError(
        'VRN_NOT_ASSIGNED',
        'ACH deposit instructions need a VRN, and this wallet has none: assign one with POST /v1/virtual-accounts/assign-vrn, or use type=FEDWIRE.',
      );
    }
    return {
      beneficiary: { name, address, account_number: dedicated ?? vrn },
      beneficiary_bank: { name: operatingBank.name, routing_number: operatingBank.routingNumber, bank_address: operatingBank.address },
      vrn,
    };
  }
  if (type === 'FEDWIRE') {
    const accountNumber = dedicated ?? vrn ?? operatingBank.masterAccountNumber;
    return {
      beneficiary: { name, address, account_number: accountNumber },
      beneficiary_bank: { name: operatingBank.name, routing_number: operatingBank.routingNumber, bank_address: operatingBank.address },
      ...(vrn === null ? {} : { vrn }),
      ...(dedicated === null && vrn === null ? { reference: virtualAccountNumber } : {}),
    };
  }
  return {
    beneficiary: { name, address, account_number: dedicated ?? operatingBank.masterAccountNumber },
    beneficiary_bank: { name: operatingBank.name, swift: operatingBank.swiftCode, bank_address: operatingBank.address },
    intermediary_bank: { name: operatingBank.intermediaryName, routing_number: operatingBank.intermediaryRoutingNumber, bic_code: operatingBank.intermediaryBic },
    ...(dedicated === null ? { reference: virtualAccountNumber } : {}),
  };
}
