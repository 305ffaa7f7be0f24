/**
 * Reads of one lifecycle's records that the processor's decisions rest on: which earlier message a
 * reversal names (its authorization, an increment, a posting, a refund or nothing: messageNamed),
 * what of a posting or a refund no reversal has taken back yet, and the advices that approved a
 * declined message. Nothing here writes; processor.ts decides and writes. docs/cards.md describes
 * the rules.
 */
import { sql } from 'kysely';
import type { Tx } from '../../../platform/db/transaction.js';
import { firstSendingOf, parseOriginalDataElements, sendingsOf } from '../network/index.js';
import { toBigInt, type CardSwipeRow } from './card-transaction-views.js';
import type { CoopPendingMark } from './card-transactions.tables.js';
import { transactionTypeOf, type MessageInfo } from './message-info.js';
import { de90NamesAcquirer, de90NamesRequest, lifecycleRecordByDe90, lifecycleRecordByStanAndDe7 } from './processor-reads.js';

export type NamedMessage =
  | { kind: 'INCREMENT_IN_FLIGHT'; mark: CoopPendingMark }
  | { kind: 'REFUND'; refundId: string; remainingMinor: bigint }
  | { kind: 'POSTING'; postingId: string; remainingMinor: bigint }
  | { kind: 'REFUND_AUTHORIZATION' }
  | { kind: 'INCREMENT'; incrementId: string; remainingMinor: bigint }
  | { kind: 'NOTHING' };

/**
 * What a reversal names on its lifecycle, when it is not the lifecycle's authorization: by DE90, a
 * REFUND record of the lifecycle (a refund credited, 0200 or 0220 processing code 20; a refund
 * authorization, 0100 or 0120) or a posting (a 0200 purchase, a 0220 completion or force post:
 * postingNamed); without DE90, the message that opened a lifecycle with a 0200 while it is not
 * open: its refund (while the lifecycle is still a net credit) or its purchase. For a refund
 * credited, what of it no reversal has taken back yet: the reversals naming it by DE90 and, for
 * the lifecycle's first record, those naming nothing, added up (one sent again under another STAN,
 * or once with DE90 and once without, takes nothing twice). Rare messages: read here, not with the
 * lookups.
 *
 * DE90's identifiers (STAN, DE7, acquirer) are shared by a duplicate transmission recorded on the
 * same lifecycle (a 0100 under its reference, a 0200 refund or purchase naming it), which is
 * always declined: a record not declined is taken first, then the newest, as the correlation does
 * (processor-reads.ts). A reversal naming only declined records other than the lifecycle's first
 * message (a declined increment) undoes nothing (NOTHING), as does one naming a message the lifecycle does not have. Until 2026-12-02 the newest was taken: a reversal of a refund whose declined
 * duplicate was the newest released the lifecycle's hold or credited its purchase back instead
 * (found by an audit).
 */
