/**
 * The card authorization processor (contract §12.3): ONE entry point, `processCardMessage`, takes a
 * parsed ISO 8583 message for a client and, inside the caller's database transaction, decides,
 * moves money through the card's funding source, writes the card transaction records and their
 * CARD_TRANSACTION_* events, and builds the answer to the network. Every sandbox card endpoint and
 * the message-level endpoint go through it. docs/cards.md describes the flows.
 */
import { sql, type CompiledQuery } from 'kysely';
import type { Deps } from '../../../platform/deps.js';
import { compiledOnce, compileOnly } from '../../../platform/db/text-statements.js';
import type { Tx } from '../../../platform/db/transaction.js';
import { WriteStatement } from '../../../platform/db/write-statement.js';
import { deferToGroup, inGroupLockOrder, inTransactionGroup, leaveIfLockedElsewhere, lockedElsewhere, passLockTurn } from '../../../platform/db/transaction-groups.js';
import { asStoredJsonb } from '../../../platform/db/jsonb.js';
import { datedAfter, type RequestContext } from '../../../platform/http/context.js';
import { assert } from '../../../platform/assert.js';
import { idAt } from '../../../platform/ids.js';
import { lockWalletAccount, walletAccountId, type AccountRow, type HistoryInput } from '../../ledger/index.js';
import { cancelTimer, scheduleTimer, type TimerKind } from '../../timers/index.js';
import { addDecisionDelivery, addDecisionRequestEvent, addEvents, decisionEndpointOf, decisionRequestOf, type EventToRecord } from '../../webhooks/index.js';
import { cardVaultOf } from '../card-vault.js';
import type { CardRow } from '../cards.service.js';
import { defaultCoopAuth, mccIn, type CoopAuthSettings } from '../program-settings.js';
import type { CardProgramRow } from '../programs.js';
import {
  authorizationCode,
  coopAuthEventTypeOf,
  declineReasons,
  describeResponseCode,
  expiryYyMm,
  firstSendingOf,
  formatAdditionalAmounts,
  isApproval,
  isCardExpired,
  originalAmountType,
  packIsoMessage,
  redactForEvent,
  responseMtiOf,
  sendingsOf,
  type DeclineReason,
  type IsoMessage,
} from '../network/index.js';
import {
  cardEventData,
  cardEventTypes,
  cardTransactionView,
  toBigInt,
  type CardSwipeRow,
  type CardTransactionRow,
  type CardTransactionView,
} from './card-transaction-views.js';
import type { CardTransactionStatus, CardTransactionType, CoopDecisionRecord, CoopPendingMark, DecisionSource, StandInReason } from './card-transactions.tables.js';
import { coopOutcome, readClientAnswer, verdictText, type ClientExchange, type ClientVerdict } from './coop-answer.js';
import { coopEventData, type PendingCoopDecision } from './coop-auth.js';
import { cardTransactionInserts, swipeInserts, swipeUpdates } from './card-writes.js';
import { fundingSourceOf, isInsufficientFunds, type FundingSource } from './funding-source.js';
import { cardCurrencyNumeric, atRate, handledTransactionTypes, magicResponseCodeOf, readMessage, transactionTypeOf, type MessageInfo } from './message-info.js';
import { de90Names, isFirstOf, messageNamed, purchasePostedUnderFirst, recordsOfLifecycle, reversesUnnamedRefund, sentUnderFirstOf } from './lifecycle-records.js';
import { claimCard, claimCardBeforeLock, dayMs, lockCardWithProgram, lookUpMessage, swipesOfCard, type LockedCard } from './processor-reads.js';
import './card-transactions.tables.js';

/** What the processor answered to one message. */
export interface CardMessageOutcome {
  /** The message as received, DE2 masked and card secrets removed (safe to show and store). */
  request: IsoMessage;
  response: IsoMessage;
  packedResponse: string;
  /** The child record written (for a duplicate transmission, the one written the first time); null for an unknown card. */
  record: CardTransactionView | null;
  responseCode: string;
  approvedAmountMinor: bigint;
  authCode: string | null;
  decisionSource: DecisionSource;
  /** True when the message repeated an earlier one (same STAN and RRN within 24 h) and got its first answer again. */
  replayed: boolean;
}

/** A COOP_AUTH decision request to send to the client: the reservation is committed, the answer not yet known. */
export interface CoopDecisionStep {
  pendingDecision: PendingCoopDecision;
}

/**
 * A repeat (0101, 0201) of a request whose decision request is still waiting for the client: the
 * caller waits (outside any transaction) until the first sending's record exists, at most
 * `waitMs`, then runs the repeat again with `awaitFirst: false`, which answers it as the first.
 */
export interface AwaitFirstStep {
  awaitFirst: { childId: string; waitMs: number };
}

/** What one transaction of the processor produced: the answer, a decision request to send first, or a repeat to hold. */
export type CardMessageStep = CardMessageOutcome | CoopDecisionStep | AwaitFirstStep;

export function isCoopDecisionStep(step: CardMessageStep): step is CoopDecisionStep {
  return 'pendingDecision' in step;
}

export function isAwaitFirstStep(step: CardMessageStep): step is AwaitFirstStep {
  return 'awaitFirst' in step;
}

/** How long past the program's timeout a repeat waits for its first sending's answer. */
const repeatWaitMarginMs = 1_000;

/** The hold expiry timer (contract §12.3: "hold expiry by the client's clock"). */
export const holdExpiryTimerKind = 'card.hold-expiry';

/** The timer that decides a cooperative request whose second transaction never came (decideUnanswered). */
export const coopDecisionTimerKind = 'card.coop-decision';

/**
 * How long past the program's timeout a decision request's second transaction may still come
 * before its timer has the stand-in decide it: ample for a slow process (it answers the network at
 * the timeout at the latest, then writes), short beside a hold's days.
 */
const unansweredMarginMs = 30_000;

/** How long a repeated STAN + RRN counts as the same message. */
const duplicateWindowMs = 24 * 3600 * 1000;

/** Fields a response never carries: the card number and the card's secrets stay with the acquirer. */
const fieldsNotEchoed = ['2', '14', '35', '36', '45', '52', '55'];

interface Decision {
  responseCode: string;
  declineReason: string | null;
  approvedMinor: bigint;
  source: DecisionSource;
  /** The client's DE38 for its approval (else one is drawn). */
  authCode?: string | null;
  /** A cooperative partial approval: the amount the client approved, in the transaction currency (DE4 of the answer). */
  approvedTransactionMinor?: bigint | undefined;
  /** Set by the system checks of a COOP_AUTH card that passed: the client decides (phase 2). */
  awaitingClient?: boolean;
  coop?: CoopDecisionRecord;
}

const approve = (approvedMinor: bigint): Decision => ({ responseCode: '00', declineReason: null, approvedMinor, source: 'SYSTEM' });
/** An advice's answer (completions, reversals, advices): the network decided; acknowledged with 00. */
const acknowledge = (approvedMinor = 0n): Decision => ({ ...approve(approvedMinor), source: 'NETWORK' });
/** What a lifecycle that stops being open is: COMPLETED once something is posted on it (a refund too), else CANCELLED. */
const closedStatus = (postedMinor: bigint): 'COMPLETED' | 'CANCELLED' => (postedMinor !== 0n ? 'COMPLETED' : 'CANCELLED');
const decline = (reason: DeclineReason): Decision => ({ responseCode: declineReasons[reason], declineReason: reason, approvedMinor: 0n, source: 'SYSTEM' });
function declineWithCode(code: string): Decision {
  return { responseCode: code, declineReason: describeResponseCode(code)?.declineReason ?? 'DO_NOT_HONOR', approvedMinor: 0n, source: 'SYSTEM' };
}

/** Everything one message's handling needs. */
interface Run {
  tx: Tx;
  /** Null in a decision's second transaction, which neither reads a card's number nor finds a subscription. */
  deps: Processor | null;
  context: RequestContext;
  card: CardRow;
  program: CardProgramRow;
  info: MessageInfo;
  message: IsoMessage;
  /** Same STAN + RRN within 24 h but different content: a request answers 94 at its place in the decision order. */
  duplicate: boolean;
  /** What the funds check found (a decision request tells the client). */
  availableMinor?: bigint;
  /** The lifecycle the message correlates to, read with the other lookups after the card's lock (`correlate` takes it from here). */
  correlated?: { byRrn: boolean; swipe: CardSwipeRow | undefined };
  /** The card's approvals of the day, read with the other lookups when the decision was known to reach the limits. */
  today?: { count: number; sumMinor: bigint };
  /** What `systemPrechecks` found, once asked (null: they pass). */
  prechecked?: Decision | null;
  /**
   * The message's writes after the ledger's (its lifecycle, the hold's expiry timer, its record and
   * events): collected and sent as one statement by `writeChild` (or `requestDecision`).
   */
  write: WriteStatement;
  /** The DEBIT card's wallet account, locked by the lookup and unchanged since; its funding source clears it once it moves money. */
  locked: { account?: AccountRow | undefined };
  /** The record writeChild wrote, as written (a transaction group sends it at its end: answerRepeatOfUnanswered copies it unread). */
  written?: CardTransactionRow;
}

/** What writes a lifecycle, its timer and its record: a message's run, or a hold expiry. */
type Writer = Pick<Run, 'tx' | 'context' | 'write'>;

type Processor = Pick<Deps, 'config' | 'database'>;

/**
 * Handles one message in the caller's transaction. For a 0100 or 0200 of a COOP_AUTH card that
 * passed the system checks it answers with a CoopDecisionStep instead: the amount is reserved,
 * the decision request's event recorded, and the caller commits, asks the client outside any
 * transaction, then calls `finishCoopDecision` in a second transaction.
 */
export async function processCardMessage(
  tx: Tx,
  context: RequestContext,
  deps: Processor,
  message: IsoMessage,
  /**
   * `card`: the card the caller built the message from, already locked with its program in this
   * transaction (lockCardWithProgram); used when DE2 is its number.
   */
  options: { awaitFirst?: boolean; card?: LockedCard } = {},
): Promise<CardMessageStep> {
  const info = readMessage(message, context.now);
  const fingerprint = cardVaultOf(deps).fingerprint(message.fields['2'] ?? '');
  // The card's row lock orders every message of a card (limits, holds) and comes first in the lock order.
  const locked = options.card?.card.pan_fingerprint === fingerprint ? options.card : await lockCardWithProgram(tx, context.clientId, { fingerprint });
  if (!locked) return unknownCard(message);
  const { card, program } = locked;
  assert(program, `card ${card.id} has no program`);
  const run: Run = { tx, deps, context, card, program, info, message, duplicate: false, write: new WriteStatement(), locked: {} };

  // What the message's path reads after the lock, in one statement: the earlier message with its
  // STAN and RRN, the lifecycle it correlates to, the day's approvals when the decision reaches
  // the limits, and the wallet account a DEBIT card's purchase, authorization or completion moves.
  const correlation = correlationOf(info);
  const movesFunds = card.card_type === 'DEBIT' && mayMoveFunds(info);
  const mayWait = card.card_transaction_handler === 'COOP_AUTH' && (info.mti === '0100' || info.mti === '0200');
  const found = await lookUpMessage(tx, context, card, info, {
    earlier: { since: new Date(context.now.getTime() - duplicateWindowMs) },
    ...(correlation === undefined ? {} : { correlate: correlation }),
    approvals: reachesLimits(run),
    ...(movesFunds ? { account: { asset: program.currency } } : {}),
    ...(mayWait ? { waiting: true } : {}),
  });
  if (correlation !== undefined) run.correlated = { byRrn: correlation.byRrn, swipe: onLifecycle(run, found.correlated) };
  if (found.today !== undefined) run.today = found.today;
  if (found.account !== undefined) run.locked.account = found.account;

  if (found.waiting !== undefined && options.awaitFirst !== false) {
    // The first sending with this STAN and RRN still waits for the client's answer (it has no record
    // yet): a repeat (0101, 0201) waits for that answer; the same message sent again is declined 57
    // on its lifecycle, which stays as it was. Until 2026-12-05 both were looked for only by DE63 or
    // among the records: without DE63 a duplicate was decided as a new request (the client asked
    // again, the amount held or posted twice), and a repeat after a duplicate's 57 got that 57
    // (found by an audit).
    if (info.receivedMti !== info.mti) return { awaitFirst: { childId: found.waiting.childId, waitMs: (program.coop_auth ?? defaultCoopAuth).timeoutMs + repeatWaitMarginMs } };
    const swipe = onLifecycle(run, await lockSwipe(tx, context.clientId, found.waiting.swipeId));
    assert(swipe, `lifecycle ${found.waiting.swipeId} is missing`);
    return recordOnUnchanged(run, swipe, { type: info.mti === '0200' ? 'PURCHASE' : 'PRE_AUTHORIZATION', status: 'FAILED', decision: decline('TRANSACTION_NOT_PERMITTED'), amountMinor: 0n });
  }
  const earlier = found.earlierId === null ? undefined : await earlierMessage(tx, context, found.earlierId, info, message);
  if (earlier?.sameContent) return info.receivedMti === earlier.row.mti ? replay(message, earlier.row) : recordRepeat(run, earlier.row);
  run.duplicate = earlier !== undefined;
  // A reversal acts on the lifecycle it names, whatever its type; any other message of a type not
  // handled moves nothing, and money back (processing code 20) has handlers of its own.
  if (info.mti === '0400' || info.mti === '0420') return reverse(run);
  const transactionType = transactionTypeOf(info);
  if (!handledTransactionTypes.has(transactionType)) return declineTransactionType(run);
  const moneyBack = transactionType === '20';
  switch (info.mti) {
    case '0100':
      return moneyBack ? authorizeRefund(run) : authorize(run);
    case '0120':
      return moneyBack ? authorizeRefund(run) : advise(run);
    case '0200':
      return moneyBack ? refund(run) : financial(run);
    case '0220':
      return moneyBack ? refund(run) : completeOrForcePost(run);
  }
}

/**
 * A repeat that waited in vain (AwaitFirstStep) for its first sending's answer, which never came
 * (the process that asked the client stopped between the two transactions): the stand-in decides
 * the first sending now (TIMEOUT), on its own lifecycle and reservation and under its own record
 * id, and the repeat gets that answer as a record of its own under the same lifecycle, as any
 * repeat does (recordRepeat). Undefined when the first sending is not waiting any more: the caller
 * then runs the repeat as usual. Until 2026-12-05 the repeat was decided as a request of its own:
 * with DE63 declined 57 (an increment while a reservation waits), without DE63 approved on a second
 * lifecycle that held the amount again beside the first reservation, left until its expiry (found
 * by an audit).
 */
