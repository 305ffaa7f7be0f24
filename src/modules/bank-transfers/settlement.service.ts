import crypto from 'node:crypto';
import type { Deps } from '../../platform/deps.js';
import type { Tx } from '../../platform/db/transaction.js';
import { datedAfter, type RequestContext } from '../../platform/http/context.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { assert } from '../../platform/assert.js';
import { captureHold, clearPendingCredit, failPendingCredit, forcePost, postTransfer, releaseHold, type HistoryInput } from '../ledger/index.js';
import { cancelTimer, dueTimersPerRunMax, runDueTimers, type TimerKind } from '../timers/index.js';
import { recordEvent } from '../webhooks/index.js';
import { assetOf, bankEventData, bankTransactionView, transactionTypes, walletTransactionTypes, type BankTransactionView } from './bank-transfer.js';
import * as store from './bank-transfers.store.js';
import { defaultReturnCode, describeReturnCode } from './return-codes.js';
import { assertNoViolations, checkNameOrAddress } from './withdrawal-rules.js';

const completedEvents = { DEPOSIT: 'BANK_DEPOSIT_TRANSACTION_COMPLETED', WITHDRAWAL: 'BANK_WITHDRAWAL_TRANSACTION_COMPLETED' } as const;
const failedEvents = { DEPOSIT: 'BANK_DEPOSIT_TRANSACTION_FAILED', WITHDRAWAL: 'BANK_WITHDRAWAL_TRANSACTION_FAILED' } as const;

/**
 * The history of a transfer's later records. A deposit's carry its memo as their `note`, as its
 * PENDING_CREDIT record does (until 2026-12-06 the CLEARING and PENDING_FAILURE records had none;
 * found by an audit), so a wallet's completed history shows what the payment was for.
 */
function history(context: RequestContext, transfer: store.BankTransferRow, childId: string): HistoryInput {
  return {
    parentTransactionId: transfer.id,
    type: walletTransactionTypes[transfer.direction],
    traceId: context.traceId,
    ...(transfer.direction === 'DEPOSIT' ? { note: transfer.remittance_memo } : {}),
    links: { bankTransactionId: childId, parentBankTransactionId: transfer.id },
  };
}

function notPending(transfer: store.BankTransferRow): AppError {
  return new AppError(
    'BANK_TRANSFER_NOT_PENDING',
    `The bank transaction is already ${transfer.status}; only a PENDING one can settle or fail (and a COMPLETED withdrawal or ACH deposit come back).`,
  );
}

/** What the wallet's history records of a settled withdrawal that came back (the credit from the bank's settlement account). */
export const withdrawalReturnPurpose = 'WITHDRAWAL_RETURN';

/** What the wallet's history records of a settled deposit taken back (the debit to the bank's settlement account). */
export const depositReturnPurpose = 'DEPOSIT_RETURN';

/**
 * Whether a COMPLETED transfer can still come back. A withdrawal can, on every rail (the
 * beneficiary's bank returns what it cannot apply). A deposit only on ACH, whose credits stay
 * returnable after they settle (a late return, or an unauthorized entry the originator's customer
 * disputes, within NACHA's windows); a Fedwire or SWIFT credit is final once it is paid (a recall
 * needs the customer's consent and is a new payment), and a deposit of no stated network is not
 * known to be ACH.
 */
function returnableAfterSettlement(transfer: store.BankTransferRow): boolean {
  return transfer.status === 'COMPLETED' && (transfer.direction === 'WITHDRAWAL' || transfer.bank_network === 'ACH');
}

/**
 * The rail says the payment settled: a withdrawal's hold is captured (the money leaves for the
 * bank's settlement account), a deposit's pending credit clears into AVAILABLE. Writes the
 * SUCCESS child and the COMPLETED event. The caller holds the transfer's row lock.
 */