export async function messageNamed(tx: Tx, clientId: string, info: MessageInfo, swipe: CardSwipeRow): Promise<NamedMessage | undefined> {
  const ofLifecycle = () => recordsOfLifecycle(tx, clientId, swipe);
  const original = info.original;
  let record: NamedRecord | undefined;
  const columns = ['id', 'type', 'status', 'amount_minor', 'mti', 'stan', 'rrn', 'transmission_date_time', 'acquirer_id', 'ledger_hold_id'] as const;
  if (original === null) {
    // Without DE90, a lifecycle opened by a 0200 is named by its first message: a refund (while the
    // lifecycle is still a net credit), or a purchase (while nothing is held: then the hold is undone).
    if (firstSendingOf(swipe.first_mti) !== '0200' || swipe.status === 'PENDING') return undefined;
    record = await ofLifecycle().select(columns).orderBy('id').limit(1).executeTakeFirst();
    // A reversal carries the processing code of what it reverses: one of 20 reverses a refund, never
    // the purchase (which of the lifecycle's refunds it means, without DE90, is not known: it takes nothing).
    if (record?.type === 'PURCHASE') return reversesUnnamedRefund(info) ? undefined : postingNamed(tx, clientId, swipe, record);
    // And one of another processing code reverses a purchase: never the refund (no clearing of the lifecycle is named: it takes nothing).
    if (!reversesUnnamedRefund(info) || toBigInt(swipe.posted_minor) >= 0n) return undefined;
  } else {
    const de90Mti = firstSendingOf(original.mti);
    const mtis = sendingsOf(de90Mti);
    if (mtis.length === 0) return undefined;
    // DE90 names the lifecycle's first message: its STAN, DE7 and MTI, and its acquirer or zeros
    // (until 2026-12-03 zeros named it only when it was stored under zeros: a reversal with DE63
    // naming a cooperative request still waiting, which has no record yet, undid nothing, and the
    // client's approval then held or posted what the network had reversed; found by the coop model test).
    const de90NamesFirst =
      original.stan === swipe.stan &&
      original.transmissionDateTime === swipe.transmission_date_time &&
      de90NamesAcquirer(original.acquirerId, swipe.acquirer_id) &&
      de90Mti === firstSendingOf(swipe.first_mti);
    // A cooperative increment waiting for the client's answer has no record yet: its mark names it.
    const inFlight = swipe.coop_pending?.step === 'INCREMENT' ? swipe.coop_pending : null;
    if (inFlight?.request !== undefined && de90NamesRequest(original, inFlight.request)) {
      // Withdrawn already: nothing is left of it to undo (and nothing else is meant).
      return inFlight.withdrawn ? { kind: 'NOTHING' } : { kind: 'INCREMENT_IN_FLIGHT', mark: inFlight };
    }
    // The usual reversal of an authorization (its lifecycle's first message, no refund announced)
    // reads nothing more: what the rules below decide for it is known without the read.
    if ((de90Mti === '0100' || de90Mti === '0120') && de90NamesFirst && toBigInt(swipe.refund_authorized_minor) === 0n) return undefined;
    // Among records with all of DE90's identifiers (a duplicate transmission shares them): ranked in processor-reads.ts.
    record = await lifecycleRecordByDe90<NamedRecord>(tx, clientId, swipe, info, columns);
    if (record === undefined && !de90NamesFirst) {
      // DE90's STAN and DE7 under another MTI or acquirer (a stand-in's 0120 or 0220 named as the
      // request it approved, an acquirer field sent as zeros; ranked in processor-reads.ts): that
      // record is the one named, and the rules below apply to what it is. Until 2026-12-03 such a
      // reversal undid the whole hold, or credited nothing of a posting (found by an audit).
      record = await lifecycleRecordByStanAndDe7<NamedRecord>(tx, clientId, swipe, info, columns);
      // A message the lifecycle, found by its reference, does not have at all (an increment that
      // timed out before it reached us, say): nothing to undo. Until 2026-12-03 the reversal undid
      // the whole hold (found by an audit).
      if (record === undefined && info.networkDataRef !== null && info.networkDataRef === swipe.network_data_ref) return { kind: 'NOTHING' };
    }
    // What the record is decides from here on (DE90's MTI when nothing was found).
    const kind = record === undefined ? de90Mti : firstSendingOf(record.mti);
    const authorization = kind === '0100' || kind === '0120';
    const namesFirst = record === undefined ? de90NamesFirst : isFirstOf(swipe, record);
    // Only declined records named, and not the lifecycle's first message (a declined increment, a
    // duplicate), nor one an advice approved since (the network's stand-in: an 0120 or 0220 naming
    // it by DE90 or sent under its identifiers): nothing to undo. Otherwise what the lifecycle
    // holds or posted is undone as usual (both found by audits, 2026-12-02).
    if (record?.status === 'FAILED' && !namesFirst && (await advicesApproving(tx, clientId, swipe, record)).length === 0) return { kind: 'NOTHING' };
    // An increment approved (an 0100 that added its amount to the open hold): that increment only.
    // Until 2026-12-03 the whole hold (found by an audit). An 0120 named is not one: an advice sets
    // the hold to its amount, and its reversal undoes the hold as a reversal of the lifecycle does.
    // One of an earlier hold (it expired or closed, and an advice holds again) has nothing left to release.
    if (kind === '0100' && !namesFirst && record?.type === 'PRE_AUTHORIZATION' && record.status !== 'FAILED') {
      const remainingMinor = record.ledger_hold_id === swipe.hold_id ? await leftToReverse(tx, clientId, swipe, record) : 0n;
      return { kind: 'INCREMENT', incrementId: record.id, remainingMinor };
    }
    // An authorization (0100, 0120) is a refund's only when a refund authorization is still announced.
    if (authorization && toBigInt(swipe.refund_authorized_minor) === 0n) return undefined;
    if (record !== undefined && !authorization && (record.type === 'PURCHASE' || record.type === 'PRE_AUTH_COMPLETION')) {
      // The lifecycle's first message while it is open (an advice opened it again, with a hold or
      // with nothing it could reserve): the reversal undoes that, as one naming a lifecycle's 0100 does.
      if (namesFirst && swipe.status === 'PENDING') return undefined;
      return postingNamed(tx, clientId, swipe, record);
    }
  }
  if (record?.type !== 'REFUND') return undefined;
  if (record.status === 'PENDING') return { kind: 'REFUND_AUTHORIZATION' };
  if (record.status !== 'COMPLETED') return undefined;
  const taken = await refundTakenBack(tx, clientId, swipe, record);
  let remaining = toBigInt(record.amount_minor) - taken;
  // Without DE90, never more than the lifecycle still credits.
  if (original === null && remaining > -toBigInt(swipe.posted_minor)) remaining = -toBigInt(swipe.posted_minor);
  return { kind: 'REFUND', refundId: record.id, remainingMinor: remaining > 0n ? remaining : 0n };
}

