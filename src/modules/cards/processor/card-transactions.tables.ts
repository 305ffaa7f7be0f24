import type { ColumnType } from 'kysely';
import type { Json, Numeric } from '../../../platform/db/schema.js';
import type { CardType } from '../cards.tables.js';

/** migrations/0025_card_transactions.sql */

export type CardTransactionStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
export const cardTransactionTypes = [
  'PRE_AUTHORIZATION',
  'ACCOUNT_VERIFICATION',
  'BALANCE_INQUIRY',
  'PURCHASE',
  'REFUND',
  'PRE_AUTH_COMPLETION',
  'REVERSAL_ADVICE',
] as const;
export type CardTransactionType = (typeof cardTransactionTypes)[number];
export type DecisionSource = 'SYSTEM' | 'CLIENT' | 'STAND_IN' | 'NETWORK';

export interface MerchantRecord {
  name: string;
  mcc: string;
  city: string;
  state: string;
  country: string;
}

export interface FeeRecord {
  type: string;
  amountMinor: string;
  currency: string;
}

/** The mark a lifecycle carries while its cooperative decision request is in flight. */
export interface CoopPendingMark {
  childId: string;
  eventId: string;
  step: 'AUTHORIZATION' | 'INCREMENT' | 'FINANCIAL';
  /** What is reserved for the decision, minor units (a decimal string); less once a reversal released part of it. */
  reservedMinor: string;
  /**
   * The request's identifiers (since 2026-12-03; absent on marks written before): a reversal whose
   * DE90 names an increment still waiting for its answer cancels it.
   */
  request?: {
    mti: string;
    stan: string;
    transmissionDateTime: string;
    acquirerId: string;
    /** Its RRN (DE37; since 2026-12-03): a reversal naming an acquirer of zeros prefers the request of its own RRN. */
    rrn?: string;
  };
  /**
   * Set when a reversal withdrew the request before its answer (reservedMinor is then 0): the
   * answer applies nothing (91), and a second reversal undoes nothing. Cleared with the answer.
   */
  withdrawn?: true;
  /**
   * For an increment (since 2026-12-03): the lifecycle's expiry once the client approves it (set
   * from the increment's arrival); the reservation itself leaves the expiry where it was.
   */
  expiresAt?: string;
  /**
   * When the decision's timer (`card.coop-decision`) has the stand-in decide it, should its second
   * transaction never come (since 2026-12-07; absent on marks written before, which are decided
   * when their timer, scheduled by migration 0051, runs): the request's arrival plus the program's
   * `timeoutMs` plus processor.ts's `unansweredMarginMs`.
   */
  decideBy?: string;
}

/** Why the stand-in rule decided instead of the client. */
export type StandInReason = 'TIMEOUT' | 'NON_2XX' | 'BAD_BODY' | 'UNREACHABLE' | 'NO_ENDPOINT' | 'LIFECYCLE_CLOSED';

export interface CoopDecisionRecord {
  /** The COOP_AUTH_0100/0200 event sent (its id is the webhook-id header). */
  eventId: string;
  subscriptionId: string | null;
  latencyMs: number | null;
  httpStatus: number | null;
  standInReason: StandInReason | null;
  /** What was wrong with the answer, for a stand-in. */
  detail: string | null;
  clientResponseCode: string | null;
  message: string | null;
  metadata: Record<string, unknown> | null;
}

export interface CardSwipesTable {
  client_id: string;
  id: string;
  card_id: string;
  wallet_id: string;
  credit_line_id: string | null;
  card_type: CardType;
  status: CardTransactionStatus;
  asset: string;
  network_data_ref: string | null;
  first_mti: string;
  stan: string;
  transmission_date_time: string;
  acquirer_id: string;
  rrn: string;
  held_minor: Numeric;
  posted_minor: Numeric;
  hold_id: string | null;
  merchant: ColumnType<MerchantRecord | null, string | null, string | null>;
  mcc: string | null;
  expires_at: Date | null;
  expired_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** Migration 0028: set while a cooperative decision request is in flight (see coop-auth.ts). */
  coop_pending: ColumnType<CoopPendingMark | null, string | null | undefined, string | null>;
  /**
   * Migration 0039: what refund authorizations (0100, processing code 20) announced on this
   * lifecycle and no refund has cleared yet; nothing is held for it. 0 otherwise.
   */
  refund_authorized_minor: Numeric;
}

export interface CardTransactionsTable {
  client_id: string;
  id: string;
  swipe_id: string;
  card_id: string;
  wallet_id: string;
  credit_line_id: string | null;
  card_type: CardType;
  type: CardTransactionType;
  operation: 'CREDIT' | 'DEBIT';
  status: CardTransactionStatus;
  mti: string;
  processing_code: string;
  asset: string;
  amount_minor: Numeric;
  requested_minor: Numeric;
  held_minor: Numeric;
  transaction_minor: Numeric;
  transaction_currency: string;
  surcharge_minor: ColumnType<string | null, string | bigint | null, string | bigint | null>;
  fees: Json<FeeRecord[]>;
  rrn: string;
  stan: string;
  transmission_date_time: string;
  acquirer_id: string;
  auth_code: string | null;
  response_code: string;
  decline_reason: string | null;
  decision_source: DecisionSource;
  network_data_ref: string | null;
  merchant: ColumnType<MerchantRecord | null, string | null, string | null>;
  request_fields: Json<Record<string, string>>;
  response_mti: string;
  response_fields: Json<Record<string, string>>;
  expires_at: Date | null;
  expired_at: Date | null;
  over_capture: boolean;
  force_post: boolean;
  orphan: boolean;
  ledger_hold_id: string | null;
  created_at: Date;
  /** Migration 0028: what the cooperative client or the stand-in decided (COOP_AUTH decision requests only). */
  coop_decision: ColumnType<CoopDecisionRecord | null, string | null | undefined, string | null>;
  /** Migration 0033: the trace id of the request or background run that wrote the record (NULL before it). */
  trace_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 0038: the record a repeat (0101, 0201, …) repeats; NULL for every other record. */
  repeat_of: string | null;
  /** Migration 0044: the posting a reversal credited back (a 0200 or 0220 of its lifecycle), or the increment (an 0100) whose hold it released; NULL for every other record. */
  reverses_id: string | null;
}

declare module '../../../platform/db/schema.js' {
  interface Database {
    card_swipes: CardSwipesTable;
    card_transactions: CardTransactionsTable;
  }
}
