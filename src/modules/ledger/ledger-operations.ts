import type { Asset } from '../../platform/money/assets.js';
import type { AccountRef, HistoryInput, SystemAccountKind } from './ledger.js';

/**
 * The operations the ledger offers. Each is atomic: it either applies completely or throws an
 * AppError (insufficient funds, unknown wallet or hold, hold not open) and changes nothing.
 * Every amount is a positive bigint in minor units of the operation's asset.
 */

/**
 * Every `purpose` a wallet transaction record carries, the values of the `purpose` filter. The
 * ledger writes the first nine, one per step (docs/ledger.md); a `postTransfer` leg writes TRANSFER
 * unless its caller names a purpose of its own, the rest of the list: USER_TRADE and
 * TRADE_FEE_SETTLEMENT (trades), WITHDRAWAL_FEE_REVENUE (crypto), WITHDRAWAL_RETURN (bank
 * transfers), CREDIT_LINE_PAYMENT, CREDIT_CARD_CAPTURE, CREDIT_CARD_REFUND and
 * COLLATERAL_LIQUIDATION (credit). A leg's purpose is typed with this list (TransferLeg), so a
 * module that posts under a new purpose adds it here, and the transaction history's `purpose`
 * filter takes it.
 */
export const walletTransactionPurposes = [
  'TRANSFER',
  'HOLD',
  'HOLD_INCREMENT',
  'CAPTURE',
  'RELEASE',
  'EXPIRY',
  'PENDING_CREDIT',
  'CLEARING',
  'PENDING_FAILURE',
  'USER_TRADE',
  'TRADE_FEE_SETTLEMENT',
  'WITHDRAWAL_FEE_REVENUE',
  'WITHDRAWAL_RETURN',
  'DEPOSIT_RETURN',
  'CREDIT_LINE_PAYMENT',
  'CREDIT_CARD_CAPTURE',
  'CREDIT_CARD_REFUND',
  'COLLATERAL_LIQUIDATION',
] as const;

export type WalletTransactionPurpose = (typeof walletTransactionPurposes)[number];

/** An account named by a caller; `field` names the request field for error details. */
export type AccountInput = AccountRef & { field?: string };

export interface TransferLeg {
  from: AccountInput;
  to: AccountInput;
  amount: bigint;
  /** The `purpose` of the wallet records this leg writes (USER_TRADE, TRADE_FEE_SETTLEMENT, …); default TRANSFER. */
  purpose?: WalletTransactionPurpose;
}

/** Moves AVAILABLE money between accounts of one asset, in one or more legs. */
export interface TransferOperation {
  operation: 'transfer';
  clientId: string;
  now: Date;
  asset: Asset;
  legs: TransferLeg[];
  history: HistoryInput;
  description?: string | null;
}

/** Reserves money of a wallet for an outgoing payment that is not final yet (AVAILABLE → RESERVED). */
export interface PlaceHoldOperation {
  operation: 'placeHold';
  clientId: string;
  now: Date;
  wallet: { walletId: string; field?: string };
  asset: Asset;
  amount: bigint;
  expiresAt?: Date | null;
  history: HistoryInput;
}

/** Reserves more for an open hold (an incremental authorization). */
export interface IncrementHoldOperation {
  operation: 'incrementHold';
  clientId: string;
  now: Date;
  holdId: string;
  amount: bigint;
  expiresAt?: Date | null;
  history: HistoryInput;
}

/**
 * Captures an open hold, fully, partly or beyond it (over-capture, the excess taken from
 * AVAILABLE), and pays the captured money to `to`. With `final`, what is left of the hold is
 * released and the hold closes; without it a partial capture leaves the hold open.
 * `force` is the one path that may take AVAILABLE below zero (a card completion or force post
 * cannot be refused); the part AVAILABLE could not cover is recorded as the hold's shortfall and
 * the account's `overdrawn`.
 */