/** A reversal without DE90 of processing code 20: it reverses a refund (a reversal carries the processing code of what it reverses), never a purchase or its hold. */
export function reversesUnnamedRefund(info: MessageInfo): boolean {
  return info.original === null && transactionTypeOf(info) === '20';
}

export type RecordIdentifiers = { mti: string; stan: string; transmission_date_time: string; acquirer_id: string };

/** The records of one lifecycle, found through its card's index entries. */
export function recordsOfLifecycle(tx: Tx, clientId: string, swipe: CardSwipeRow) {
  return tx.selectFrom('card_transactions').where('client_id', '=', clientId).where('card_id', '=', swipe.card_id).where('swipe_id', '=', swipe.id);
}
type NamedRecord = RecordIdentifiers & { id: string; type: string; status: string; amount_minor: string; rrn: string; ledger_hold_id?: string | null };

/**
 * The posting a reversal names through `named` (a record of the lifecycle), and what of it no
 * reversal has credited back yet: `named` itself when it posted (a 0200 purchase, a 0220); a
 * declined 0200, the first 0220 of the network's stand-in that posted it (naming it by DE90 or sent
 * under its identifiers), so that the posting is one whichever of its two messages a reversal
 * names. Undefined when it names nothing posted.
 */
async function postingNamed(tx: Tx, clientId: string, swipe: CardSwipeRow, named: NamedRecord): Promise<NamedMessage | undefined> {
  const posting = await postingOf(tx, clientId, swipe, named);
  if (posting === undefined) return undefined;
  return { kind: 'POSTING', postingId: posting.id, remainingMinor: await leftToReverse(tx, clientId, swipe, posting) };
}

