import { v5 as uuidv5 } from 'uuid';

/** The three balances of a wallet account. System accounts only use AVAILABLE. */
export const balanceTypes = ['AVAILABLE', 'RESERVED', 'PENDING'] as const;
export type BalanceType = (typeof balanceTypes)[number];

/** The bank's own accounts, one set per client and asset, each split into shards. */
export const systemAccountKinds = ['BANK_SETTLEMENT', 'CARD_SETTLEMENT', 'CRYPTO_CUSTODY', 'TRADING', 'FEES', 'SUSPENSE', 'CREDIT_LENDING'] as const;
export type SystemAccountKind = (typeof systemAccountKinds)[number];
export type AccountKind = 'WALLET' | SystemAccountKind;

export type HoldStatus = 'OPEN' | 'CAPTURED' | 'RELEASED' | 'EXPIRED';
export type PendingCreditStatus = 'PENDING' | 'CLEARED' | 'FAILED';
export type LedgerTransferKind =
  | 'TRANSFER'
  | 'HOLD_PLACE'
  | 'HOLD_INCREMENT'
  | 'HOLD_CAPTURE'
  | 'HOLD_RELEASE'
  | 'HOLD_EXPIRE'
  | 'PENDING_CREDIT'
  | 'PENDING_CLEAR'
  | 'PENDING_FAIL';

export type WalletTransactionStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
export type WalletTransactionOperation = 'CREDIT' | 'DEBIT';

/**
 * Number of shards of every system account. A movement on a system account lands on one shard
 * picked at random, so concurrent transactions rarely wait for the same row; the account's
 * balance is the sum of its shards (system accounts have no non-negative rule to check).
 */
export const systemAccountShards = 16;

/** Either a customer wallet or one of the bank's system accounts, in one asset. */
export type AccountRef = { walletId: string } | { system: SystemAccountKind };

/** Fixed namespace of the deterministic account ids (any constant UUID). */
const accountIdNamespace = '6f1d3c56-2b7e-4d55-9a43-0c8e5b1f7a21';

/**
 * Account ids are derived from what the account is (client, wallet or system kind and shard,
 * asset), so every process computes the same id without a lookup, and the id is the natural key.
 */
export function walletAccountId(clientId: string, walletId: string, asset: string): string {
  const name = `wallet/${clientId}/${walletId.toLowerCase()}/${asset}`;
  let id = accountIds.get(name);
  if (id === undefined) {
    // A SHA-1 per lookup adds up on the busy paths; the answer never changes, so keep it a while.
    if (accountIds.size >= accountIdCacheMax) accountIds.clear();
    id = uuidv5(name, accountIdNamespace);
    accountIds.set(name, id);
  }
  return id;
}

const accountIdCacheMax = 100_000;
const accountIds = new Map<string, string>();

export function systemAccountId(clientId: string, kind: SystemAccountKind, asset: string, shard: number): string {
  return uuidv5(`system/${clientId}/${kind}/${asset}/${shard}`, accountIdNamespace);
}

/** The links a wallet transaction can carry to the bank, card or crypto record that caused it. */
export interface WalletTransactionLinks {
  cardTransactionId?: string | null;
  parentCardTransactionId?: string | null;
  bankTransactionId?: string | null;
  parentBankTransactionId?: string | null;
  cryptoTransactionId?: string | null;
  parentCryptoTransactionId?: string | null;
}

/**
 * What the caller says about the wallet transaction records (the unified history) an operation
 * writes: one child record per wallet the operation touches, under `parentTransactionId`.
 */
export interface HistoryInput {
  parentTransactionId: string;
  /**
   * The trace id of the request or job that causes the movement (its RequestContext.traceId),
   * written on the ledger transfer so GET /v1/traces/:traceId finds it. A batched write carries
   * one per operation: the requests of one transaction keep their own trace ids.
   */
  traceId: string;
  /** The business type shown to integrators, for example INTERNAL_TRANSFER or CARD_TRANSACTION. */
  type: string;
  /** Overrides the status the operation would give its records by default. */
  status?: WalletTransactionStatus;
  note?: string | null;
  links?: WalletTransactionLinks;
}

/** Balances of one wallet in one asset, in minor units. */
export interface WalletBalance {
  asset: string;
  available: bigint;
  reserved: bigint;
  pending: bigint;
  /** What a forced completion took AVAILABLE below zero by (0 almost always). */
  overdrawn: bigint;
}