export async function completeTransfer(tx: Tx, requestContext: RequestContext, transfer: store.BankTransferRow): Promise<BankTransactionView> {
  if (transfer.status !== 'PENDING') throw notPending(transfer);
  // Dated after the payment's last change (until 2026-12-07 a change that had waited for the row
  // lock behind another process's could be dated before it; see datedAfter).
  const context = datedAfter(requestContext, transfer.updated_at);
  assert(transfer.wallet_id !== null, `pending bank transfer ${transfer.id} has no wallet`);
  const childId = idAt(context.now);
  if (transfer.direction === 'WITHDRAWAL') {
    assert(transfer.hold_id !== null, `withdrawal ${transfer.id} has no hold`);
    await captureHold(tx, {
      clientId: context.clientId,
      now: context.now,
      holdId: transfer.hold_id,
      amount: BigInt(transfer.amount),
      to: { system: 'BANK_SETTLEMENT' },
      final: true,
      history: history(context, transfer, childId),
    });
  } else {
    assert(transfer.pending_credit_id !== null, `deposit ${transfer.id} has no pending credit`);
    await clearPendingCredit(tx, { clientId: context.clientId, now: context.now, pendingCreditId: transfer.pending_credit_id, history: history(context, transfer, childId) });
  }
  const child: store.BankTransactionRow = {
    client_id: context.clientId,
    id: childId,
    bank_transfer_id: transfer.id,
    type: transactionTypes[transfer.direction].success,
    status: 'COMPLETED',
    return_code: null,
    failure_reason: null,
    created_at: context.now,
  };
  await store.insertBankTransaction(tx, child);
  await store.updateBankTransfer(tx, context.clientId, transfer.id, { status: 'COMPLETED', settle_at: null, updated_at: context.now });
  await cancelTimer(tx, context.clientId, store.settlementTimerKind, transfer.id);
  const updated = { ...transfer, status: 'COMPLETED' as const, settle_at: null, updated_at: context.now };
  await recordEvent(tx, context, completedEvents[transfer.direction], bankEventData(updated, { id: childId }));
  return bankTransactionView(updated, child);
}

/**
 * The payment came back (or was rejected): a withdrawal's hold is released in full (the money
 * returns to AVAILABLE), a deposit's pending credit goes back to the bank's settlement account. A
 * withdrawal that settled already can come back too (a return after settlement): its amount is
 * credited back from the bank's settlement account. So can a settled ACH deposit: its amount is
 * taken back from AVAILABLE even when the wallet has spent it (the wallet is then overdrawn by
 * what it lacked, as a card's forced posting leaves it). Writes the FAILURE child with the return
 * code and the FAILED event; the payment is FAILED.
 */
export async function failTransfer(
  tx: Tx,
  requestContext: RequestContext,
  transfer: store.BankTransferRow,
  outcome: { returnCode?: string | undefined; reason?: string | undefined },
): Promise<BankTransactionView> {
  const settled = returnableAfterSettlement(transfer);
  if (transfer.status !== 'PENDING' && !settled) throw notPending(transfer);
  // A return that waited for the row lock while another process settled the payment is dated
  // after that settlement: until 2026-12-07 its FAILURE child sorted before the SUCCESS, so GET
  // answered the SUCCESS as the FAILED payment's current state and its FAILED event sorted before
  // COMPLETED (found by a two-process money audit).
  const context = datedAfter(requestContext, transfer.updated_at);
  const settledDeposit = settled && transfer.direction === 'DEPOSIT';
  assert(transfer.wallet_id !== null, `bank transfer ${transfer.id} has no wallet`);
  const returnCode = outcome.returnCode ?? defaultReturnCode(transfer.bank_network, settledDeposit);
  const reason = outcome.reason ?? describeReturnCode(returnCode);
  const childId = idAt(context.now);
  if (settledDeposit) {
    // Taken back after it settled (an ACH return after settlement, or a credit the sender's
    // customer says was never authorized): the money goes back to the bank's settlement account
    // whether or not the wallet still has it, since the bank has already given it back. What
    // AVAILABLE lacks is recorded as a shortfall and the wallet is overdrawn (ledger verify lists
    // it); its next credits pay the overdraft first. Until 2026-12-06 a settled deposit could not
    // be returned at all (409).
    await forcePost(tx, {
      clientId: context.clientId,
      now: context.now,
      wallet: { walletId: transfer.wallet_id },
      asset: assetOf(transfer.asset),
      amount: BigInt(transfer.amount),
      to: { system: 'BANK_SETTLEMENT' },
      purpose: depositReturnPurpose,
      description: `settled bank deposit ${transfer.id} returned (${returnCode})`,
      history: history(context, transfer, childId),
    });
  } else if (settled) {
    // Returned after it settled (an ACH return comes days later: account closed, no account): the
    // beneficiary's bank sends the money back, from the bank's settlement account to AVAILABLE.
    // Until 2026-12-03 a settled payment could not fail, so a return after settlement could not be
    // recorded and the wallet never got its money back (found by an audit).
    await postTransfer(tx, {
      clientId: context.clientId,
      now: context.now,
      asset: assetOf(transfer.asset),
      legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId: transfer.wallet_id }, amount: BigInt(transfer.amount), purpose: withdrawalReturnPurpose }],
      history: history(context, transfer, childId),
      description: `settled bank withdrawal ${transfer.id} returned (${returnCode})`,
    });
  } else if (transfer.direction === 'WITHDRAWAL') {
    assert(transfer.hold_id !== null, `withdrawal ${transfer.id} has no hold`);
    // The release of a returned withdrawal is FAILED, as a returned deposit's PENDING_FAILURE is:
    // the payment failed (a release by cancellation would be CANCELLED).
    await releaseHold(tx, { clientId: context.clientId, now: context.now, holdId: transfer.hold_id, history: { ...history(context, transfer, childId), status: 'FAILED' } });
  } else {
    assert(transfer.pending_credit_id !== null, `deposit ${transfer.id} has no pending credit`);
    await failPendingCredit(tx, { clientId: context.clientId, now: context.now, pendingCreditId: transfer.pending_credit_id, history: history(context, transfer, childId) });
  }
  const child: store.BankTransactionRow = {
    client_id: context.clientId,
    id: childId,
    bank_transfer_id: transfer.id,
    type: transactionTypes[transfer.direction].failure,
    status: 'FAILED',
    return_code: returnCode,
    failure_reason: reason,
    created_at: context.now,
  };
  await store.insertBankTransaction(tx, child);
  const changes = { status: 'FAILED' as const, settle_at: null, return_code: returnCode, failure_reason: reason, updated_at: context.now };
  await store.updateBankTransfer(tx, context.clientId, transfer.id, changes);
  await cancelTimer(tx, context.clientId, store.settlementTimerKind, transfer.id);
  const updated = { ...transfer, ...changes };
  await recordEvent(tx, context, failedEvents[transfer.direction], bankEventData(updated, { id: childId, returnCode, failureReason: reason }));
  return bankTransactionView(updated, child);
}