/** The posting behind `named` (postingNamed): itself, the stand-in's first 0220 of a declined 0200, or none. */
async function postingOf(tx: Tx, clientId: string, swipe: CardSwipeRow, named: NamedRecord): Promise<{ id: string; amount_minor: string } | undefined> {
  if (named.status === 'COMPLETED' && (named.type === 'PURCHASE' || named.type === 'PRE_AUTH_COMPLETION') && named.rrn === swipe.rrn && sentUnderFirstOf(swipe, named)) {
    // An approved 0200 and the stand-in's advices sent under its identifiers are one transaction:
    // under either name, one posting of what they posted together, counted under the purchase.
    // Until 2026-12-03 a full reversal credited the purchase's part only (found by an audit).
    const purchase = await purchasePostedUnderFirst(tx, clientId, swipe);
    if (purchase !== undefined) return { id: purchase.id, amount_minor: purchase.postedMinor.toString() };
  }
  if (named.status === 'COMPLETED' && (named.type === 'PURCHASE' || named.type === 'PRE_AUTH_COMPLETION')) return named;
  if (named.status !== 'FAILED' || named.type !== 'PURCHASE') return undefined;
  return (await advicesApproving(tx, clientId, swipe, named)).find((advice) => advice.type === 'PRE_AUTH_COMPLETION' && advice.status === 'COMPLETED');
}

/**
 * What of a posting no reversal has credited back yet, or of an increment no reversal has released
 * yet: its amount less the reversals that record it (reverses_id, migration 0044).
 */
export async function leftToReverse(tx: Tx, clientId: string, swipe: CardSwipeRow, message: { id: string; amount_minor: string }): Promise<bigint> {
  const taken = await recordsOfLifecycle(tx, clientId, swipe)
    .select(sql<string>`coalesce(sum(amount_minor), 0)`.as('sum'))
    .where('reverses_id', '=', message.id)
    .where('repeat_of', 'is', null)
    .executeTakeFirstOrThrow();
  const left = toBigInt(message.amount_minor) - toBigInt(taken.sum);
  return left > 0n ? left : 0n;
}

/**
 * What of the posting of a lifecycle's first message (a 0200 purchase, or the stand-in's 0220 of a
 * declined one) no reversal has credited back yet, as a reversal naming it would find it (the
 * sandbox's reversal names it); undefined when the lifecycle did not open with a purchase posted.
 */
export async function firstPostingLeft(tx: Tx, clientId: string, swipe: CardSwipeRow): Promise<bigint | undefined> {
  const first = await recordsOfLifecycle(tx, clientId, swipe)
    .select(['id', 'type', 'status', 'amount_minor', 'mti', 'stan', 'rrn', 'transmission_date_time', 'acquirer_id'])
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  const posting = first === undefined ? undefined : await postingOf(tx, clientId, swipe, first);
  return posting === undefined ? undefined : leftToReverse(tx, clientId, swipe, posting);
}

/** The advices of the lifecycle (0120, 0220: the network decided) that approved the declined record, oldest first: those naming it by DE90, or sent under its identifiers (repeats left out). */
export async function advicesApproving(tx: Tx, clientId: string, swipe: CardSwipeRow, declined: RecordIdentifiers): Promise<{ id: string; type: string; status: string; amount_minor: string }[]> {
  const advices = await recordsOfLifecycle(tx, clientId, swipe)
    .select(['id', 'type', 'status', 'amount_minor', 'stan', 'transmission_date_time', 'acquirer_id', 'request_fields'])
    .where('mti', 'in', [...sendingsOf('0120'), ...sendingsOf('0220')])
    .where('repeat_of', 'is', null)
    .orderBy('id')
    .execute();
  return advices.filter((advice) => {
    const named = advice.request_fields['90'];
    if (typeof named === 'string' && de90Names(named, declined)) return true;
    return advice.stan === declined.stan && advice.transmission_date_time === declined.transmission_date_time && advice.acquirer_id === declined.acquirer_id;
  });
}

/**
 * Whether a message's DE90 (its stored request field) names the record, by its first sending's
 * identifiers; an acquirer sent as zeros names any (until 2026-12-03 only a record stored under
 * zeros: a stand-in's 0120 naming a declined increment that way did not count as approving it, and
 * a reversal naming the increment then undid nothing of what the advice held; found by the model test).
 */