export async function answerRepeatOfUnanswered(tx: Tx, context: RequestContext, deps: Processor, repeat: IsoMessage, childId: string): Promise<CardMessageOutcome | undefined> {
  const info = readMessage(repeat, context.now);
  const locked = await lockCardWithProgram(tx, context.clientId, { fingerprint: cardVaultOf(deps).fingerprint(repeat.fields['2'] ?? '') });
  if (!locked?.program) return undefined;
  const { card, program } = locked;
  const swipe = await swipesOfCard(tx, context.clientId, card.id)
    .select(['id', 'coop_pending'])
    .where('stan', '=', info.stan)
    .where('rrn', '=', info.rrn)
    .where(sql<string>`coop_pending->>'childId'`, '=', childId)
    .executeTakeFirst();
  const mark = swipe?.coop_pending;
  if (!swipe || !mark || mark.step === 'INCREMENT') return undefined;
  // The first sending as its repeat carries it (a repeat is the same message sent again), with its
  // own MTI and transmission date and time, as its mark keeps them.
  const firstMti = mark.request?.mti ?? firstSendingOf(repeat.isoMti);
  const type = coopAuthEventTypeOf(firstMti);
  assert(type === 'COOP_AUTH_0100' || type === 'COOP_AUTH_0200', `no decision request for ${firstMti}`);
  const pending: PendingCoopDecision = {
    clientId: context.clientId,
    cardId: card.id,
    swipeId: swipe.id,
    childId,
    step: mark.step,
    message: { isoMti: firstMti, fields: { ...repeat.fields, ...(mark.request ? { '7': mark.request.transmissionDateTime } : {}) } },
    // Only its id is read (the decision's record names it): without an exchange no delivery is logged.
    event: { id: mark.eventId, type, createdAt: context.now.toISOString(), data: { traceId: context.traceId } },
    endpoint: null,
    settings: program.coop_auth ?? defaultCoopAuth,
    program,
  };
  const { written } = await finishCoopDecision(tx, context, pending, null, context.now, {
    reason: 'TIMEOUT',
    detail: 'the first sending was never answered (the process that asked stopped before applying the answer); decided when its repeat came',
  });
  // Its record is not readable yet (a transaction group sends the writes at its end): taken as written.
  assert(written, `the record of ${childId} was not written`);
  const run: Run = { tx, deps, context, card, program, info, message: repeat, duplicate: false, write: new WriteStatement(), locked: {} };
  return recordRepeat(run, written);
}

/**
 * The decision's timer (`card.coop-decision`, due at its mark's `decideBy`): a request whose second
 * transaction never came (the process that asked the client stopped between the two) and that no
 * repeat decided (answerRepeatOfUnanswered) is decided now by the stand-in (TIMEOUT), on its own
 * lifecycle and reservation and under its own record id, read back from its COOP_AUTH_0100/0200
 * event (the message as recorded, the card's number masked, which no record needs). On an open
 * lifecycle the program's stand-in rule applies to what is still reserved; on one that a reversal,
 * completion, advice or expiry closed meanwhile (the request withdrawn) the record is FAILED `91`
 * (LIFECYCLE_CLOSED) and nothing moves. Either way the mark goes and the record the event names
 * exists. Until 2026-12-07 nothing decided such a request unless the network repeated it: the
 * hold stayed until the lifecycle closed or expired, the withdrawn mark stayed for good, and the
 * event named a record that never existed (found by an audit that killed servers under load).
 * A mark whose deadline is later (a new request on the lifecycle, its timer move skipped while a
 * runner held this one) has its timer set to it instead.
 */
export async function decideUnanswered(tx: Tx, timerContext: RequestContext, swipeId: string): Promise<CardTransactionRow | undefined> {
  const { clientId } = timerContext;
  const peek = await tx.selectFrom('card_swipes').select(['card_id', 'coop_pending']).where('client_id', '=', clientId).where('id', '=', swipeId).executeTakeFirst();
  if (!peek?.coop_pending) return undefined;
  const locked = await lockCardWithProgram(tx, clientId, { id: peek.card_id });
  const swipe = await lockSwipe(tx, clientId, swipeId);
  const mark = swipe?.coop_pending;
  if (!locked?.program || !swipe || !mark) return undefined;
  if (mark.decideBy !== undefined && new Date(mark.decideBy) > timerContext.now) {
    await scheduleTimer(tx, { clientId, kind: coopDecisionTimerKind, subjectId: swipeId, dueAt: new Date(mark.decideBy), now: timerContext.now });
    return undefined;
  }
  const event = await decisionRequestOf(tx, clientId, mark.eventId);
  assert(event, `the decision request ${mark.eventId} of lifecycle ${swipeId} is missing`);
  const message = event.data['raw'] as IsoMessage;
  const { program } = locked;
  const pending: PendingCoopDecision = {
    clientId,
    cardId: locked.card.id,
    swipeId,
    childId: mark.childId,
    step: mark.step,
    message,
    // Only its id is read (the decision's record names it): without an exchange no delivery is logged.
    event: { ...event, data: { traceId: timerContext.traceId } },
    endpoint: null,
    settings: program.coop_auth ?? defaultCoopAuth,
    program,
  };
  // After the lifecycle's last change, as a message is (onLifecycle).
  const context = datedAfter(timerContext, swipe.updated_at);
  const { written } = await finishCoopDecision(tx, context, pending, null, context.now, {
    reason: 'TIMEOUT',
    detail: 'no answer applied by its deadline (timeoutMs + 30 s): the process that asked stopped before applying one, or the clock was advanced past the deadline',
  });
  return written;
}

/** The timer kind (src/modules/timer-kinds.ts): a decision request's second transaction that never came. */
export const cardCoopDecisionTimer: TimerKind = {
  kind: coopDecisionTimerKind,
  run: async (tx, context, swipeId) => {
    await decideUnanswered(tx, context, swipeId);
  },
};

// ---- the answer -----------------------------------------------------------------------------

/**
 * Fields only the issuer fills in the response to a request for a decision (0100, 0200 and their
 * repeats): its authorization code (DE38) and its amounts (DE54: a partial approval's original
 * amount, a balance). Such a request's own are not echoed: a decline came back with the request's
 * DE38 as if authorized, and an approval with the request's DE54 as the available balance (until
 * 2026-12-07; found by an audit). The processor's own are set as extras. An advice or a reversal
 * (0120, 0220, 0400, 0420) reports a decision already taken: its response acknowledges it and
 * echoes its DE38 and DE54 as the other fields.
 */
const issuerAnswerFields = ['38', '54'];
const decisionRequests = ['0100', '0101', '0200', '0201'];

function buildResponse(message: IsoMessage, responseCode: string, extras: Record<string, string> = {}): IsoMessage {
  const isoMti = responseMtiOf(message.isoMti);
  assert(isoMti !== null, `no response MTI for ${message.isoMti}`);
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.fields)) {
    if (!fieldsNotEchoed.includes(key) && !(decisionRequests.includes(message.isoMti) && issuerAnswerFields.includes(key))) fields[key] = value;
  }
  for (const [key, value] of Object.entries({ ...extras, '39': responseCode })) {
    if (!fieldsNotEchoed.includes(key)) fields[key] = value;
  }
  const ordered = Object.fromEntries(Object.entries(fields).sort(([left], [right]) => Number(left) - Number(right)));
  return { isoMti, fields: ordered };
}

function unknownCard(message: IsoMessage): CardMessageOutcome {
  const response = buildResponse(message, declineReasons.INVALID_CARD_NUMBER);
  return {
    request: redactForEvent(message),
    response,
    packedResponse: packIsoMessage(response),
    record: null,
    responseCode: declineReasons.INVALID_CARD_NUMBER,
    approvedAmountMinor: 0n,
    authCode: null,
    decisionSource: 'SYSTEM',
    replayed: false,
  };
}

function replay(message: IsoMessage, row: CardTransactionRow): CardMessageOutcome {
  const response = { isoMti: row.response_mti, fields: row.response_fields };
  return {
    request: redactForEvent(message),
    response,
    packedResponse: packIsoMessage(response),
    record: cardTransactionView(row),
    responseCode: row.response_code,
    approvedAmountMinor: isApproval(row.response_code) ? toBigInt(row.amount_minor) : 0n,
    authCode: row.auth_code,
    decisionSource: row.decision_source,
    replayed: true,
  };
}

/**
 * A repeat (0101, 0201, …) of a message answered already (`first`, the first sending): a record of
 * its own under the same lifecycle with the first answer, as contract §12.4 says ("a new child
 * with the same parent and the same decision, without asking the client again"). It moves no
 * money and changes no lifecycle, so no event goes out. The same message sent again under its
 * own MTI is a duplicate transmission instead: answered by `replay`, nothing written.
 */
async function recordRepeat(run: Run, first: CardTransactionRow): Promise<CardMessageOutcome> {
  const { context, info, message, write } = run;
  const row: CardTransactionRow = {
    ...first,
    id: idAt(context.now),
    trace_id: context.traceId,
    mti: info.receivedMti,
    transmission_date_time: info.transmissionDateTime,
    request_fields: redactForEvent(message).fields,
    created_at: context.now,
    repeat_of: first.id,
    reverses_id: null,
  };
  write.addRows(cardTransactionInserts, [row]);
  await sendWrites(run);
  return { ...replay(message, first), record: cardTransactionView(row) };
}

/**
 * The earlier message of this card with the same STAN and RRN (and the same kind of message)
 * within 24 hours, found by the lookups (processor-reads.ts). The same amount makes it a repeat
 * (answered as the first time); anything else is a duplicate transmission (94 for a request).
 */
async function earlierMessage(tx: Tx, context: RequestContext, id: string, info: MessageInfo, message: IsoMessage): Promise<{ row: CardTransactionRow; sameContent: boolean }> {
  const row = await recordById(tx, context.clientId, id);
  return { row, sameContent: row.request_fields['4'] === message.fields['4'] && row.processing_code === info.processingCode };
}

/** Whether the message's handler may read or move the wallet's money (a DEBIT card's account is then locked with the lookups). */
function mayMoveFunds(info: MessageInfo): boolean {
  const transactionType = transactionTypeOf(info);
  switch (info.mti) {
    case '0100':
      // Not a refund authorization: it moves nothing.
      return handledTransactionTypes.has(transactionType) && transactionType !== '20';
    case '0120':
    case '0200':
    case '0220':
      return handledTransactionTypes.has(transactionType);
    case '0400':
    case '0420':
      // A reversal releases its lifecycle's hold on the wallet's account: locked with the lookups,
      // it is taken in a transaction group's ordered turn rather than later, out of order, by the
      // ledger (which deadlocked with other processes' groups; found by a two-server load run).
      return true;
    default:
      return false;
  }
}

/**
 * Whether and how the message's handler correlates it to a lifecycle (`correlate`): the same
 * choice as the handlers below make, so that the lookups read it with the rest.
 */
function correlationOf(info: MessageInfo): { byRrn: boolean } | undefined {
  const transactionType = transactionTypeOf(info);
  switch (info.mti) {
    case '0100':
      return info.networkDataRef === null ? undefined : { byRrn: false };
    case '0120':
      return { byRrn: transactionType !== '20' };
    case '0200':
      return transactionType === '20' || info.networkDataRef !== null ? { byRrn: false } : undefined;
    case '0220':
      return { byRrn: transactionType !== '20' };
    case '0400':
    case '0420':
      return { byRrn: true };
  }
}

/**
 * Whether the decision (`decide`) of this message is known to reach the daily limits: a 0100 or a
 * 0200 purchase that passes the checks needing no database. Its approvals of the day are then read
 * with the other lookups (`decide` reads them itself otherwise).
 */
function reachesLimits(run: Run): boolean {
  const transactionType = transactionTypeOf(run.info);
  // Spending only: not a refund, a balance inquiry or a type declined with 12.
  const spends = handledTransactionTypes.has(transactionType) && transactionType !== '20' && transactionType !== '30' && transactionType !== '31';
  const decided = spends && (run.info.mti === '0100' ? run.info.transactionMinor !== 0n : run.info.mti === '0200');
  return decided && systemPrechecks(run) === null;
}

// ---- records ----------------------------------------------------------------------------------

interface ChildDraft {
  type: CardTransactionType;
  operation?: 'CREDIT' | 'DEBIT';
  status: CardTransactionStatus;
  decision: Decision;
  /** What this message approved, posted, released or credited. */
  amountMinor: bigint;
  heldMinor: bigint;
  expiresAt?: Date | null;
  overCapture?: boolean;
  forcePost?: boolean;
  orphan?: boolean;
  holdId?: string | null;
  /** A reversal's: the posting it credited back. */
  reversesId?: string;
  responseExtras?: Record<string, string>;
}

/**
 * Writes the message's record, its CARD_TRANSACTION_* event (and a COOP_AUTH advice event), and
 * everything the message queued before (its lifecycle, the hold's expiry timer): one statement.
 */
async function writeChild(run: Run, swipe: CardSwipeRow, childId: string, draft: ChildDraft): Promise<CardMessageOutcome> {
  const { context, card, info, message } = run;
  const approved = isApproval(draft.decision.responseCode);
  const authCode = approved && (info.mti === '0100' || info.mti === '0200') ? (draft.decision.authCode ?? authorizationCode()) : null;
  const response = buildResponse(message, draft.decision.responseCode, { ...draft.responseExtras, ...(authCode === null ? {} : { '38': authCode }) });
  const request = redactForEvent(message);
  const row: CardTransactionRow = {
    client_id: context.clientId,
    id: childId,
    trace_id: context.traceId,
    swipe_id: swipe.id,
    card_id: card.id,
    wallet_id: card.wallet_id,
    credit_line_id: card.credit_line_id,
    card_type: card.card_type,
    type: draft.type,
    operation: draft.operation ?? 'DEBIT',
    status: draft.status,
    mti: info.receivedMti,
    processing_code: info.processingCode,
    asset: swipe.asset,
    amount_minor: draft.amountMinor.toString(),
    requested_minor: info.amountMinor.toString(),
    held_minor: draft.heldMinor.toString(),
    transaction_minor: info.transactionMinor.toString(),
    transaction_currency: info.transactionCurrency,
    surcharge_minor: info.surchargeMinor === null ? null : info.surchargeMinor.toString(),
    fees: info.fees,
    rrn: info.rrn,
    stan: info.stan,
    transmission_date_time: info.transmissionDateTime,
    acquirer_id: info.acquirerId,
    auth_code: authCode,
    response_code: draft.decision.responseCode,
    decline_reason: approved ? null : draft.decision.declineReason,
    decision_source: draft.decision.source,
    network_data_ref: info.networkDataRef,
    merchant: info.merchant,
    request_fields: request.fields,
    response_mti: response.isoMti,
    response_fields: response.fields,
    expires_at: draft.expiresAt ?? null,
    expired_at: null,
    over_capture: draft.overCapture ?? false,
    force_post: draft.forcePost ?? false,
    orphan: draft.orphan ?? false,
    ledger_hold_id: draft.holdId ?? swipe.hold_id,
    created_at: context.now,
    repeat_of: null,
    reverses_id: draft.reversesId ?? null,
    // As the jsonb column gives it back (its objects' keys reordered), so the record's view needs no read.
    coop_decision: draft.decision.coop ? asStoredJsonb(draft.decision.coop) : null,
  };
  const advice = card.card_transaction_handler === 'COOP_AUTH' ? await coopAdviceEvent(run, swipe, childId, draft, authCode) : null;
  const view = await insertChild(run, row, [advice]);
  const outcome: CardMessageOutcome = {
    request,
    response,
    packedResponse: packIsoMessage(response),
    record: view,
    responseCode: draft.decision.responseCode,
    approvedAmountMinor: approved ? draft.decision.approvedMinor : 0n,
    authCode,
    decisionSource: draft.decision.source,
    replayed: false,
  };
  run.written = row;
  return outcome;
}