/** Locks the bank transfer named by its own id or by the id of one of its children (404 otherwise). */
export async function lockTransferByAnyId(tx: Tx, clientId: string, id: string): Promise<store.BankTransferRow> {
  if (!isUuid(id)) throw notFound('Bank transaction');
  const child = await store.findBankTransaction(tx, clientId, id);
  const transfer = await store.lockBankTransfer(tx, clientId, child?.bank_transfer_id ?? id);
  if (!transfer) throw notFound('Bank transaction');
  return transfer;
}

/** Sandbox control: settle a pending deposit or withdrawal now (parent or child id). */
export async function settleBankTransaction(tx: Tx, context: RequestContext, id: string): Promise<BankTransactionView> {
  return completeTransfer(tx, context, await lockTransferByAnyId(tx, context.clientId, id));
}

/**
 * Sandbox control: fail a pending deposit or withdrawal now, with an optional return code and
 * reason (no control or invisible formatting characters, not only white space: it is shown in
 * the records and the FAILED event).
 */
export async function failBankTransaction(
  tx: Tx,
  context: RequestContext,
  id: string,
  outcome: { returnCode?: string | undefined; reason?: string | undefined },
): Promise<BankTransactionView> {
  assertNoViolations(checkNameOrAddress(outcome.reason, 'reason'));
  return failTransfer(tx, context, await lockTransferByAnyId(tx, context.clientId, id), outcome);
}

/**
 * The timer kind that applies the rail's planned outcome to a pending transfer when it is due
 * (scheduled with the transfer, by the client's clock). The outcome is checked again under the
 * transfer's row lock: a transfer settled or failed by hand meanwhile is left alone.
 */
export const settlementTimer: TimerKind = {
  kind: store.settlementTimerKind,
  run: async (tx, context, transferId) => {
    const transfer = await store.lockBankTransfer(tx, context.clientId, transferId);
    if (!transfer || transfer.status !== 'PENDING' || transfer.settle_at === null) return;
    if (transfer.planned_outcome === 'FAILED') {
      await failTransfer(tx, context, transfer, {
        returnCode: transfer.planned_return_code ?? undefined,
        reason: transfer.planned_failure_reason ?? undefined,
      });
    } else {
      await completeTransfer(tx, context, transfer);
    }
  },
};

/**
 * Applies the planned outcome of every pending transfer that is due by its client's clock, each
 * in its own transaction (the timer worker does this among its other timers; this runs only the
 * settlement timers). Events of each settled payment carry a trace id of their own. Returns how
 * many transfers it finished.
 */
export async function runDueSettlements(deps: Deps, limit = dueTimersPerRunMax): Promise<number> {
  return (await runDueTimers(deps.db, deps.clock, [settlementTimer], { limit, newTraceId: () => crypto.randomUUID() })).length;
}