export interface CaptureHoldOperation {
  operation: 'captureHold';
  clientId: string;
  now: Date;
  holdId: string;
  amount: bigint;
  to: AccountInput;
  final: boolean;
  force?: boolean;
  /** The `purpose` of the records of what is captured (default CAPTURE; a release stays RELEASE). */
  purpose?: WalletTransactionPurpose;
  /** The ledger transfer's description (default the history's note). */
  description?: string | null;
  history: HistoryInput;
}

/**
 * A debit that must not be refused and has no hold to capture (a card force post, a completion
 * whose hold expired, a bank deposit returned after it settled): `amount` leaves the wallet's
 * AVAILABLE for `to` even when AVAILABLE is short. It is recorded as a hold placed at zero and
 * captured at once with `force`, so what AVAILABLE could not cover is a hold's shortfall and the
 * account's `overdrawn`, exactly as for a forced capture (ledger verify accepts the overdraft for
 * that reason, and only for it). `purpose` names its records (default CAPTURE), `description` its
 * ledger transfer (default the history's note).
 */
export interface ForcePostOperation {
  operation: 'forcePost';
  clientId: string;
  now: Date;
  wallet: { walletId: string; field?: string };
  asset: Asset;
  amount: bigint;
  to: AccountInput;
  purpose?: WalletTransactionPurpose;
  description?: string | null;
  history: HistoryInput;
}

/** Gives back part or all (default) of an open hold (RESERVED → AVAILABLE). */
export interface ReleaseHoldOperation {
  operation: 'releaseHold';
  clientId: string;
  now: Date;
  holdId: string;
  amount?: bigint;
  history: HistoryInput;
}

/** Releases everything left of an open hold because it expired. */
export interface ExpireHoldOperation {
  operation: 'expireHold';
  clientId: string;
  now: Date;
  holdId: string;
  history: HistoryInput;
}

/** Incoming money not cleared yet: a system account → the wallet's PENDING balance. */
export interface RecordPendingCreditOperation {
  operation: 'recordPendingCredit';
  clientId: string;
  now: Date;
  wallet: { walletId: string; field?: string };
  asset: Asset;
  amount: bigint;
  source: SystemAccountKind;
  history: HistoryInput;
}

/** The pending money cleared: PENDING → AVAILABLE. */
export interface ClearPendingCreditOperation {
  operation: 'clearPendingCredit';
  clientId: string;
  now: Date;
  pendingCreditId: string;
  history: HistoryInput;
}

/** The pending money did not arrive: PENDING → back to the system account it came from. */
export interface FailPendingCreditOperation {
  operation: 'failPendingCredit';
  clientId: string;
  now: Date;
  pendingCreditId: string;
  history: HistoryInput;
}

export type LedgerOperation =
  | TransferOperation
  | PlaceHoldOperation
  | IncrementHoldOperation
  | CaptureHoldOperation
  | ForcePostOperation
  | ReleaseHoldOperation
  | ExpireHoldOperation
  | RecordPendingCreditOperation
  | ClearPendingCreditOperation
  | FailPendingCreditOperation;

/** One wallet transaction record written by an operation. */
export interface WrittenRecord {
  id: string;
  walletId: string;
  operation: 'CREDIT' | 'DEBIT';
}

export interface TransferResult {
  transferId: string;
  /** Per leg, the wallet transaction ids of its debit and credit sides (when they are wallets). */
  legs: { debitTransactionId: string | null; creditTransactionId: string | null }[];
}

export interface HoldResult {
  holdId: string;
  transferId: string;
  records: WrittenRecord[];
}

export interface CaptureResult extends HoldResult {
  captured: bigint;
  overCaptured: bigint;
  shortfall: bigint;
  released: bigint;
}

export interface PendingCreditResult {
  pendingCreditId: string;
  transferId: string;
  records: WrittenRecord[];
}

export type ResultOf<O extends LedgerOperation> = O extends TransferOperation
  ? TransferResult
  : O extends CaptureHoldOperation | ForcePostOperation
    ? CaptureResult
    : O extends PlaceHoldOperation | IncrementHoldOperation | ReleaseHoldOperation | ExpireHoldOperation
      ? HoldResult
      : PendingCreditResult;