/**
 * A record on a lifecycle that stays as it was (a decline on it, an acknowledgement that moves
 * nothing): the record shows the lifecycle's hold as it is.
 */
function recordOnUnchanged(run: Run, swipe: CardSwipeRow, draft: Omit<ChildDraft, 'heldMinor'>): Promise<CardMessageOutcome> {
  return writeChild(run, swipe, idAt(run.context.now), { ...draft, heldMinor: toBigInt(swipe.held_minor) });
}

/**
 * Sends the writer's statement with the record `row`, its CARD_TRANSACTION_* event and `more`
 * events added, and answers the record's view, built from the values written as the database
 * would return them (amounts as decimal strings, the same moments, a cooperative decision's jsonb
 * with its keys in jsonb's order).
 */
async function insertChild(writer: Writer, row: CardTransactionRow, more: (EventToRecord | null)[] = []): Promise<CardTransactionView> {
  const view = queueChild(writer, row, more);
  await sendWrites(writer);
  return view;
}

/**
 * Sends what the message queued on its statement. In a transaction group the statement joins the
 * group's instead (one statement per table for all its messages, sent with its COMMIT): nothing
 * the message does after reads what it writes.
 */
async function sendWrites({ tx, write }: Writer): Promise<void> {
  if (!deferToGroup(tx, write)) await write.execute(tx);
}

/** Queues a record and its event (and `more` events) on the writer's statement; answers its view. */
function queueChild(writer: Writer, row: CardTransactionRow, more: (EventToRecord | null)[] = []): CardTransactionView {
  const { context, write } = writer;
  write.addRows(cardTransactionInserts, [row]);
  const view = cardTransactionView(row);
  const events: EventToRecord[] = [{ context, type: cardEventTypes[row.status], data: cardEventData(view) }];
  for (const event of more) if (event !== null) events.push(event);
  addEvents(write, events);
  return view;
}

/** The statements of one row by key, prepared and compiled once (the duplicate and cooperative paths run them for every message). */
const recordByIdStatement = compiledOnce((clientId: string, id: string) =>
  compileOnly.selectFrom('card_transactions').selectAll().where('client_id', '=', clientId).where('id', '=', id),
);
/**
 * A row of `cards` or `card_swipes` by key, locked: `wait` for the lock, or `skip` a row another
 * transaction holds (a member of a transaction group, which then leaves it: lockedElsewhere).
 */
function lockByIdStatements<R>(build: (clientId: string, id: string) => { compile(): CompiledQuery<R>; skipLocked(): { compile(): CompiledQuery<R> } }) {
  return { wait: compiledOnce(build), skip: compiledOnce((clientId: string, id: string) => build(clientId, id).skipLocked()) };
}
const lockCardByIdStatements = lockByIdStatements((clientId, id) =>
  compileOnly.selectFrom('cards').selectAll().where('client_id', '=', clientId).where('id', '=', id).forUpdate(),
);
const lockSwipeStatements = lockByIdStatements((clientId, id) =>
  compileOnly.selectFrom('card_swipes').selectAll().where('client_id', '=', clientId).where('id', '=', id).forUpdate(),
);
const swipeExistsStatement = compiledOnce((clientId: string, id: string) =>
  compileOnly.selectFrom('card_swipes').select('id').where('client_id', '=', clientId).where('id', '=', id),
);

/** A card transaction record that exists. */
async function recordById(tx: Tx, clientId: string, id: string): Promise<CardTransactionRow> {
  const row = (await recordByIdStatement(clientId, id).execute(tx)).rows[0];
  assert(row, `card transaction ${id} is missing`);
  return row;
}

/**
 * Locks a card that exists and one of its lifecycles (undefined if missing), claimed first
 * (claimCardBeforeLock): the card, then the lifecycle (the lock order), sent together since
 * neither waits for the other's answer, one round trip instead of two.
 */
async function lockCardAndSwipe(tx: Tx, clientId: string, cardId: string, swipeId: string): Promise<{ card: CardRow; swipe: CardSwipeRow | undefined }> {
  // Before either statement leaves: a member that must wait for another group leaves none behind.
  claimCardBeforeLock(tx, clientId, { id: cardId });
  // In a group, neither lock is waited for: a card or lifecycle held by a transaction outside the
  // process's groups makes the member leave the group and run alone (lockedElsewhere).
  const mode = inTransactionGroup(tx) ? 'skip' : 'wait';
  const [cardResult, swipeResult] = await Promise.all([
    lockCardByIdStatements[mode](clientId, cardId).execute(tx),
    lockSwipeStatements[mode](clientId, swipeId).execute(tx),
  ]);
  const card = cardResult.rows[0];
  const swipe = swipeResult.rows[0];
  // The card exists (the caller read it), so only a lock can have kept it back.
  if (!card && mode === 'skip') throw lockedElsewhere(tx, `${clientId}/${cardId}`);
  if (!swipe) await leaveIfLockedElsewhere(tx, `${clientId}/${swipeId}`, async () => (await swipeExistsStatement(clientId, swipeId).execute(tx)).rows.length > 0);
  assert(card, `card ${cardId} is missing`);
  return { card, swipe };
}

interface SwipeState {
  status: CardTransactionStatus;
  heldMinor: bigint;
  postedMinor: bigint;
  holdId: string | null;
  expiresAt: Date | null;
  /** Set while a cooperative decision request is in flight; cleared whenever the lifecycle stops being PENDING. */
  coopPending?: CoopPendingMark | null;
  /** What refund authorizations announced and no refund has cleared yet (migration 0039); 0 unless given. */
  refundAuthorizedMinor?: bigint;
}

/** Queues a new lifecycle's insert (sent with the record) and answers its row as written. */
function insertSwipe(run: Run, id: string, state: SwipeState): CardSwipeRow {
  const { context, card, info } = run;
  const row: CardSwipeRow = {
    client_id: context.clientId,
    id,
    card_id: card.id,
    wallet_id: card.wallet_id,
    credit_line_id: card.credit_line_id,
    card_type: card.card_type,
    status: state.status,
    asset: run.program.currency,
    network_data_ref: info.networkDataRef,
    first_mti: info.receivedMti,
    stan: info.stan,
    transmission_date_time: info.transmissionDateTime,
    acquirer_id: info.acquirerId,
    rrn: info.rrn,
    held_minor: state.heldMinor.toString(),
    posted_minor: state.postedMinor.toString(),
    hold_id: state.holdId,
    merchant: info.merchant,
    mcc: info.mcc,
    expires_at: state.expiresAt,
    expired_at: null,
    created_at: context.now,
    updated_at: context.now,
    coop_pending: state.coopPending ?? null,
    refund_authorized_minor: (state.refundAuthorizedMinor ?? 0n).toString(),
  };
  run.write.addRows(swipeInserts, [row]);
  return row;
}

/** A request's mark once its request is withdrawn (reversed, closed, or decided by an advice before its answer): it reserves nothing. */
function withdrawnMark(mark: CoopPendingMark): CoopPendingMark;
function withdrawnMark(mark: CoopPendingMark | null): CoopPendingMark | null;
function withdrawnMark(mark: CoopPendingMark | null): CoopPendingMark | null {
  return mark === null || mark.withdrawn === true ? mark : { ...mark, reservedMinor: '0', withdrawn: true };
}

/** Queues a change to a lifecycle (sent with the record) and answers its row as changed. */
function updateSwipe(writer: Writer, swipe: CardSwipeRow, state: Partial<SwipeState> & { expiredAt?: Date | null }): CardSwipeRow {
  const { context } = writer;
  // A lifecycle that stops being PENDING (reversed, expired, completed) has no decision in flight any
  // more: a request still waiting for its answer is withdrawn, its mark kept (reserving nothing)
  // until the answer clears it, so a repeat sent meanwhile waits for that answer (firstSendingWaiting).
  // Until 2026-12-03 the mark went at once, and such a repeat was decided anew: the client was asked
  // again and a 0201 posted what the network had reversed (found by an audit).
  const stopsPending = state.status !== undefined && state.status !== 'PENDING';
  const coopPending = state.coopPending !== undefined ? state.coopPending : stopsPending ? withdrawnMark(swipe.coop_pending) : undefined;
  const refundAuthorized = state.refundAuthorizedMinor === undefined ? swipe.refund_authorized_minor : state.refundAuthorizedMinor.toString();
  // A refund authorization still announced keeps the lifecycle's expiry (its timer stays: cancelExpiry).
  const keepsExpiry = state.expiresAt === null && toBigInt(refundAuthorized) > 0n;
  const updated: CardSwipeRow = {
    ...swipe,
    status: state.status ?? swipe.status,
    held_minor: state.heldMinor === undefined ? swipe.held_minor : state.heldMinor.toString(),
    posted_minor: state.postedMinor === undefined ? swipe.posted_minor : state.postedMinor.toString(),
    hold_id: state.holdId === undefined ? swipe.hold_id : state.holdId,
    expires_at: state.expiresAt === undefined || keepsExpiry ? swipe.expires_at : state.expiresAt,
    expired_at: state.expiredAt === undefined ? swipe.expired_at : state.expiredAt,
    coop_pending: coopPending === undefined ? swipe.coop_pending : coopPending,
    refund_authorized_minor: refundAuthorized,
    updated_at: context.now,
  };
  // The whole row as changed (the lifecycle is this transaction's, behind its card's lock).
  writer.write.addRows(swipeUpdates, [updated]);
  return updated;
}

function historyOf(context: RequestContext, swipeId: string, childId: string, type: string): HistoryInput {
  return { parentTransactionId: swipeId, type, traceId: context.traceId, links: { cardTransactionId: childId, parentCardTransactionId: swipeId } };
}

/** The card's funding source: its wallet (DEBIT) or its credit line (CREDIT). */
function fundingOf(run: Run): FundingSource {
  return fundingSourceOf(run.card, run.program.currency, run.context, run.locked);
}

// ---- decisions ----------------------------------------------------------------------------------

/** Card status (57) and expiry (54): the checks every request passes first. */
function cardChecks(run: Run): Decision | null {
  const { card, info, context } = run;
  if (card.status !== 'ACTIVE') return decline('CARD_NOT_ACTIVE');
  const expiry = { expiryMonth: card.expiry_month, expiryYear: card.expiry_year };
  if (isCardExpired(expiry, context.now)) return decline('EXPIRED_CARD');
  if (info.expiry !== null && expiryYyMm(info.expiry) !== expiryYyMm(expiry)) return decline('EXPIRED_CARD');
  return null;
}

/**
 * The card's approvals of the day (UTC day of the client's clock): count and sum, for the limits;
 * for a COOP_AUTH card, its requests waiting for the client's answer as well. Usually read with
 * the other lookups already.
 */
async function approvalsToday(run: Run): Promise<{ count: number; sumMinor: bigint }> {
  if (run.today !== undefined) return run.today;
  const { today } = await lookUpMessage(run.tx, run.context, run.card, run.info, { approvals: true });
  assert(today, 'the lookups read no approvals');
  return today;
}

/**
 * The first checks of a 0100 or 0200 decision, those that need no database: card status (57) →
 * expiry (54) → sandbox magic amounts → amount (13) → the per-transaction limit (61). Null when
 * they pass.
 */
function systemPrechecks(run: Run): Decision | null {
  // Asked first by the lookups (whether to read the day's approvals), then by `decide`.
  if (run.prechecked === undefined) run.prechecked = prechecksOf(run);
  return run.prechecked;
}

function prechecksOf(run: Run): Decision | null {
  const { info, program } = run;
  const failed = cardChecks(run);
  if (failed) return failed;
  const magic = magicResponseCodeOf(info);
  if (magic !== null && magic !== '10') return declineWithCode(magic);
  const amount = info.amountMinor;
  if (amount <= 0n) return decline('INVALID_AMOUNT');
  if (amount > BigInt(program.limits.perTransactionMinor)) return decline('EXCEEDS_AMOUNT_LIMIT');
  return null;
}

/**
 * The decision on a 0100 or 0200 (contract §12.3), first failure wins: card status (57) →
 * expiry (54) → sandbox magic amounts → amount (13) → limits (61 amount, 65 count) → funds (51) →
 * duplicate STAN + RRN (94) → the cooperative client (COOP_AUTH programs) → partial approval
 * (05 when the program or the terminal does not allow it).
 */
async function decide(run: Run, funding: FundingSource): Promise<Decision> {
  const { info, program } = run;
  const failed = systemPrechecks(run);
  if (failed) return failed;
  const magic = magicResponseCodeOf(info);
  const amount = info.amountMinor;
  const today = await approvalsToday(run);
  if (today.sumMinor + amount > BigInt(program.limits.dailyMinor)) return decline('EXCEEDS_AMOUNT_LIMIT');
  if (today.count + 1 > program.limits.dailyCount) return decline('EXCEEDS_FREQUENCY_LIMIT');
  const approvedMinor = magic === '10' ? (amount / 2n > 0n ? amount / 2n : 1n) : amount;
  run.availableMinor = await funding.available(run.tx);
  if (run.availableMinor < approvedMinor) return decline('INSUFFICIENT_FUNDS');
  // A credit line refuses purchases at PURCHASE_RESTRICTED or worse, or that would take it there
  // (57 LTV_PURCHASE_RESTRICTED).
  const refusal = funding.refusal ? await funding.refusal(run.tx, approvedMinor) : null;
  if (refusal) return decline(refusal);
  if (run.duplicate) return decline('DUPLICATE_TRANSACTION');
  // A COOP_AUTH card's client decides what passed the system checks (not the sandbox magic amounts).
  if (run.card.card_transaction_handler === 'COOP_AUTH' && magic === null) return { ...approve(amount), source: 'CLIENT', awaitingClient: true };
  let decision = approve(approvedMinor);
  if (isApproval(decision.responseCode) && decision.approvedMinor < amount) {
    if (!partialApprovalEnabled(program) || !info.partialApprovalCapable) return decline('PARTIAL_APPROVAL_NOT_ALLOWED');
    decision = { ...decision, responseCode: '10' };
  }
  return decision;
}

