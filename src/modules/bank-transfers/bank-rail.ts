import type { BankDirection, BankNetwork } from './bank-transfers.tables.js';

/**
 * The payment rails (ACH, Fedwire, SWIFT) as the rest of the program sees them: the outside
 * system that carries a payment and, some time later, reports that it settled or came back.
 *
 * When a withdrawal is made or a deposit arrives, the service asks the rail what it will do with
 * the payment (`plan`). The answer is stored with the payment in the same transaction, and the
 * settlement worker applies it once it is due (`settleAt`, by the injected clock). The call is
 * synchronous and does no input or output, so it may run inside the database transaction; a rail
 * that learns outcomes from an outside system instead answers `settleAt: null` and reports each
 * outcome later through the bank transfer service's settle and fail functions (as the sandbox
 * controls do).
 */
export interface RailPayment {
  clientId: string;
  bankTransferId: string;
  direction: BankDirection;
  bankNetwork: BankNetwork;
  amountMinor: bigint;
  asset: string;
  /** The beneficiary's account (withdrawals) or the sender's account (deposits). */
  counterpartyAccountNumber: string;
  counterpartyName: string;
  remittanceMemo: string | null;
}

export type RailPlan =
  | { settleAt: null }
  | { settleAt: Date; outcome: 'COMPLETED' }
  | { settleAt: Date; outcome: 'FAILED'; returnCode: string; failureReason: string };

export interface BankRail {
  readonly name: string;
  plan(payment: RailPayment, now: Date): RailPlan;
}

/**
 * The rail of a production deployment until a real rail is connected: it plans nothing, so
 * payments stay PENDING (a withdrawal's money stays RESERVED) until an outcome is reported.
 */
export const unconnectedBankRail: BankRail = {
  name: 'unconnected',
  plan: () => ({ settleAt: null }),
};
