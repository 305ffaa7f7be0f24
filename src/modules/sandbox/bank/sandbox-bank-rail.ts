import type { BankRail, RailPayment, RailPlan } from '../../bank-transfers/index.js';
import { describeReturnCode, magicReturnCode } from '../../bank-transfers/index.js';

/**
 * The sandbox rail: every payment settles `delayMs` after it started, by the injected clock,
 * unless the other party's account number is a magic value (it ends in a listed return code,
 * such as 000123456R01 or 7654321AC04): then the payment comes back after the same delay with
 * that code. For a withdrawal the other party is the beneficiary; for a deposit, the sender.
 * The sandbox controls settle or fail a payment at once instead.
 */
export class SandboxBankRail implements BankRail {
  readonly name = 'sandbox';

  constructor(private readonly delayMs: number) {}

  plan(payment: RailPayment, now: Date): RailPlan {
    const settleAt = new Date(now.getTime() + this.delayMs);
    const returnCode = magicReturnCode(payment.counterpartyAccountNumber);
    if (returnCode === undefined) return { settleAt, outcome: 'COMPLETED' };
    return { settleAt, outcome: 'FAILED', returnCode, failureReason: describeReturnCode(returnCode) };
  }
}