// ---- cooperative authorization (contract §12.4) -------------------------------------------------

function pendingMark(run: Run, childId: string, step: CoopPendingMark['step'], reservedMinor: bigint): CoopPendingMark {
  const { info } = run;
  const request = { mti: info.mti, stan: info.stan, transmissionDateTime: info.transmissionDateTime, acquirerId: info.acquirerId, rrn: info.rrn };
  const { timeoutMs } = run.program.coop_auth ?? defaultCoopAuth;
  const decideBy = new Date(run.context.now.getTime() + timeoutMs + unansweredMarginMs).toISOString();
  return { childId, eventId: idAt(run.context.now), step, reservedMinor: reservedMinor.toString(), request, decideBy };
}

/**
 * Phase 1's end: the reservation is in place; records the COOP_AUTH_0100/0200 event (one id per
 * request) and finds the subscription that answers it. The caller commits and sends it.
 */
async function requestDecision(run: Run, swipe: CardSwipeRow, mark: CoopPendingMark, original: { mti: string; stan: string; rrn: string } | null): Promise<CoopDecisionStep> {
  const { tx, context, card, info, message, program, deps } = run;
  assert(deps !== null, 'a decision request comes from a message');
  const type = coopAuthEventTypeOf(info.mti);
  assert(type === 'COOP_AUTH_0100' || type === 'COOP_AUTH_0200', `no decision request for ${info.mti}`);
  const infoOriginal = info.original === null ? null : { mti: info.original.mti, stan: info.original.stan };
  const data = coopEventData({
    message,
    info,
    cardId: card.id,
    cardReferenceId: card.reference_number,
    cardTransactionId: mark.childId,
    parentCardTransactionId: swipe.id,
    availableMinor: run.availableMinor ?? null,
    original: original ?? infoOriginal,
  });
  // With the reservation (its hold, lifecycle and expiry timer, queued by the caller), in one
  // statement, sent now: a repeat whose first sending was never answered goes on to apply the
  // stand-in's decision in this same transaction, and reads the lifecycle back.
  const event = addDecisionRequestEvent(run.write, context, type, data, mark.eventId);
  // Should the second transaction never come, the stand-in decides it then (decideUnanswered).
  assert(mark.decideBy !== undefined, 'a new mark has its deadline');
  await scheduleTimer(tx, { clientId: context.clientId, kind: coopDecisionTimerKind, subjectId: swipe.id, dueAt: new Date(mark.decideBy), now: context.now }, run.write);
  // The client's subscription is read with it: neither waits for the other's answer, one round
  // trip instead of two.
  const [, endpoint] = await Promise.all([run.write.execute(tx), decisionEndpointOf(tx, deps, context.clientId, type, context.now)]);
  return {
    pendingDecision: {
      clientId: context.clientId,
      cardId: card.id,
      swipeId: swipe.id,
      childId: mark.childId,
      step: mark.step,
      message,
      event,
      endpoint,
      settings: program.coop_auth ?? defaultCoopAuth,
      program,
      at: context.now,
    },
  };
}

/** The decision a verdict makes (the stand-in rule when the client's answer cannot be used). */
function decisionOfVerdict(run: Run, verdict: ClientVerdict, settings: CoopAuthSettings, record: CoopDecisionRecord): Decision {
  const outcome = coopOutcome(verdict, settings, run.info.amountMinor, run.info.partialApprovalCapable);
  if (outcome.partialNotAllowed) return { ...decline('PARTIAL_APPROVAL_NOT_ALLOWED'), source: outcome.source, coop: record };
  if (!isApproval(outcome.responseCode)) return { ...declineWithCode(outcome.responseCode), source: outcome.source, coop: record };
  const approvedTransactionMinor = verdict.kind === 'APPROVE' && outcome.responseCode === '10' ? verdict.answeredMinor : undefined;
  return { responseCode: outcome.responseCode, declineReason: null, approvedMinor: outcome.approvedMinor, source: outcome.source, authCode: outcome.authCode, coop: record, approvedTransactionMinor };
}

/**
 * The client answers in the request's currency (`amountMinor` is DE4); holds are in the card's.
 * A partial approval is converted at the message's own rate (DE6 over DE4), rounded half up and
 * kept between one minor unit and the whole; one that comes to the whole is a full approval.
 * Until 2026-12-04 the answer was read in the card's currency, so approving the whole of a
 * foreign-currency request was a partial approval (found by an audit).
 */
function inCardCurrencyOf(verdict: ClientVerdict, info: MessageInfo): ClientVerdict {
  if (verdict.kind !== 'APPROVE') return verdict;
  const answered = { ...verdict, answeredMinor: verdict.approvedMinor };
  if (!verdict.partial) return { ...answered, approvedMinor: info.amountMinor };
  const converted = atRate(verdict.approvedMinor, info.transactionMinor, info.amountMinor);
  const approvedMinor = converted < 1n ? 1n : converted;
  return approvedMinor >= info.amountMinor ? { ...answered, approvedMinor: info.amountMinor, partial: false } : { ...answered, approvedMinor };
}

/** What a finished decision request reports besides the answer to the network. */
export interface CoopDecisionResult {
  outcome: CardMessageOutcome;
  verdict: ClientVerdict;
  /** The decision's record as written (undefined when it was decided before: the record stands). */
  written?: CardTransactionRow | undefined;
}

/**
 * Phase 2, in a second transaction: applies the client's answer (or the stand-in) to the
 * reservation phase 1 made, writes the card transaction record and its event, and logs the
 * decision request's delivery. `exchange` is null when the client has no subscription for the type.
 * A lifecycle that a reversal or the hold expiry closed meanwhile is declined "91" (nothing to apply).
 */
export async function finishCoopDecision(
  tx: Tx,
  requestContext: RequestContext,
  pending: PendingCoopDecision,
  exchange: ClientExchange | null,
  attemptedAt: Date,
  /** Why nothing was sent, when `exchange` is null for another reason than a missing subscription. */
  notSent?: { reason: StandInReason; detail: string },
): Promise<CoopDecisionResult> {
  // At the moment phase 1 dated the request, which its record's id (reserved then) carries.
  const context = pending.at !== undefined && pending.at > requestContext.now ? { ...requestContext, now: pending.at } : requestContext;
  const { card, swipe } = await lockCardAndSwipe(tx, context.clientId, pending.cardId, pending.swipeId);
  claimCard(tx, card);
  // The program as phase 1 read it: the request was decided under those settings.
  const program = pending.program;
  const info = readMessage(pending.message, context.now);
  const run: Run = { tx, deps: null, context, card, program, info, message: pending.message, duplicate: false, write: new WriteStatement(), locked: {} };
  assert(swipe, `lifecycle ${pending.swipeId} of a decision request is missing`);
  const mark = swipe.coop_pending?.childId === pending.childId ? swipe.coop_pending : null;
  // Answered now: its timer has nothing left to decide (one a runner holds is left to it, which then finds no mark).
  if (mark !== null) await cancelTimer(tx, context.clientId, coopDecisionTimerKind, swipe.id, run.write);
  else {
    // Decided already by the stand-in, when a repeat of it waited in vain (answerRepeatOfUnanswered)
    // or at its deadline (decideUnanswered: the process stopped, or a clock advance passed the
    // deadline while the client answered): that answer stands, this one is ignored as a late one is,
    // and the request, sent and answered, is in the delivery log as ignored (until 2026-12-07 it was
    // not, and the client's answer left no trace; found by an audit).
    const decided = (await recordByIdStatement(context.clientId, pending.childId).execute(tx)).rows[0];
    if (decided) {
      const verdict: ClientVerdict = { kind: 'STAND_IN', reason: 'TIMEOUT', detail: 'decided already by the stand-in (at a repeat that waited in vain, or at its deadline)' };
      if (logDelivery(run, pending, exchange, attemptedAt, false, `IGNORED: ${verdict.detail}`)) await sendWrites(run);
      return { outcome: replay(pending.message, decided), verdict };
    }
  }
  // Open: the request still waits for this answer (not closed, decided by an advice, or withdrawn by a reversal).
  const open = mark !== null && mark.withdrawn !== true && hasOpenHold(swipe);
  // Applying it moves a DEBIT card's wallet money: in a transaction group its account is taken in
  // the group's ordered turn with the other members' (inGroupLockOrder), not later by the ledger
  // when this member gets there, which deadlocked with other processes' groups (found by a
  // two-server load run); the ledger then takes the row as locked.
  if (open && card.card_type === 'DEBIT') {
    const account = await inGroupLockOrder(tx, walletAccountId(card.client_id, card.wallet_id, program.currency), () =>
      lockWalletAccount(tx, card.client_id, card.wallet_id, program.currency),
    );
    if (account) run.locked.account = account;
  } else passLockTurn(tx);
  const verdict: ClientVerdict = !open
    ? { kind: 'STAND_IN', reason: 'LIFECYCLE_CLOSED', detail: 'the lifecycle was closed (reversed, completed or expired), decided by an advice, or the request reversed before the answer was applied' }
    : exchange === null
      ? { kind: 'STAND_IN', ...(notSent ?? { reason: 'NO_ENDPOINT', detail: `no active subscription lists ${pending.event.type}` }) }
      : inCardCurrencyOf(readClientAnswer(exchange, info.transactionMinor), info);
  const record: CoopDecisionRecord = {
    eventId: pending.event.id,
    subscriptionId: pending.endpoint?.subscriptionId ?? null,
    latencyMs: exchange?.latencyMs ?? null,
    httpStatus: exchange?.httpStatus ?? null,
    standInReason: verdict.kind === 'STAND_IN' ? verdict.reason : null,
    detail: verdict.kind === 'STAND_IN' ? verdict.detail : null,
    clientResponseCode: verdict.kind === 'STAND_IN' ? null : verdict.responseCode,
    message: verdict.kind === 'STAND_IN' ? null : verdict.message,
    metadata: verdict.kind === 'STAND_IN' ? null : verdict.metadata,
  };
  const decision: Decision = open ? decisionOfVerdict(run, verdict, pending.settings, record) : { ...declineWithCode('91'), source: 'STAND_IN', coop: record };
  // Sent with the message's other writes; as applied (a partial approval that came to the whole in
  // the card's currency is APPROVED), in the client's figures.
  logDelivery(run, pending, exchange, attemptedAt, verdict.kind !== 'STAND_IN', verdictText(verdict, decision.responseCode));
  // A withdrawn request's mark goes with its answer.
  const answered = mark !== null && !open ? updateSwipe(run, swipe, { coopPending: null }) : swipe;
  const outcome = open ? await applyCoopDecision(run, swipe, pending, decision, toBigInt(mark.reservedMinor)) : await writeChild(run, answered, pending.childId, closedDraft(pending, decision, answered));
  return { outcome, verdict, written: run.written };
}

/** Adds the decision request's delivery (sent, and answered or failed) to the run's writes; false when nothing was sent. */
function logDelivery(run: Run, pending: PendingCoopDecision, exchange: ClientExchange | null, attemptedAt: Date, accepted: boolean, verdict: string): boolean {
  if (exchange === null || pending.endpoint === null) return false;
  addDecisionDelivery(run.write, {
    clientId: run.context.clientId,
    subscriptionId: pending.endpoint.subscriptionId,
    event: pending.event,
    attemptedAt,
    now: run.context.now,
    outcome: exchange,
    accepted,
    verdict,
  });
  return true;
}

function closedDraft(pending: PendingCoopDecision, decision: Decision, swipe: CardSwipeRow): ChildDraft {
  return { type: pending.step === 'FINANCIAL' ? 'PURCHASE' : 'PRE_AUTHORIZATION', status: 'FAILED', decision, amountMinor: 0n, heldMinor: toBigInt(swipe.held_minor) };
}

/**
 * Applies the answer within what is still reserved for it: the reservation as the lifecycle's mark
 * says (a reversal may have released part of it while the client decided), never more than is
 * held (a partial reversal of the lifecycle's first message lowers the hold itself). The money and
 * the record follow what is reserved; the network's answer says what the client answered. Until
 * 2026-12-03 the reservation phase 1 made was taken: a partial reversal while the client decided
 * was undone by an approval (a 0200 posted in full), and a decline asked to release more than was
 * held, which failed the message with a 409 (found by an audit).
 */
async function applyCoopDecision(run: Run, swipe: CardSwipeRow & { hold_id: string }, pending: PendingCoopDecision, decision: Decision, markReservedMinor: bigint): Promise<CardMessageOutcome> {
  const { tx } = run;
  const funding = fundingOf(run);
  const held = toBigInt(swipe.held_minor);
  const reserved = markReservedMinor < held ? markReservedMinor : held;
  const history = historyOf(run.context, swipe.id, pending.childId, funding.historyTypes.hold);
  const approved = isApproval(decision.responseCode);
  const partialExtras = decision.responseCode === '10' ? partialApprovalFields(run.info, decision) : {};
  const approvedMinor = !approved ? 0n : decision.approvedMinor < reserved ? decision.approvedMinor : reserved;
  if (pending.step === 'FINANCIAL') {
    if (approved) await funding.captureHold(tx, swipe.hold_id, approvedMinor, historyOf(run.context, swipe.id, pending.childId, funding.historyTypes.capture));
    else await funding.releaseHold(tx, swipe.hold_id, undefined, history);
    const updated = updateSwipe(run, swipe, { status: approved ? 'COMPLETED' : 'FAILED', heldMinor: 0n, postedMinor: approvedMinor, expiresAt: null, coopPending: null });
    await cancelExpiry(run, updated);
    return writeChild(run, updated, pending.childId, { type: 'PURCHASE', status: approved ? 'COMPLETED' : 'FAILED', decision, amountMinor: approvedMinor, heldMinor: 0n, responseExtras: partialExtras });
  }
  // AUTHORIZATION or INCREMENT: the hold keeps what was approved of the reservation.
  if (reserved > approvedMinor) await funding.releaseHold(tx, swipe.hold_id, reserved - approvedMinor, history);
  const newHeld = held - reserved + approvedMinor;
  const closed = newHeld === 0n;
  // An approved increment moves the expiry, as one approved without the client does (the date
  // its arrival set; a mark written before 2026-12-03 moved it with the reservation already).
  const movedTo = approvedMinor > 0n && swipe.coop_pending?.expiresAt !== undefined ? new Date(swipe.coop_pending.expiresAt) : undefined;
  const expiresAt = movedTo ?? swipe.expires_at;
  const updated = updateSwipe(run, swipe, closed ? { status: 'FAILED', heldMinor: 0n, expiresAt: null, coopPending: null } : { heldMinor: newHeld, coopPending: null, ...(movedTo ? { expiresAt: movedTo } : {}) });
  if (closed) await cancelExpiry(run, updated);
  else if (movedTo) await scheduleExpiry(run, swipe.id, movedTo);
  return writeChild(run, updated, pending.childId, {
    type: 'PRE_AUTHORIZATION',
    status: approved ? 'PENDING' : 'FAILED',
    decision,
    amountMinor: approvedMinor,
    heldMinor: newHeld,
    expiresAt: approved ? expiresAt : null,
    responseExtras: partialExtras,
  });
}