export function de90Names(field: string, record: RecordIdentifiers): boolean {
  const named = parseOriginalDataElements(field);
  return named.stan === record.stan && named.transmissionDateTime === record.transmission_date_time && de90NamesAcquirer(named.acquirerId, record.acquirer_id) && sendingsOf(firstSendingOf(record.mti)).includes(named.mti);
}

/**
 * What the reversals of a lifecycle took back of one of its refunds: those that record it
 * (reverses_id, since 2026-12-03) and, written before, those whose DE90 names it exactly and, when
 * it is the message that opened the lifecycle (its identifiers are the lifecycle's own), those
 * naming nothing. Until 2026-12-03 only the DE90 rule counted, so reversals that named a refund by
 * its STAN and DE7 under another MTI or acquirer took it back again and again (found by an audit).
 */
export async function refundTakenBack(tx: Tx, clientId: string, swipe: CardSwipeRow, refund: RecordIdentifiers & { id: string }): Promise<bigint> {
  const opened = isFirstOf(swipe, refund);
  const reversals = await recordsOfLifecycle(tx, clientId, swipe)
    .select(['amount_minor', 'request_fields', 'reverses_id'])
    .where('type', '=', 'REVERSAL_ADVICE')
    .where('operation', '=', 'DEBIT')
    .where('repeat_of', 'is', null)
    .execute();
  let taken = 0n;
  for (const reversal of reversals) {
    const field = reversal.request_fields['90'];
    const counts = reversal.reverses_id !== null ? reversal.reverses_id === refund.id : field === undefined ? opened : de90Names(field, refund);
    if (counts) taken += toBigInt(reversal.amount_minor);
  }
  return taken;
}

/** Whether the record is the lifecycle's first message (the lifecycle keeps its identifiers). */
export function isFirstOf(swipe: CardSwipeRow, record: RecordIdentifiers): boolean {
  return record.stan === swipe.stan && record.transmission_date_time === swipe.transmission_date_time && record.acquirer_id === swipe.acquirer_id && firstSendingOf(record.mti) === firstSendingOf(swipe.first_mti);
}

/**
 * The approved 0200 purchase that opened the lifecycle, with what it and the network's advices sent
 * under its identifiers (the stand-in answered it too; completeOrForcePost posts only what that
 * approved beyond it) posted together; undefined when the lifecycle did not open with a 0200
 * approved.
 */
export async function purchasePostedUnderFirst(tx: Tx, clientId: string, swipe: CardSwipeRow): Promise<{ id: string; postedMinor: bigint } | undefined> {
  if (firstSendingOf(swipe.first_mti) !== '0200') return undefined;
  const together = await recordsOfLifecycle(tx, clientId, swipe)
    .select(['id', 'type', 'amount_minor'])
    .where('stan', '=', swipe.stan)
    .where('rrn', '=', swipe.rrn)
    .where('transmission_date_time', '=', swipe.transmission_date_time)
    .where('acquirer_id', '=', swipe.acquirer_id)
    .where('status', '=', 'COMPLETED')
    .where('type', 'in', ['PURCHASE', 'PRE_AUTH_COMPLETION'])
    .where('repeat_of', 'is', null)
    .orderBy('id')
    .execute();
  const purchase = together.find((record) => record.type === 'PURCHASE');
  return purchase === undefined ? undefined : { id: purchase.id, postedMinor: together.reduce((sum, record) => sum + toBigInt(record.amount_minor), 0n) };
}

/** Whether a message carries the identifiers of the lifecycle's first message (its STAN, DE7 and acquirer). */
export function sentUnderFirstOf(swipe: CardSwipeRow, ids: Pick<RecordIdentifiers, 'stan' | 'transmission_date_time' | 'acquirer_id'>): boolean {
  return ids.stan === swipe.stan && ids.transmission_date_time === swipe.transmission_date_time && ids.acquirer_id === swipe.acquirer_id;
}