/** COOP_AUTH_0120/0220/0420 (call for a COOP_AUTH card): the advices its client hears of, as ordinary events (at least once, retried); null for other messages. */
async function coopAdviceEvent(run: Run, swipe: CardSwipeRow, childId: string, draft: ChildDraft, authCode: string | null): Promise<EventToRecord | null> {
  const type = coopAuthEventTypeOf(run.message.isoMti);
  if (type !== 'COOP_AUTH_0120' && type !== 'COOP_AUTH_0220' && type !== 'COOP_AUTH_0420') return null;
  const responseCode = draft.decision.responseCode;
  // What was held (an advice of a purchase: the hold it left, which AVAILABLE may have kept below
  // the advised amount), posted or reversed. Until 2026-12-05 an advice's event gave the advised
  // amount (found by an audit).
  const heldByAdvice = type === 'COOP_AUTH_0120' && transactionTypeOf(run.info) !== '20';
  const approvedMinor = !isApproval(responseCode) ? 0n : heldByAdvice ? draft.heldMinor : draft.amountMinor;
  const data = coopEventData({
    message: run.message,
    info: run.info,
    cardId: run.card.id,
    cardReferenceId: run.card.reference_number,
    cardTransactionId: childId,
    parentCardTransactionId: swipe.id,
    availableMinor: null,
    original: await adviceOriginal(run, swipe, draft),
    answer: { responseCode, authCode, approvedAmountMinor: approvedMinor },
  });
  return { context: run.context, type, data };
}

/**
 * An advice's `original` (contract §12.4: from DE90 and the record it matched): the record a
 * reversal undid; else the lifecycle's message DE90 names (its first, or another of its records
 * with DE90's STAN, DE7 and MTI class), or DE90's own MTI and STAN when the lifecycle has no such
 * record; without DE90, the lifecycle's first message. None for a message that opened its own
 * lifecycle without DE90 (a force post, an unmatched reversal or advice). Until 2026-12-05 it was
 * always the lifecycle's first message, the message itself when it opened the lifecycle (found by
 * an audit).
 */
async function adviceOriginal(run: Run, swipe: CardSwipeRow, draft: ChildDraft): Promise<{ mti: string; stan: string; rrn?: string } | null> {
  const { tx, context, info } = run;
  if (draft.reversesId !== undefined) {
    const named = await recordById(tx, context.clientId, draft.reversesId);
    return { mti: named.mti, stan: named.stan, rrn: named.rrn };
  }
  const first = { mti: swipe.first_mti, stan: swipe.stan, rrn: swipe.rrn };
  const opened = swipe.rrn === info.rrn && isFirstOf(swipe, { mti: info.receivedMti, stan: info.stan, transmission_date_time: info.transmissionDateTime, acquirer_id: info.acquirerId });
  const de90 = info.original;
  const de90Field = run.message.fields['90'];
  if (de90 === null || de90Field === undefined) return opened ? null : first;
  const mtis = sendingsOf(firstSendingOf(de90.mti));
  if (!opened && mtis.length > 0) {
    if (de90Names(de90Field, { mti: swipe.first_mti, stan: swipe.stan, transmission_date_time: swipe.transmission_date_time, acquirer_id: swipe.acquirer_id })) return first;
    const named = await recordsOfLifecycle(tx, context.clientId, swipe)
      .select(['mti', 'stan', 'rrn'])
      .where('stan', '=', de90.stan)
      .where('transmission_date_time', '=', de90.transmissionDateTime)
      .where('mti', 'in', mtis)
      .where('repeat_of', 'is', null)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (named) return named;
  }
  return { mti: de90.mti, stan: de90.stan };
}

/** STANDARD programs partially approve whenever the terminal can; COOP_AUTH programs per their setting. */
function partialApprovalEnabled(program: CardProgramRow): boolean {
  return program.coop_auth?.partialApprovalEnabled ?? true;
}

/**
 * DE4, DE6 and DE54 of a partial approval: the approved amount in the transaction currency (the
 * client's own figure for a cooperative approval, else the approved card amount at the message's
 * rate), the approved cardholder billing amount when the request carried DE6, and the original
 * amount as amount type 57. Until 2026-12-04 DE6 kept the requested amount (found by an audit).
 */
function partialApprovalFields(info: MessageInfo, decision: Decision): Record<string, string> {
  const approvedMinor = decision.approvedMinor;
  // Back into the transaction currency at the message's rate.
  const approvedTransactionMinor = decision.approvedTransactionMinor ?? atRate(approvedMinor, info.amountMinor, info.transactionMinor);
  return {
    '4': approvedTransactionMinor.toString().padStart(12, '0'),
    ...(info.billingMinor === null ? {} : { '6': approvedMinor.toString().padStart(12, '0') }),
    '54': formatAdditionalAmounts([{ accountType: '00', amountType: originalAmountType, currencyNumeric: info.transactionCurrencyNumeric, amountMinor: info.transactionMinor }]),
  };
}

function holdExpiresAt(run: Run, mcc: string | null): Date {
  const settings = run.program.hold_expiry;
  const days = mcc !== null && mccIn(settings.extendedMccs, mcc) ? settings.extendedDays : settings.defaultDays;
  return new Date(run.context.now.getTime() + days * dayMs);
}

/** How far a completion may exceed the hold before it is flagged overCapture (program settings, by MCC). */
export function toleratedExcessMinor(program: CardProgramRow, mcc: string | null, heldMinor: bigint): bigint {
  const rule = mcc === null ? undefined : program.over_capture.byMcc.find((candidate) => mccIn(candidate.mccs, mcc));
  const pct = rule?.pct ?? program.over_capture.defaultPct;
  const tolerated = (heldMinor * BigInt(pct)) / 100n;
  const cap = rule?.maxAmountMinor;
  return cap !== undefined && tolerated > BigInt(cap) ? BigInt(cap) : tolerated;
}

/** Queues the hold's expiry timer (created, or moved to `expiresAt`), sent with the record. */
async function scheduleExpiry(run: Run, swipeId: string, expiresAt: Date): Promise<void> {
  await scheduleTimer(run.tx, { clientId: run.context.clientId, kind: holdExpiryTimerKind, subjectId: swipeId, dueAt: expiresAt, now: run.context.now }, run.write);
}

/**
 * Queues the removal of the lifecycle's expiry timer (it holds nothing any more), sent with the
 * record; kept while a refund authorization on it is still announced, whose expiry it also is.
 */
async function cancelExpiry(writer: Writer, swipe: CardSwipeRow): Promise<void> {
  if (toBigInt(swipe.refund_authorized_minor) > 0n) return;
  await cancelTimer(writer.tx, writer.context.clientId, holdExpiryTimerKind, swipe.id, writer.write);
}

// ---- correlation ------------------------------------------------------------------------------

async function lockSwipe(tx: Tx, clientId: string, id: string): Promise<CardSwipeRow | undefined> {
  return (await lockSwipeStatements.wait(clientId, id).execute(tx)).rows[0];
}

/**
 * The lifecycle a message belongs to (contract §12.3), locked, in this order: networkDataRef (DE63
 * positions 9–24); else DE90 (original MTI + STAN + DE7 + acquirer); else, when `byRrn`, the card
 * + RRN + amount of a lifecycle whose hold is still open. Usually read with the other lookups
 * already (processor-reads.ts).
 */
async function correlate(run: Run, options: { byRrn: boolean }): Promise<CardSwipeRow | undefined> {
  if (run.correlated !== undefined && run.correlated.byRrn === options.byRrn) return run.correlated.swipe;
  return onLifecycle(run, (await lookUpMessage(run.tx, run.context, run.card, run.info, { correlate: options })).correlated);
}

/**
 * `swipe`, the lifecycle the message acts on, with the run dated after its last change
 * (datedAfter). The message's moment was read when it arrived, before it waited for its card's
 * lock; one that waited while another process's message changed the lifecycle would otherwise
 * write its record, postings and events (and the ids made from its moment) before that one's, and
 * the lifecycle's latest record (what GET answers for it) would not be its last.
 */
function onLifecycle<S extends CardSwipeRow | undefined>(run: Run, swipe: S): S {
  if (swipe !== undefined) run.context = datedAfter(run.context, swipe.updated_at);
  return swipe;
}

/** The lifecycle's expiry has come by the client's clock (its timer may not have run yet). */
function isDue(swipe: CardSwipeRow, now: Date): boolean {
  return swipe.expires_at !== null && swipe.expires_at <= now;
}

function hasOpenHold(swipe: CardSwipeRow | undefined): swipe is CardSwipeRow & { hold_id: string } {
  return swipe !== undefined && swipe.status === 'PENDING' && swipe.hold_id !== null && toBigInt(swipe.held_minor) > 0n;
}

/**
 * A message that opens a lifecycle of its own (a 0200 purchase, a balance inquiry) under the
 * networkDataRef of a lifecycle that exists already: declined 57 on that lifecycle, which stays as
 * it was, as an increment of a closed lifecycle is. A second lifecycle under one reference hid the
 * first from the messages that follow (correlation takes the newest): its completion became a
 * force post on the new one and its hold stayed open (found by an audit, 2026-12-02).
 */
async function declineUsedReference(run: Run, type: CardTransactionType): Promise<CardMessageOutcome | undefined> {
  if (run.info.networkDataRef === null) return undefined;
  const existing = await correlate(run, { byRrn: false });
  if (!existing) return undefined;
  return recordOnUnchanged(run, existing, {
    type,
    status: 'FAILED',
    // A duplicate transmission (the same STAN and RRN, other content) is told as such: 94.
    decision: decline(run.duplicate ? 'DUPLICATE_TRANSACTION' : 'TRANSACTION_NOT_PERMITTED'),
    amountMinor: 0n,
  });
}

// ---- 0100 -----------------------------------------------------------------------------------

async function authorize(run: Run): Promise<CardMessageStep> {
  const { info } = run;
  const transactionType = transactionTypeOf(info);
  if (transactionType === '30' || transactionType === '31') return balanceInquiry(run);
  if (info.networkDataRef !== null) {
    const existing = await correlate(run, { byRrn: false });
    if (hasOpenHold(existing) && existing.coop_pending === null && !isDue(existing, run.context.now)) return increment(run, existing);
    // An increment of a lifecycle that holds nothing any more (completed, reversed, expired, or
    // declined from the start): no hold to raise, and a new hold under a used reference would make
    // later messages ambiguous. Declined (57) on that lifecycle, which stays as it was. So is one
    // whose hold is due to expire (its timer runs within a second, or at the next clock advance):
    // until 2026-12-06 it was approved and kept the hold 7 more days (found by an audit).
    if (existing) return recordOnUnchanged(run, existing, { type: 'PRE_AUTHORIZATION', status: 'FAILED', decision: decline('TRANSACTION_NOT_PERMITTED'), amountMinor: 0n });
  }
  if (info.transactionMinor === 0n) return verifyAccount(run);

  const swipeId = idAt(run.context.now);
  const childId = idAt(run.context.now);
  const funding = fundingOf(run);
  let decision = await decide(run, funding);
  if (isApproval(decision.responseCode)) {
    const expiresAt = holdExpiresAt(run, info.mcc);
    try {
      // Sent with the lifecycle and the record (nothing below reads what the hold writes).
      const holdId = await funding.placeHold(run.tx, decision.approvedMinor, expiresAt, historyOf(run.context, swipeId, childId, funding.historyTypes.hold), run.write);
      const coopPending = decision.awaitingClient ? pendingMark(run, childId, 'AUTHORIZATION', decision.approvedMinor) : null;
      const swipe = insertSwipe(run, swipeId, { status: 'PENDING', heldMinor: decision.approvedMinor, postedMinor: 0n, holdId, expiresAt, coopPending });
      await scheduleExpiry(run, swipeId, expiresAt);
      if (coopPending) return requestDecision(run, swipe, coopPending, null);
      return writeChild(run, swipe, childId, {
        type: 'PRE_AUTHORIZATION',
        status: 'PENDING',
        decision,
        amountMinor: decision.approvedMinor,
        heldMinor: decision.approvedMinor,
        expiresAt,
        holdId,
        responseExtras: decision.responseCode === '10' ? partialApprovalFields(info, decision) : {},
      });
    } catch (error) {
      // Another card on the same wallet took the money between the check and the hold.
      if (!isInsufficientFunds(error)) throw error;
      decision = decline('INSUFFICIENT_FUNDS');
    }
  }
  const swipe = insertSwipe(run, swipeId, { status: 'FAILED', heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
  return writeChild(run, swipe, childId, { type: 'PRE_AUTHORIZATION', status: 'FAILED', decision, amountMinor: 0n, heldMinor: 0n });
}

/** An incremental authorization: a 0100 with the networkDataRef of a lifecycle whose hold is open. */
async function increment(run: Run, swipe: CardSwipeRow & { hold_id: string }): Promise<CardMessageStep> {
  const childId = idAt(run.context.now);
  const funding = fundingOf(run);
  const heldMinor = toBigInt(swipe.held_minor);
  let decision = await decide(run, funding);
  if (isApproval(decision.responseCode)) {
    const expiresAt = holdExpiresAt(run, run.info.mcc ?? swipe.mcc);
    try {
      await funding.increaseHold(run.tx, swipe.hold_id, decision.approvedMinor, expiresAt, historyOf(run.context, swipe.id, childId, funding.historyTypes.hold), run.write);
      const newHeld = heldMinor + decision.approvedMinor;
      if (decision.awaitingClient) {
        // The lifecycle's expiry moves when the client approves (applyCoopDecision), not for a
        // reservation: until 2026-12-03 an increment the client declined, or a reversal withdrew,
        // kept the hold a whole expiry period longer (found by an audit). The ledger's hold takes
        // the new date at once; the expiry timer and the lifecycle are what expire the hold.
        const coopPending = { ...pendingMark(run, childId, 'INCREMENT', decision.approvedMinor), expiresAt: expiresAt.toISOString() };
        const updated = updateSwipe(run, swipe, { heldMinor: newHeld, coopPending });
        return requestDecision(run, updated, coopPending, { mti: swipe.first_mti, stan: swipe.stan, rrn: swipe.rrn });
      }
      const updated = updateSwipe(run, swipe, { heldMinor: newHeld, expiresAt });
      await scheduleExpiry(run, swipe.id, expiresAt);
      return writeChild(run, updated, childId, {
        type: 'PRE_AUTHORIZATION',
        status: 'PENDING',
        decision,
        amountMinor: decision.approvedMinor,
        heldMinor: newHeld,
        expiresAt,
        responseExtras: decision.responseCode === '10' ? partialApprovalFields(run.info, decision) : {},
      });
    } catch (error) {
      if (!isInsufficientFunds(error)) throw error;
      decision = decline('INSUFFICIENT_FUNDS');
    }
  }
  // A declined increment leaves the lifecycle and its hold as they were.
  return writeChild(run, swipe, childId, { type: 'PRE_AUTHORIZATION', status: 'FAILED', decision, amountMinor: 0n, heldMinor });
}

/**
 * A message of a transaction type the processor does not handle (handledTransactionTypes): a
 * request (0100, 0200) is declined with 12 before any other check; an advice (0120, 0220) is
 * acknowledged with 00 and recorded CANCELLED. Nothing moves and nobody is asked. Recorded on the
 * lifecycle its networkDataRef or DE90 names (which stays as it was), else on a lifecycle of its own
 * (FAILED, or CANCELLED for an advice).
 */
async function declineTransactionType(run: Run): Promise<CardMessageOutcome> {
  const { mti } = run.info;
  const type: CardTransactionType = mti === '0200' ? 'PURCHASE' : mti === '0220' ? 'PRE_AUTH_COMPLETION' : 'PRE_AUTHORIZATION';
  // An advice (0120, 0220) cannot be declined: acknowledged, recorded CANCELLED, nothing moved (a
  // completion of an original credit is not a purchase to post).
  const advice = mti === '0120' || mti === '0220';
  const existing = run.info.networkDataRef !== null || run.info.original !== null ? await correlate(run, { byRrn: false }) : undefined;
  const status = advice ? ('CANCELLED' as const) : ('FAILED' as const);
  const decision = advice ? acknowledge() : decline('INVALID_TRANSACTION');
  const draft = { type, status, decision, amountMinor: 0n };
  if (existing) return recordOnUnchanged(run, existing, draft);
  const swipe = insertSwipe(run, idAt(run.context.now), { status, heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
  return writeChild(run, swipe, idAt(run.context.now), { ...draft, heldMinor: 0n });
}

/**
 * A refund authorization (0100, processing code 20; or its advice, 0120, decided by the network's
 * stand-in): the merchant announces money back to the card before the refund clears. Nothing moves
 * and nothing is held (a refund cannot overdraw or spend), the limits do not count it and a
 * cooperative client is not asked: an 0100 is approved unless the card is not usable (57, 54), a
 * sandbox magic amount declines, the amount is not above zero (13) or it is a duplicate
 * transmission (94); an advice is never declined. It is a transaction of its own (networks give it
 * its own identifier): it opens a lifecycle, PENDING with nothing held until the refund clears
 * (0220 or 0200, processing code 20: COMPLETED), a reversal cancels it or it expires after the
 * program's hold window (CANCELLED). One whose networkDataRef names a lifecycle that exists
 * already would make the messages that follow under it ambiguous: an 0100 is declined 57 there,
 * an advice acknowledged there with nothing announced (CANCELLED); that lifecycle stays as it was.
 */
async function authorizeRefund(run: Run): Promise<CardMessageOutcome> {
  const { info, context } = run;
  const advice = info.mti === '0120';
  const existing = info.networkDataRef === null ? undefined : await correlate(run, { byRrn: false });
  if (existing) {
    const decision = advice ? acknowledge() : decline('TRANSACTION_NOT_PERMITTED');
    return recordOnUnchanged(run, existing, { type: 'REFUND', operation: 'CREDIT', status: advice ? 'CANCELLED' : 'FAILED', decision, amountMinor: 0n });
  }
  const decision = advice ? acknowledge(info.amountMinor) : refundAuthorizationDecision(run);
  const approved = isApproval(decision.responseCode) && info.amountMinor > 0n;
  const draft = { type: 'REFUND' as const, operation: 'CREDIT' as const, decision, amountMinor: approved ? info.amountMinor : 0n, heldMinor: 0n };
  const swipeId = idAt(context.now);
  if (!approved) {
    // Declined, or an advice of nothing: nothing announced.
    const status = advice ? 'CANCELLED' : 'FAILED';
    const swipe = insertSwipe(run, swipeId, { status, heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
    return writeChild(run, swipe, idAt(context.now), { ...draft, status });
  }
  const expiresAt = holdExpiresAt(run, info.mcc);
  const swipe = insertSwipe(run, swipeId, { status: 'PENDING', heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt, refundAuthorizedMinor: info.amountMinor });
  await scheduleExpiry(run, swipeId, expiresAt);
  return writeChild(run, swipe, idAt(context.now), { ...draft, status: 'PENDING', expiresAt });
}

/** A refund authorization's checks, first failure wins: card status (57) → expiry (54) → sandbox magic amounts → amount (13) → duplicate (94). */
function refundAuthorizationDecision(run: Run): Decision {
  const failed = cardChecks(run);
  if (failed) return failed;
  const magic = magicResponseCodeOf(run.info);
  if (magic !== null && magic !== '10') return declineWithCode(magic);
  if (run.info.amountMinor <= 0n) return decline('INVALID_AMOUNT');
  if (run.duplicate) return decline('DUPLICATE_TRANSACTION');
  return approve(run.info.amountMinor);
}

/** A 0100 for zero: is the card good? No money. */
async function verifyAccount(run: Run): Promise<CardMessageOutcome> {
  const decision = cardChecks(run) ?? approve(0n);
  const status = isApproval(decision.responseCode) ? 'COMPLETED' : 'FAILED';
  const childId = idAt(run.context.now);
  const swipe = insertSwipe(run, idAt(run.context.now), { status, heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
  return writeChild(run, swipe, childId, { type: 'ACCOUNT_VERIFICATION', status, decision, amountMinor: 0n, heldMinor: 0n });
}

/** Processing code 30/31: the answer carries the available balance in DE54 (amount type 02). No money. */
async function balanceInquiry(run: Run): Promise<CardMessageOutcome> {
  const used = await declineUsedReference(run, 'BALANCE_INQUIRY');
  if (used) return used;
  const funding = fundingOf(run);
  const decision = cardChecks(run) ?? approve(0n);
  const approved = isApproval(decision.responseCode);
  const extras: Record<string, string> = {};
  if (approved) {
    const available = await funding.available(run.tx);
    extras['54'] = formatAdditionalAmounts([{ accountType: run.info.processingCode.slice(2, 4), amountType: '02', currencyNumeric: cardCurrencyNumeric, amountMinor: withinDe54(available) }]);
  }
  const status = approved ? 'COMPLETED' : 'FAILED';
  const childId = idAt(run.context.now);
  const swipe = insertSwipe(run, idAt(run.context.now), { status, heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
  return writeChild(run, swipe, childId, { type: 'BALANCE_INQUIRY', status, decision, amountMinor: 0n, heldMinor: 0n, responseExtras: extras });
}

/** DE54 says at most twelve digits: a balance beyond them (forced postings, refunds) is said as the most it can say, with its sign. */
const de54Max = 10n ** 12n - 1n;
function withinDe54(amountMinor: bigint): bigint {
  if (amountMinor > de54Max) return de54Max;
  return amountMinor < -de54Max ? -de54Max : amountMinor;
}

// ---- 0120 -----------------------------------------------------------------------------------

/**
 * An authorization advice: a decision already taken (stand-in, final fuel amount). Never declined:
 * the lifecycle's hold is set to the advised amount (placed again on a lifecycle that holds nothing
 * any more, which is then PENDING again). What AVAILABLE cannot cover is not reserved
 * (a hold never takes AVAILABLE below zero); the completion that follows is forced anyway.
 */
async function advise(run: Run): Promise<CardMessageOutcome> {
  const { info, tx } = run;
  const funding = fundingOf(run);
  const target = info.amountMinor;
  const existing = await correlate(run, { byRrn: true });
  // Read after the lifecycle: dated after its last change (onLifecycle).
  const { context } = run;
  const childId = idAt(context.now);
  const decision = acknowledge(target);
  const expiresAt = holdExpiresAt(run, info.mcc ?? existing?.mcc ?? null);
  if (hasOpenHold(existing)) {
    const held = toBigInt(existing.held_minor);
    let newHeld = held;
    const history = historyOf(run.context, existing.id, childId, funding.historyTypes.hold);
    if (target > held) {
      const available = await funding.available(tx);
      const reservable = target - held < available ? target - held : available;
      if (reservable > 0n) {
        await funding.increaseHold(tx, existing.hold_id, reservable, expiresAt, history);
        newHeld += reservable;
      }
    } else if (target < held) {
      await funding.releaseHold(tx, existing.hold_id, held - target, history);
      newHeld = target;
    }
    const closed = newHeld === 0n;
    // The advice is the network's decision on the lifecycle: a client's decision still in flight
    // (the network stood in while waiting for it) no longer applies, and is declined 91 when it arrives.
    // Closed: COMPLETED when something was posted on it before (an advice re-opened a completed
    // lifecycle; until 2026-12-02 it was CANCELLED with money posted, found by an audit).
    const updated = updateSwipe(
      run,
      existing,
      closed ? { heldMinor: 0n, status: closedStatus(toBigInt(existing.posted_minor)), expiresAt: null } : { heldMinor: newHeld, expiresAt, coopPending: withdrawnMark(existing.coop_pending) },
    );
    if (closed) await cancelExpiry(run, updated);
    else await scheduleExpiry(run, existing.id, expiresAt);
    return writeChild(run, updated, childId, { type: 'PRE_AUTHORIZATION', status: closed ? 'CANCELLED' : 'PENDING', decision, amountMinor: target, heldMinor: newHeld, expiresAt: closed ? null : expiresAt });
  }
  if (target === 0n) {
    // An advice of nothing: no hold to open. The lifecycle it names stays as it was (one open with
    // nothing held closes, as a completion of 0 closes it); none named, a CANCELLED one of its own.
    // Until 2026-12-02 it opened the lifecycle again (PENDING, nothing held; found by an audit).
    let swipe = existing ?? insertSwipe(run, idAt(context.now), { status: 'CANCELLED', heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
    if (waitsForNothing(swipe)) swipe = await closeWaiting(run, swipe);
    return writeChild(run, swipe, childId, { type: 'PRE_AUTHORIZATION', status: 'CANCELLED', decision, amountMinor: 0n, heldMinor: toBigInt(swipe.held_minor) });
  }
  // No open hold: the advised amount is held, on the lifecycle the advice names when it names one
  // that holds nothing any more (completed, reversed, expired, declined), which is open again: the
  // messages that follow under its reference (a completion, a reversal) find the hold there. A new
  // lifecycle under a used reference would make them ambiguous (as an increment's would).
  const swipeId = existing?.id ?? idAt(context.now);
  const available = await funding.available(tx);
  const reservable = target < available ? target : available > 0n ? available : 0n;
  const holdId = reservable > 0n ? await funding.placeHold(tx, reservable, expiresAt, historyOf(run.context, swipeId, childId, funding.historyTypes.hold)) : null;
  const swipe = existing
    ? updateSwipe(run, existing, { status: 'PENDING', heldMinor: reservable, holdId, expiresAt, expiredAt: null })
    : insertSwipe(run, swipeId, { status: 'PENDING', heldMinor: reservable, postedMinor: 0n, holdId, expiresAt });
  await scheduleExpiry(run, swipeId, expiresAt);
  return writeChild(run, swipe, childId, { type: 'PRE_AUTHORIZATION', status: 'PENDING', decision, amountMinor: target, heldMinor: reservable, expiresAt, holdId });
}

// ---- 0200 -----------------------------------------------------------------------------------

async function financial(run: Run): Promise<CardMessageStep> {
  const transactionType = transactionTypeOf(run.info);
  if (transactionType === '30' || transactionType === '31') return balanceInquiry(run);
  const used = await declineUsedReference(run, 'PURCHASE');
  if (used) return used;
  const swipeId = idAt(run.context.now);
  const childId = idAt(run.context.now);
  const funding = fundingOf(run);
  let decision = await decide(run, funding);
  if (decision.awaitingClient) {
    // The client decides: the amount is held meanwhile, and captured (or released) by its answer.
    const expiresAt = holdExpiresAt(run, run.info.mcc);
    try {
      const holdId = await funding.placeHold(run.tx, decision.approvedMinor, expiresAt, historyOf(run.context, swipeId, childId, funding.historyTypes.hold));
      const coopPending = pendingMark(run, childId, 'FINANCIAL', decision.approvedMinor);
      const swipe = insertSwipe(run, swipeId, { status: 'PENDING', heldMinor: decision.approvedMinor, postedMinor: 0n, holdId, expiresAt, coopPending });
      await scheduleExpiry(run, swipeId, expiresAt);
      return await requestDecision(run, swipe, coopPending, null);
    } catch (error) {
      if (!isInsufficientFunds(error)) throw error;
      decision = decline('INSUFFICIENT_FUNDS');
    }
  }
  if (isApproval(decision.responseCode)) {
    try {
      await funding.post(run.tx, decision.approvedMinor, { force: false }, historyOf(run.context, swipeId, childId, funding.historyTypes.capture));
      const swipe = insertSwipe(run, swipeId, { status: 'COMPLETED', heldMinor: 0n, postedMinor: decision.approvedMinor, holdId: null, expiresAt: null });
      return writeChild(run, swipe, childId, {
        type: 'PURCHASE',
        status: 'COMPLETED',
        decision,
        amountMinor: decision.approvedMinor,
        heldMinor: 0n,
        responseExtras: decision.responseCode === '10' ? partialApprovalFields(run.info, decision) : {},
      });
    } catch (error) {
      if (!isInsufficientFunds(error)) throw error;
      decision = decline('INSUFFICIENT_FUNDS');
    }
  }
  const swipe = insertSwipe(run, swipeId, { status: 'FAILED', heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
  return writeChild(run, swipe, childId, { type: 'PURCHASE', status: 'FAILED', decision, amountMinor: 0n, heldMinor: 0n });
}

/** Processing code 20 (0200 or 0220): money back to the card. Joins its lifecycle when DE63 or DE90 names one. */
async function refund(run: Run): Promise<CardMessageOutcome> {
  const { info, tx } = run;
  const funding = fundingOf(run);
  const existing = await correlate(run, { byRrn: false });
  // Read after the lifecycle: dated after its last change (onLifecycle).
  const { context } = run;
  const childId = idAt(context.now);
  if (info.mti === '0200' && run.duplicate) {
    // A single-message refund is a request: with the STAN and RRN of another message and other
    // content it is a duplicate transmission, declined 94 with nothing credited (until 2026-12-02
    // each such message credited its amount again; found by an audit), on the lifecycle it names,
    // which stays as it was, else on a lifecycle of its own (as a purchase is): a new lifecycle
    // under a used reference would hide the one it names. A 0220 refund is an advice, applied as it
    // comes ("Repeats and duplicates").
    const draft = { type: 'REFUND' as const, operation: 'CREDIT' as const, status: 'FAILED' as const, decision: decline('DUPLICATE_TRANSACTION'), amountMinor: 0n };
    if (existing) return recordOnUnchanged(run, existing, draft);
    const swipe = insertSwipe(run, idAt(context.now), { status: 'FAILED', heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
    return writeChild(run, swipe, childId, { ...draft, heldMinor: 0n });
  }
  const swipeId = existing?.id ?? idAt(context.now);
  if (info.amountMinor > 0n) await funding.refund(tx, info.amountMinor, historyOf(run.context, swipeId, childId, funding.historyTypes.refund));
  const decision = { ...approve(info.amountMinor), source: info.mti === '0220' ? ('NETWORK' as const) : ('SYSTEM' as const) };
  // The refund clears what a refund authorization announced on the lifecycle (all of it, as a
  // completion closes its hold). The lifecycle is COMPLETED (something is posted) unless it stays
  // open: PENDING with a hold or a decision in flight, or with no refund authorization to settle.
  const announced = existing !== undefined && toBigInt(existing.refund_authorized_minor) > 0n;
  const staysOpen = existing?.status === 'PENDING' && (hasOpenHold(existing) || existing.coop_pending !== null || !announced);
  const closed = refundClosedStatus(info.amountMinor, existing);
  const swipe = existing
    ? updateSwipe(run, existing, {
        postedMinor: toBigInt(existing.posted_minor) - info.amountMinor,
        ...(announced ? { refundAuthorizedMinor: 0n } : {}),
        ...(staysOpen ? {} : { status: closed, expiresAt: null }),
      })
    : insertSwipe(run, swipeId, { status: closed, heldMinor: 0n, postedMinor: -info.amountMinor, holdId: null, expiresAt: null });
  // Its expiry timer goes with what it waited for (a lifecycle open until now, a refund authorization).
  if (existing && !staysOpen && (existing.status === 'PENDING' || announced)) await cancelExpiry(run, swipe);
  return writeChild(run, swipe, childId, { type: 'REFUND', operation: 'CREDIT', status: 'COMPLETED', decision, amountMinor: info.amountMinor, heldMinor: toBigInt(swipe.held_minor) });
}

// ---- 0220 -----------------------------------------------------------------------------------

/**
 * A completion (financial advice). Never declined. With an open hold: the hold is captured for
 * the final amount and closed; above the hold the excess is taken from AVAILABLE, forced when
 * AVAILABLE is short, and flagged overCapture beyond the program's tolerance. Without one (no
 * authorization, or the hold expired): a force post.
 */
async function completeOrForcePost(run: Run): Promise<CardMessageOutcome> {
  const { info, tx } = run;
  const funding = fundingOf(run);
  const existing = await correlate(run, { byRrn: true });
  // Read after the lifecycle: dated after its last change (onLifecycle).
  const { context } = run;
  const childId = idAt(context.now);
  const amount = info.amountMinor;
  const decision = acknowledge(amount);
  const history = (swipeId: string) => historyOf(run.context, swipeId, childId, funding.historyTypes.capture);
  if (hasOpenHold(existing)) {
    const held = toBigInt(existing.held_minor);
    // Sent with the lifecycle and the record (nothing below reads what the ledger writes).
    if (amount > 0n) await funding.captureHold(tx, existing.hold_id, amount, history(existing.id), run.write);
    else await funding.releaseHold(tx, existing.hold_id, undefined, history(existing.id), false, run.write);
    const overCapture = amount - held > toleratedExcessMinor(run.program, existing.mcc ?? info.mcc, held);
    const posted = toBigInt(existing.posted_minor) + amount;
    const updated = updateSwipe(run, existing, { status: closedStatus(posted), heldMinor: 0n, postedMinor: posted, expiresAt: null });
    await cancelExpiry(run, updated);
    return writeChild(run, updated, childId, { type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', decision, amountMinor: amount, heldMinor: 0n, overCapture, holdId: existing.hold_id });
  }
  const swipeId = existing?.id ?? idAt(context.now);
  // The advice of a 0200 purchase approved already, sent under its identifiers (the network's
  // stand-in answered it too: the issuer's answer came late): one transaction, posted once. Only
  // what the stand-in approved beyond the purchase is posted (the network settles its own answer).
  // Until 2026-12-03 the whole amount was posted again (found by an audit).
  const approvedAlready = existing === undefined ? 0n : await purchaseApprovedUnder(run, existing);
  const postedNow = amount > approvedAlready ? amount - approvedAlready : 0n;
  if (postedNow > 0n) await funding.post(tx, postedNow, { force: true }, history(swipeId));
  // What has been posted decides the lifecycle's state, as when a hold is captured: COMPLETED once
  // something is; a completion of 0 posts nothing, so a lifecycle still open (an advice that could
  // reserve nothing) closes CANCELLED, one already closed (expired: CANCELLED) stays as it was, and
  // one this message opens is CANCELLED.
  const posted = toBigInt(existing?.posted_minor ?? '0') + postedNow;
  const status = posted !== 0n || existing === undefined || existing.status === 'PENDING' ? closedStatus(posted) : existing.status;
  if (existing?.status === 'PENDING') await cancelExpiry(run, existing);
  const swipe = existing
    ? updateSwipe(run, existing, { status, postedMinor: posted })
    : insertSwipe(run, swipeId, { status, heldMinor: 0n, postedMinor: amount, holdId: null, expiresAt: null });
  return writeChild(run, swipe, childId, { type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', decision, amountMinor: postedNow, heldMinor: 0n, forcePost: postedNow > 0n });
}

/**
 * What the lifecycle's first message, an approved 0200 purchase, and the advices sent under its
 * identifiers posted together, when the advice is sent under them (STAN, RRN, DE7, acquirer); 0
 * otherwise. A 0200 purchase is only ever a lifecycle's first message (one under a used reference
 * is declined 57), so the lifecycle's own identifiers decide before anything is read.
 */
async function purchaseApprovedUnder(run: Run, swipe: CardSwipeRow): Promise<bigint> {
  const { info } = run;
  if (info.rrn !== swipe.rrn || !sentUnderFirstOf(swipe, { stan: info.stan, transmission_date_time: info.transmissionDateTime, acquirer_id: info.acquirerId })) return 0n;
  return (await purchasePostedUnderFirst(run.tx, run.context.clientId, swipe))?.postedMinor ?? 0n;
}

// ---- 0420 -----------------------------------------------------------------------------------

/**
 * The status a refund of `amountMinor` closes `existing` with (or the lifecycle it opens). A refund
 * of 0 credits nothing: a closed lifecycle keeps its status, one that only waited for it closes as
 * what it posted says, and one it opens is CANCELLED (as a completion of 0's). Until 2026-12-03 it
 * made a cancelled or declined lifecycle COMPLETED with nothing posted (found by an audit).
 */
function refundClosedStatus(amountMinor: bigint, existing: CardSwipeRow | undefined): CardTransactionStatus {
  if (amountMinor > 0n) return 'COMPLETED';
  if (existing === undefined) return 'CANCELLED';
  return existing.status === 'PENDING' ? closedStatus(toBigInt(existing.posted_minor)) : existing.status;
}

/**
 * What a reversal takes off `total` (what is held, posted or announced): all of it without DE95
 * or with DE95's actual amount zero; with an actual amount below `total`, all but it (a partial
 * reversal: the actual amount is what stays); with an actual amount not below `total`, nothing
 * (it keeps everything: a reversal never adds).
 */
function reversedPart(info: Pick<MessageInfo, 'replacementActualMinor'>, total: bigint): bigint {
  const actual = info.replacementActualMinor ?? 0n;
  if (actual === 0n) return total;
  return actual < total ? total - actual : 0n;
}

/**
 * What of a lifecycle's hold its answered messages hold: all of it but what a cooperative increment
 * still waiting for the client's answer reserved. That reservation is the waiting request's alone:
 * only a reversal naming it, the answer, or the lifecycle's end (a full reversal, a completion, an
 * advice, the expiry) touches it.
 */
export function decidedHeld(swipe: Pick<CardSwipeRow, 'held_minor' | 'coop_pending'>): bigint {
  const held = toBigInt(swipe.held_minor);
  const mark = swipe.coop_pending;
  if (mark?.step !== 'INCREMENT' || mark.withdrawn === true) return held;
  const reserved = toBigInt(mark.reservedMinor);
  return reserved < held ? held - reserved : 0n;
}

/**
 * What a reversal of the lifecycle's hold (not of an increment) releases: all of it without DE95
 * (or with an actual amount of zero), else all but DE95's actual amount of what the answered
 * messages hold (decidedHeld). Until 2026-12-03 DE95 was taken against the whole hold, a waiting
 * increment's reservation included: the reservation shrank, and a decline then released the first
 * authorization too (found by an audit).
 */
function heldReversed(info: MessageInfo, swipe: CardSwipeRow): bigint {
  if ((info.replacementActualMinor ?? 0n) === 0n) return toBigInt(swipe.held_minor);
  return reversedPart(info, decidedHeld(swipe));
}

/**
 * A reversal (advice, or 0400 request): always answered "00". What it reverses, in this order:
 * - a refund, a refund authorization or a posting its DE90 names on the lifecycle (or, without
 *   DE90, the refund or purchase that opened a lifecycle with a 0200): the refund is taken back,
 *   the authorization cancelled, the posting credited back, whatever else the lifecycle holds (a
 *   lifecycle's first message named while it is open undoes the hold instead);
 * - the open hold: full without DE95 (or when DE95's actual amount is zero), the hold released and
 *   the lifecycle CANCELLED; partial with DE95 below the hold, the hold reduced to the actual
 *   amount and still open; DE95 not below the hold keeps it all (recorded, nothing released);
 * - a refund authorization still announced on the lifecycle (without DE90);
 * - a lifecycle open with nothing held (waitsForNothing), reversed in full: closed.
 * A reversal that matches no lifecycle is recorded as an orphan: acknowledged, no money.
 */
async function reverse(run: Run): Promise<CardMessageOutcome> {
  const { info } = run;
  const existing = await correlate(run, { byRrn: true });
  // Read after the lifecycle: dated after its last change (onLifecycle).
  const { context } = run;
  const childId = idAt(context.now);
  const named = existing ? await messageNamed(run.tx, run.context.clientId, run.info, existing) : undefined;
  if (existing && named?.kind === 'NOTHING') {
    // DE90 names a message that was declined, or none the lifecycle has: nothing to undo; the lifecycle stays as it was.
    return recordOnUnchanged(run, existing, { type: 'REVERSAL_ADVICE', operation: operationOfNothing(info), status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n });
  }
  if (existing && named?.kind === 'REFUND') return reverseRefund(run, existing, childId, named.refundId, named.remainingMinor);
  if (existing && named?.kind === 'POSTING') return reversePosting(run, existing, childId, named.postingId, named.remainingMinor);
  if (existing && named?.kind === 'REFUND_AUTHORIZATION') return reverseRefundAuthorization(run, existing, childId);
  if (existing && named?.kind === 'INCREMENT_IN_FLIGHT') return reverseIncrementInFlight(run, existing, childId, named);
  if (existing && named?.kind === 'INCREMENT') {
    // Only what that increment added, and what of it no reversal released yet: the rest of the hold stays.
    if (!hasOpenHold(existing)) return writeChild(run, existing, childId, { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n, heldMinor: 0n });
    const decided = decidedHeld(existing);
    const released = reversedPart(info, named.remainingMinor);
    return releaseHeld(run, existing, childId, released < decided ? released : decided, named.incrementId);
  }
  // One that reverses a refund it does not name leaves the purchase's hold alone (it released the
  // hold until 2026-12-02; found by an audit).
  if (hasOpenHold(existing) && !reversesUnnamedRefund(info)) return releaseHeld(run, existing, childId, heldReversed(info, existing));
  // Without DE90, a refund authorization is reversed by a reversal of processing code 20 only (one
  // of another code reverses a purchase: until 2026-12-03 it withdrew the announced refund; found by an audit).
  if (existing && reversesUnnamedRefund(info) && toBigInt(existing.refund_authorized_minor) > 0n) return reverseRefundAuthorization(run, existing, childId);
  if (existing && waitsForNothing(existing) && (info.replacementActualMinor ?? 0n) === 0n) {
    // Open with nothing held (an advice that could reserve nothing): a full reversal closes it, as
    // it would have closed its hold. Until 2026-12-02 it stayed PENDING, and its expiry later
    // cancelled it a second time (found by an audit).
    const updated = await closeWaiting(run, existing);
    return writeChild(run, updated, childId, { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n, heldMinor: 0n });
  }
  const operation = operationOfNothing(info);
  if (existing) {
    // Nothing left to undo (an authorization completed, reversed or expired already; a refund reversed already): recorded, no money.
    return writeChild(run, existing, childId, { type: 'REVERSAL_ADVICE', operation, status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n, heldMinor: 0n });
  }
  const swipe = insertSwipe(run, idAt(context.now), { status: 'CANCELLED', heldMinor: 0n, postedMinor: 0n, holdId: null, expiresAt: null });
  return writeChild(run, swipe, childId, { type: 'REVERSAL_ADVICE', operation, status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n, heldMinor: 0n, orphan: true });
}

/**
 * The operation of a reversal's record when it names nothing that could move money (a declined
 * message, a message the lifecycle does not have, or no lifecycle): the debit (processing code 20:
 * a refund's reversal) or credit (any other) it would have been. One that names a posting, a hold
 * or an increment is a CREDIT, one that names a refund a DEBIT, whatever it moves. Until 2026-12-03
 * always a credit (found by an audit).
 */
function operationOfNothing(info: MessageInfo): 'DEBIT' | 'CREDIT' {
  return transactionTypeOf(info) === '20' ? 'DEBIT' : 'CREDIT';
}

/**
 * Releases `released` of the lifecycle's open hold: nothing (recorded, the hold as it was), a part
 * (the hold still open), or all of it (the lifecycle closes: CANCELLED, or COMPLETED when
 * something is posted). `reversesId`: the increment the reversal named, when it named one and
 * released something of it.
 */
async function releaseHeld(run: Run, existing: CardSwipeRow & { hold_id: string }, childId: string, released: bigint, reversesId?: string): Promise<CardMessageOutcome> {
  const funding = fundingOf(run);
  const held = toBigInt(existing.held_minor);
  const history = historyOf(run.context, existing.id, childId, funding.historyTypes.hold);
  const named = reversesId === undefined ? {} : { reversesId };
  if (released === 0n) {
    // Nothing released: the record names nothing (as one of a posting or refund with nothing left; until 2026-12-03 it named the increment, found by an audit).
    return writeChild(run, existing, childId, { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'PENDING', decision: acknowledge(), amountMinor: 0n, heldMinor: held });
  }
  if (released < held) {
    await funding.releaseHold(run.tx, existing.hold_id, released, history, false, run.write);
    const updated = updateSwipe(run, existing, { heldMinor: held - released });
    return writeChild(run, updated, childId, { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'PENDING', decision: acknowledge(), amountMinor: released, heldMinor: held - released, ...named });
  }
  await funding.releaseHold(run.tx, existing.hold_id, undefined, history, false, run.write);
  const updated = updateSwipe(run, existing, { status: closedStatus(toBigInt(existing.posted_minor)), heldMinor: 0n, expiresAt: null });
  await cancelExpiry(run, updated);
  return writeChild(run, updated, childId, { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'CANCELLED', decision: acknowledge(), amountMinor: held, heldMinor: 0n, ...named });
}

/**
 * A reversal naming a cooperative increment still waiting for the client's answer: what it
 * reserved is released, all of it or all but DE95's actual amount (never more than is held), and
 * the reservation shrinks by as much; released in full, the request is withdrawn: the late answer
 * then applies nothing (declined 91 by the stand-in, LIFECYCLE_CLOSED) and the earlier hold stays.
 * The answer to a request reversed in part applies within what is still reserved. Until 2026-12-03
 * the reversal found no record of the increment (it is written with the answer) and undid nothing,
 * and the approval that followed held the increment after the network had reversed it (found while
 * testing the case; the partial case by the audit of the first fix).
 */
async function reverseIncrementInFlight(run: Run, existing: CardSwipeRow, childId: string, named: { mark: CoopPendingMark }): Promise<CardMessageOutcome> {
  if (!hasOpenHold(existing)) return writeChild(run, existing, childId, { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n, heldMinor: 0n });
  const held = toBigInt(existing.held_minor);
  const reserved = toBigInt(named.mark.reservedMinor);
  const reversed = reversedPart(run.info, reserved);
  const released = reversed < held ? reversed : held;
  if (released === 0n) return releaseHeld(run, existing, childId, 0n);
  const left = reserved - released;
  const mark = left > 0n ? { ...named.mark, reservedMinor: left.toString() } : withdrawnMark(named.mark);
  // The mark goes with the lifecycle's change (releaseHeld writes the row it is given, changed).
  // The reversal names no record: the increment's is written with the answer, for what is still
  // reserved then, and what reversals took of it before is not part of it.
  return releaseHeld(run, { ...existing, coop_pending: mark }, childId, released);
}

/**
 * A refund reversed after it was credited: the money leaves the wallet again (what is left of it,
 * or all but DE95's actual amount), forced like any advice: a reversal cannot be declined (a credit
 * card's line takes it back as credit-funding.ts says). Nothing left (reversed already): recorded,
 * no money.
 */
async function reverseRefund(run: Run, existing: CardSwipeRow, childId: string, refundId: string, remainingMinor: bigint): Promise<CardMessageOutcome> {
  if (remainingMinor === 0n) {
    return recordOnUnchanged(run, existing, { type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n });
  }
  const funding = fundingOf(run);
  const debited = reversedPart(run.info, remainingMinor);
  if (debited > 0n) await funding.takeBackRefund(run.tx, debited, historyOf(run.context, existing.id, childId, funding.historyTypes.capture));
  const posted = toBigInt(existing.posted_minor) + debited;
  const settled = closedStatus(posted);
  // A lifecycle still open (a hold, a refund announced) stays PENDING.
  const updated = updateSwipe(run, existing, { status: existing.status === 'PENDING' ? 'PENDING' : settled, postedMinor: posted });
  return writeChild(run, updated, childId, { type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: settled, decision: acknowledge(), amountMinor: debited, heldMinor: toBigInt(existing.held_minor), reversesId: refundId });
}

/**
 * A posting reversed (named by DE90: a 0200 purchase, a 0220 completion or force post, a declined
 * 0200 that the network's stand-in posted; without DE90, the 0200 that opened the lifecycle):
 * `remainingMinor`, what of that posting no reversal credited back yet, is credited back, all of
 * it or all but DE95's actual amount, and the record keeps which posting it reversed (reverses_id).
 * Only that posting: the lifecycle's other clearings and its refunds stand, and a hold still open
 * stays. Until 2026-12-02 the lifecycle's net posted amount was taken for the named posting's:
 * reversing one of two clearings credited both back, and a refund on the lifecycle made a partial
 * reversal of its purchase credit nothing (found by audits, which also found two versions of this
 * rule that worked the reversals out from their DE90 crediting postings twice or too little).
 */
async function reversePosting(run: Run, existing: CardSwipeRow, childId: string, postingId: string, remainingMinor: bigint): Promise<CardMessageOutcome> {
  if (remainingMinor === 0n) {
    return recordOnUnchanged(run, existing, { type: 'REVERSAL_ADVICE', operation: 'CREDIT', status: 'CANCELLED', decision: acknowledge(), amountMinor: 0n });
  }
  const funding = fundingOf(run);
  // DE95 may keep it all: recorded, nothing credited.
  const credited = reversedPart(run.info, remainingMinor);
  if (credited > 0n) await funding.refund(run.tx, credited, historyOf(run.context, existing.id, childId, funding.historyTypes.refund));
  const posted = toBigInt(existing.posted_minor) - credited;
  const settled = closedStatus(posted);
  // A lifecycle still open (a hold, a refund announced) stays PENDING.
  const updated = updateSwipe(run, existing, { status: existing.status === 'PENDING' ? 'PENDING' : settled, postedMinor: posted });
  return writeChild(run, updated, childId, {
    type: 'REVERSAL_ADVICE',
    operation: 'CREDIT',
    status: settled,
    decision: acknowledge(),
    amountMinor: credited,
    heldMinor: toBigInt(existing.held_minor),
    reversesId: postingId,
  });
}

/**
 * A refund authorization reversed before its refund cleared: the refund is no longer announced
 * (all of it, or all but DE95's actual amount); no money moved for it, none moves. A lifecycle
 * that only waited for it is CANCELLED (COMPLETED if something is posted on it).
 */
async function reverseRefundAuthorization(run: Run, existing: CardSwipeRow, childId: string): Promise<CardMessageOutcome> {
  const authorized = toBigInt(existing.refund_authorized_minor);
  const held = toBigInt(existing.held_minor);
  const withdrawn = reversedPart(run.info, authorized);
  if (withdrawn < authorized) {
    const updated = withdrawn === 0n ? existing : updateSwipe(run, existing, { refundAuthorizedMinor: authorized - withdrawn });
    return writeChild(run, updated, childId, { type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'PENDING', decision: acknowledge(), amountMinor: withdrawn, heldMinor: held });
  }
  const closes = existing.status === 'PENDING' && !hasOpenHold(existing) && existing.coop_pending === null;
  const updated = updateSwipe(run, existing, {
    refundAuthorizedMinor: 0n,
    ...(closes ? { status: closedStatus(toBigInt(existing.posted_minor)), expiresAt: null } : {}),
  });
  // The timer stays while the lifecycle holds something (it is the hold's expiry then).
  if (updated.status !== 'PENDING') await cancelExpiry(run, updated);
  return writeChild(run, updated, childId, { type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'CANCELLED', decision: acknowledge(), amountMinor: authorized, heldMinor: held });
}

/** A lifecycle open with nothing held and nothing else to wait for: no refund announced, no cooperative decision in flight (an advice that could reserve nothing). */
function waitsForNothing(swipe: CardSwipeRow): boolean {
  return swipe.status === 'PENDING' && toBigInt(swipe.held_minor) === 0n && toBigInt(swipe.refund_authorized_minor) === 0n && swipe.coop_pending === null;
}

/** Closes a lifecycle that waitsForNothing: CANCELLED (COMPLETED when something is posted on it), its expiry cancelled. */
async function closeWaiting(run: Run, swipe: CardSwipeRow): Promise<CardSwipeRow> {
  const updated = updateSwipe(run, swipe, { status: closedStatus(toBigInt(swipe.posted_minor)), expiresAt: null });
  await cancelExpiry(run, updated);
  return updated;
}

// ---- hold expiry --------------------------------------------------------------------------------

/**
 * What a lifecycle still reserves or announces when its due time passes (by the client's clock):
 * its hold is released, and a refund authorization still announced lapses. A PENDING lifecycle
 * becomes CANCELLED (COMPLETED if something is posted) with expiredAt; one that is not PENDING any
 * more (a completion named a refund authorization's lifecycle) keeps its status. Each lapse is a
 * CANCELLED child that repeats the lifecycle's first identifiers (it is no message): a
 * PRE_AUTHORIZATION for the hold, a REFUND for the refund. Returns the last, or null when nothing
 * was left to expire. Run `byTimer`, a lifecycle whose expiry is later than the timer's moment
 * (moved while the timer was held) is not expired: its timer is set to that expiry.
 */
export async function expireSwipe(tx: Tx, timerContext: RequestContext, swipeId: string, options: { byTimer?: boolean } = {}): Promise<CardTransactionView | null> {
  const peek = await tx.selectFrom('card_swipes').select('card_id').where('client_id', '=', timerContext.clientId).where('id', '=', swipeId).executeTakeFirst();
  if (!peek) return null;
  const { card, swipe } = await lockCardAndSwipe(tx, timerContext.clientId, peek.card_id, swipeId);
  if (!swipe) return null;
  if (options.byTimer && swipe.expires_at !== null && !isDue(swipe, timerContext.now)) {
    // Not due: a message moved the expiry while a runner held this timer, which is then left
    // where it was (scheduleTimer); the timer follows the lifecycle. (The sandbox's expire
    // control expires a hold now, whatever its due time.)
    await scheduleTimer(tx, { clientId: timerContext.clientId, kind: holdExpiryTimerKind, subjectId: swipe.id, dueAt: swipe.expires_at, now: timerContext.now });
    return null;
  }
  // After the lifecycle's last change, as a message is (onLifecycle).
  const context = datedAfter(timerContext, swipe.updated_at);
  const refundAuthorized = toBigInt(swipe.refund_authorized_minor);
  const pending = swipe.status === 'PENDING';
  if (!pending && refundAuthorized === 0n) return null;
  const writer: Writer = { tx, context, write: new WriteStatement() };
  const held = toBigInt(swipe.held_minor);
  const holds = hasOpenHold(swipe);
  // A PENDING lifecycle without a refund announced records its expiry even with nothing held (an advice that could reserve nothing).
  const lapses: { type: 'PRE_AUTHORIZATION' | 'REFUND'; amountMinor: bigint; childId: string }[] = [];
  if (holds || (pending && refundAuthorized === 0n)) lapses.push({ type: 'PRE_AUTHORIZATION', amountMinor: held, childId: idAt(context.now) });
  if (refundAuthorized > 0n) lapses.push({ type: 'REFUND', amountMinor: refundAuthorized, childId: idAt(context.now) });
  if (holds) {
    const funding = fundingSourceOf(card, swipe.asset, context);
    await funding.releaseHold(tx, swipe.hold_id, undefined, historyOf(context, swipe.id, lapses[0]?.childId ?? idAt(context.now), funding.historyTypes.hold), true);
  }
  const posted = toBigInt(swipe.posted_minor);
  const updated = updateSwipe(writer, swipe, {
    ...(pending ? { status: closedStatus(posted), heldMinor: 0n, expiredAt: context.now } : {}),
    expiresAt: null,
    refundAuthorizedMinor: 0n,
  });
  await cancelExpiry(writer, updated);
  const rows = lapses.map((lapse): CardTransactionRow => {
    const childId = lapse.childId;
    const expiresRefund = lapse.type === 'REFUND';
    return {
      client_id: context.clientId,
      id: childId,
      trace_id: context.traceId,
      swipe_id: swipe.id,
      card_id: swipe.card_id,
      wallet_id: swipe.wallet_id,
      credit_line_id: swipe.credit_line_id,
      card_type: swipe.card_type,
      type: expiresRefund ? 'REFUND' : 'PRE_AUTHORIZATION',
      operation: 'CREDIT',
      status: 'CANCELLED',
      mti: swipe.first_mti,
      processing_code: expiresRefund ? '200000' : '000000',
      asset: swipe.asset,
      amount_minor: lapse.amountMinor.toString(),
      requested_minor: '0',
      held_minor: '0',
      transaction_minor: '0',
      transaction_currency: swipe.asset,
      surcharge_minor: null,
      fees: [],
      rrn: swipe.rrn,
      stan: swipe.stan,
      transmission_date_time: swipe.transmission_date_time,
      acquirer_id: swipe.acquirer_id,
      auth_code: null,
      response_code: '00',
      decline_reason: null,
      decision_source: 'SYSTEM',
      network_data_ref: swipe.network_data_ref,
      merchant: swipe.merchant,
      request_fields: {},
      response_mti: swipe.first_mti,
      response_fields: {},
      expires_at: null,
      expired_at: context.now,
      over_capture: false,
      force_post: false,
      orphan: false,
      ledger_hold_id: expiresRefund ? null : swipe.hold_id,
      created_at: context.now,
      coop_decision: null,
      repeat_of: null,
      reverses_id: null,
    };
  });
  const views = rows.map((row) => queueChild(writer, row));
  await sendWrites(writer);
  assert(updated.status !== 'PENDING' || !pending, 'an expired lifecycle is not pending');
  return views.at(-1) ?? null;
}

/** The timer kind (src/modules/timer-kinds.ts): a hold expires when its due time passes on the client's clock. */
export const cardHoldExpiryTimer: TimerKind = {
  kind: holdExpiryTimerKind,
  run: async (tx, context, swipeId) => {
    await expireSwipe(tx, context, swipeId, { byTimer: true });
  },
};
