/**
 * What the processor reads for one message, in as few statements as the lock order allows: the
 * card locked together with its program (one statement), then everything the decision needs that
 * does not depend on an answer first, after the card's lock (one statement): the earlier message
 * with the same STAN and RRN, the lifecycle the message correlates to (locked), the card's
 * approvals of the day. The reads themselves are those of contract §12.3; processor.ts decides in
 * its order with what they found.
 */
import { preparedTextStatement, type StatementParameters, type TextStatement } from '../../../platform/db/text-statements.js';
import type { Tx } from '../../../platform/db/transaction.js';
import { claimInGroup, inGroupLockOrder, inTransactionGroup, leaveIfLockedElsewhere, passLockTurn } from '../../../platform/db/transaction-groups.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { isUuid } from '../../../platform/ids.js';
import { lockWalletAccountText, walletAccountId, type AccountRow } from '../../ledger/index.js';
import type { CardRow } from '../cards.service.js';
import type { CardProgramRow } from '../programs.js';
import { firstSendingOf, sendingsOf } from '../network/index.js';
import type { CardSwipeRow } from './card-transaction-views.js';
import { transactionTypeOf, type MessageInfo } from './message-info.js';
import type { CoopPendingMark } from './card-transactions.tables.js';
import './card-transactions.tables.js';

/** A card, locked FOR UPDATE, and its program (undefined only if the program row is missing). */
export interface LockedCard {
  card: CardRow;
  program: CardProgramRow | undefined;
}

/** The program row as to_jsonb writes it: its timestamps are strings. */
type ProgramJson = Omit<CardProgramRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string };

/**
 * Locks the card (by id, or by the fingerprint of its number) and reads its program in the same
 * statement. Only the card's row is locked (FOR UPDATE OF cards): that lock orders every message
 * of a card and comes first in the processor's lock order.
 */
export async function lockCardWithProgram(tx: Tx, clientId: string, by: { id: string } | { fingerprint: string }): Promise<LockedCard | undefined> {
  if ('id' in by && !isUuid(by.id)) return undefined;
  claimCardBeforeLock(tx, clientId, by);
  // In a transaction group the card is taken only if no transaction outside the group's process
  // holds it: one that does makes the message leave the group and run alone (lockedElsewhere).
  const row = (await lockCardStatement(clientId, by, { skipLocked: inTransactionGroup(tx) }).execute(tx)).rows[0];
  if (!row) {
    await leaveIfLockedElsewhere(tx, claimKey(clientId, 'id' in by ? by.id : by.fingerprint), async () => (await cardExistsStatement(clientId, by).execute(tx)).rows.length > 0);
    return undefined;
  }
  const { program, ...card } = row;
  claimCard(tx, card);
  return { card, program: program === null ? undefined : { ...program, created_at: new Date(program.created_at), updated_at: new Date(program.updated_at) } };
}

/** The name a row is claimed by in a transaction group: its client and its id (or a card's fingerprint). */
const claimKey = (clientId: string, id: string) => `${clientId}/${id}`;

/**
 * Call before every statement that locks a card (by its id, or by the fingerprint of its number):
 * in a transaction group (transaction-groups.ts), a card another group in flight holds is then
 * waited for outside the group. Locked first, the member would wait in PostgreSQL for that whole
 * group to commit, and every other member of its own group with it, their statements queued on
 * the same connection behind the lock wait (in the coop-auth benchmark, waits of up to 124 ms).
 */
export function claimCardBeforeLock(tx: Tx, clientId: string, by: { id: string } | { fingerprint: string }): void {
  claimInGroup(tx, [claimKey(clientId, 'id' in by ? by.id : by.fingerprint)]);
}

/**
 * Call with the card locked, before anything is written for the message: in a transaction group
 * (transaction-groups.ts), no other message of the group works on this card or on the money
 * behind it (its wallet, its credit line and collateral); one that tries runs in a later group.
 * The card is claimed by both its names, so that a message naming it by the other one
 * (claimCardBeforeLock) waits outside too.
 */
export function claimCard(tx: Tx, card: CardRow): void {
  claimInGroup(
    tx,
    [card.id, card.pan_fingerprint, card.wallet_id, card.credit_line_id, card.collateral_wallet_id].flatMap((id) => (id === null ? [] : [claimKey(card.client_id, id)])),
  );
}

/**
 * The statement of `lockCardWithProgram`, prepared like the lookup below (see `lookupStatement`
 * for the plans it may keep), and written as text like it.
 */
export function lockCardStatement(
  clientId: string,
  by: { id: string } | { fingerprint: string },
  options: { skipLocked?: boolean } = {},
): TextStatement<CardRow & { program: ProgramJson | null }> {
  return preparedTextStatement(({ add: p }) => {
    const chosen = 'id' in by ? `cards.id = ${p(by.id)}` : `cards.pan_fingerprint = ${p(by.fingerprint)}`;
    return `SELECT cards.*, to_jsonb(card_programs) AS program FROM cards
      LEFT JOIN card_programs ON card_programs.client_id = cards.client_id AND card_programs.id = cards.card_program_id
      WHERE cards.client_id = ${p(clientId)} AND ${chosen}
      FOR UPDATE OF cards${options.skipLocked === true ? ' SKIP LOCKED' : ''}`;
  });
}

/** Whether the card exists (read without a lock), for a lock that SKIP LOCKED left empty. */
function cardExistsStatement(clientId: string, by: { id: string } | { fingerprint: string }): TextStatement<{ found: number }> {
  return preparedTextStatement(({ add: p }) => {
    const chosen = 'id' in by ? `id = ${p(by.id)}` : `pan_fingerprint = ${p(by.fingerprint)}`;
    return `SELECT 1 AS found FROM cards WHERE client_id = ${p(clientId)} AND ${chosen}`;
  });
}

/** What `lookUpMessage` is asked to read. */
export interface LookupWants {
  /** The earlier message of the card with the same STAN and RRN (and kind) within the duplicate window. */
  earlier?: { since: Date };
  /** The lifecycle the message belongs to, locked; `byRrn` as for the processor's `correlate`. */
  correlate?: { byRrn: boolean };
  /** The card's approvals of the day (limits). */
  approvals?: boolean;
  /**
   * The ledger account the card spends from (its wallet's, in `asset`, the program's currency),
   * locked as the ledger locks it: the decision reads its AVAILABLE and the ledger takes the row as
   * read (LoadOptions.locked), two round trips fewer.
   */
  account?: { asset: string };
  /**
   * A cooperative first sending (0100 or 0200, not an increment) of the card with the message's
   * STAN and RRN still waiting for the client's answer (its lifecycle's mark): a repeat waits for
   * its answer, a duplicate is declined.
   */
  waiting?: boolean;
}

export interface MessageLookups {
  /** The id of the earlier message (asked for `earlier`); null when there is none. */
  earlierId: string | null;
  /** The lifecycle found and locked (asked for `correlate`); undefined when none matches. */
  correlated: CardSwipeRow | undefined;
  /** The card's approvals of the day (asked for `approvals`). */
  today: { count: number; sumMinor: bigint } | undefined;
  /** The account asked for, locked (asked for `account`); undefined when it does not exist (yet). */
  account: AccountRow | undefined;
  /** The waiting first sending's lifecycle and record id (asked for `waiting`); undefined when none waits. */
  waiting: { swipeId: string; childId: string } | undefined;
}

/** A row of a left join's nullable side. */
type NullableColumns<T> = { [K in keyof T]: T[K] | null };

/** One day in milliseconds (the daily limits count the UTC day of the client's clock; hold expiry counts days). */
export const dayMs = 24 * 3600 * 1000;

/**
 * Reads, in one statement, what was asked for. Call it with the card locked: the statement reads
 * what the card's earlier messages wrote under that lock.
 */
export async function lookUpMessage(tx: Tx, context: RequestContext, card: CardRow, info: MessageInfo, wants: LookupWants): Promise<MessageLookups> {
  const statement = lookupStatement(context, card, info, wants);
  // Locking the wallet's account, the members of a transaction group take their accounts in the
  // ledger's lock order (by account id), as every other transaction moving money does; a member
  // whose lookup locks none lets the others go without it.
  if (!wants.account) passLockTurn(tx);
  const result = await (wants.account
    ? inGroupLockOrder(tx, walletAccountId(card.client_id, card.wallet_id, wants.account.asset), () => statement.execute(tx))
    : statement.execute(tx));
  const row = result.rows[0];
  if (!row) throw new Error('the lookup statement returned no row');
  const { earlier_id: earlierId, today_count: count, today_sum: sum, account, waiting, ...swipe } = row;
  return {
    earlierId,
    waiting: waiting ?? undefined,
    // A left join without a match leaves every column of the lifecycle null; its id is never null otherwise.
    correlated: swipe.id === null ? undefined : (swipe as CardSwipeRow),
    today: count === null || sum === null ? undefined : { count: Number(count), sumMinor: BigInt(sum) },
    account: account ?? undefined,
  };
}

/**
 * The statement of `lookUpMessage`, prepared: its text depends only on what is asked for and the
 * message's kind. Planned for every message, it and the card's lock took about a quarter of the
 * database's time per card message (docs/benchmarks.md). Written as text
 * (platform/db/text-statements.ts): built and compiled by Kysely for every message, it and the
 * card's lock cost the server 673 µs of CPU per card message where text costs 545.
 *
 * PostgreSQL may keep a generic plan. One made while card_transactions was empty (where every
 * index looks as cheap as any other) found the earlier message by reading the client's records in
 * id order through the primary key, and once kept for the connection's life it read every record
 * of the client for each message (the coop-auth benchmark, 2026-11-27). Prepared statements are
 * now planned again after 64 runs, 512 and so on (prepared-statements.ts), so such a plan lasts
 * while the tables are small; on tables of a few thousand records every part of the generic plan,
 * as of the custom one, goes through an index on the card (processor-plans.test.ts).
 */
export function lookupStatement(context: RequestContext, card: CardRow, info: MessageInfo, wants: LookupWants): TextStatement<NullableColumns<CardSwipeRow> & LookupColumns> {
  return preparedTextStatement((parameters) => {
    const client = parameters.add(context.clientId);
    // The card's rows, named by the client and the card: every part goes through the card's index entries.
    const ofCard = `client_id = ${client} AND card_id = ${parameters.add(card.id)}`;
    const earlier = wants.earlier ? earlierMessageQuery(parameters, ofCard, info, wants.earlier.since) : 'NULL::uuid';
    const today = wants.approvals ? approvalsTodayQuery(parameters, ofCard, context, card) : '(SELECT NULL::bigint AS count, NULL::numeric AS sum)';
    const correlated = (wants.correlate && correlatedSwipeQuery(parameters, client, ofCard, info, wants.correlate.byRrn)) || '(SELECT * FROM card_swipes WHERE false)';
    // The account, locked by the ledger's own query, as one JSON column (its amounts are text in it).
    const account = wants.account ? 'to_jsonb(account)' : 'NULL::jsonb';
    const accountJoin = wants.account ? `LEFT JOIN LATERAL (${lockWalletAccountText(parameters, context.clientId, card.wallet_id, wants.account.asset)}) AS account ON true` : '';
    const waiting = wants.waiting
      ? `(SELECT jsonb_build_object('swipeId', id, 'childId', coop_pending->>'childId') FROM card_swipes
          WHERE ${ofCard} AND stan = ${parameters.add(info.stan)} AND rrn = ${parameters.add(info.rrn)} AND coop_pending IS NOT NULL AND coop_pending->>'step' <> 'INCREMENT'
          LIMIT 1)`
      : 'NULL::jsonb';
    return `SELECT ${earlier} AS earlier_id, today.count AS today_count, today.sum AS today_sum, ${account} AS account, ${waiting} AS waiting, correlated.*
      FROM ${today} AS today
      LEFT JOIN ${correlated} AS correlated ON true
      ${accountJoin}`;
  });
}

/** The lookup's own columns besides the lifecycle's. */
interface LookupColumns {
  earlier_id: string | null;
  today_count: string | null;
  today_sum: string | null;
  account: AccountRow | null;
  waiting: { swipeId: string; childId: string } | null;
}

/** The card's lifecycles, found through the card's index entries. */
export function swipesOfCard(tx: Tx, clientId: string, cardId: string) {
  return tx.selectFrom('card_swipes').where('client_id', '=', clientId).where('card_id', '=', cardId);
}

/**
 * The first message of this card with the same STAN and RRN and the same kind (a repeat counts as
 * its first sending) since `since`. Expiry records repeat their lifecycle's identifiers; they are
 * not messages.
 */
function earlierMessageQuery(parameters: StatementParameters, ofCard: string, info: MessageInfo, since: Date): string {
  const mtis = sendingsOf(info.mti);
  if (mtis.length === 0) return 'NULL::uuid';
  const p = parameters.add;
  return `(SELECT id FROM card_transactions
    WHERE ${ofCard} AND stan = ${p(info.stan)} AND rrn = ${p(info.rrn)} AND created_at > ${p(since)} AND expired_at IS NULL
      AND mti IN (${parameters.list(mtis)})
    ORDER BY id LIMIT 1)`;
}

/**
 * The card's approvals of the day (UTC day of the client's clock): count and sum, one row, each
 * decision once (a repeat's record, migration 0038, is not a decision of its own); for a
 * COOP_AUTH card, its requests waiting for the client's answer count as approved for what they
 * reserved.
 */
function approvalsTodayQuery(parameters: StatementParameters, ofCard: string, context: RequestContext, card: CardRow): string {
  const startOfDay = parameters.add(new Date(Math.floor(context.now.getTime() / dayMs) * dayMs));
  // A withdrawn request (reversed or decided by an advice before its answer) is no approval.
  const waiting = `FROM card_swipes WHERE ${ofCard} AND coop_pending IS NOT NULL AND NOT (coop_pending ? 'withdrawn') AND updated_at >= ${startOfDay}`;
  const coop = card.card_transaction_handler === 'COOP_AUTH';
  const count = coop ? `count(*) + (SELECT count(*) ${waiting})` : 'count(*)';
  const sum = coop
    ? `coalesce(sum(amount_minor), 0) + (SELECT coalesce(sum((coop_pending->>'reservedMinor')::numeric), 0) ${waiting})`
    : 'coalesce(sum(amount_minor), 0)';
  return `(SELECT ${count} AS count, ${sum} AS sum FROM card_transactions
    WHERE ${ofCard} AND created_at >= ${startOfDay} AND type IN ('PRE_AUTHORIZATION', 'PURCHASE')
      AND mti IN ('0100', '0101', '0200', '0201') AND response_code IN ('00', '10') AND repeat_of IS NULL)`;
}

/**
 * The lifecycle a message belongs to (contract §12.3), locked, in this order: networkDataRef (DE63
 * positions 9–24); else DE90 (original MTI + STAN + DE7 + acquirer); else, for an advice (0120,
 * 0220, not a refund's), the lifecycle of the request (0100, 0200, not a refund's) with the
 * advice's own STAN, RRN, DE7 and acquirer (chosen as DE90's); else, when `byRrn`, the card + RRN + amount of a lifecycle whose hold is
 * still open. Undefined when the message names none
 * of them. DE90 names a message by identifiers a duplicate transmission shares (STAN, DE7,
 * acquirer), and a duplicate of a request is always declined (94, or an earlier check's code):
 * among the records that have them, one that was not declined comes first, then the newest. Until
 * 2026-12-02 the newest came first, so a reversal or completion of an approved 0100 landed on its
 * declined duplicate and left the hold open (found by an audit). A reversal meant for the declined
 * duplicate itself cannot be told apart and acts on the approved message; DE4 cannot tell them
 * apart either (after a partial reversal it is what is still held), which two earlier attempts
 * that matched it showed (docs/cards.md, Correlation).
 */
function correlatedSwipeQuery(parameters: StatementParameters, client: string, ofCard: string, info: MessageInfo, byRrn: boolean): string | undefined {
  const p = parameters.add;
  const choices: string[] = [];
  if (info.networkDataRef !== null) {
    choices.push(`(SELECT id FROM card_swipes WHERE ${ofCard} AND network_data_ref = ${p(info.networkDataRef)} ORDER BY id DESC LIMIT 1)`);
  }
  const original = info.original;
  const originalMtis = original === null ? [] : sendingsOf(firstSendingOf(original.mti));
  if (original !== null && originalMtis.length > 0) {
    const de90 = de90ByStanAndDe7(info);
    // A reversal naming a cooperative request still waiting for the client's answer (it has no
    // record yet: the lifecycle's mark names it; de90NamesRequest is the same rule for
    // messageNamed). Until 2026-12-03 such a reversal without DE63 was an orphan, and the approval
    // that followed held or posted what the network reversed (found by an audit).
    const stan = p(original.stan);
    const de7 = p(original.transmissionDateTime);
    const waiting = (also: string) => `(SELECT id FROM card_swipes
        WHERE ${ofCard} AND coop_pending IS NOT NULL AND coop_pending->'request'->>'stan' = ${stan}
          AND coop_pending->'request'->>'transmissionDateTime' = ${de7} AND substr(coop_pending->'request'->>'mti', 1, 2) = ${p(original.mti.slice(0, 2))} ${also}
        ORDER BY id DESC LIMIT 1)`;
    // A request keeps its RRN in its mark (a first message's mark written before 2026-12-03 has its lifecycle's).
    const ofRrn = (rrn: string) => `AND coalesce(coop_pending->'request'->>'rrn', CASE WHEN coop_pending->>'step' <> 'INCREMENT' THEN rrn END) = ${rrn}`;
    const ofAcquirer = (acquirer: string) => `AND coop_pending->'request'->>'acquirerId' = ${acquirer}`;
    // DE90 sending the acquirer as zeros names no acquirer: a reversal naming a message (de90) or a
    // message that is no reversal (an advice, a completion) ranks every acquirer's (below).
    const zeros = isZeros(original.acquirerId) && (de90 !== undefined || reversalDe90(info) === undefined);
    if (de90 !== undefined && !zeros) {
      // A waiting request with all of DE90's identifiers and the reversal's RRN comes before the
      // records that have them (two terminals of one acquirer may send one STAN and DE7): until
      // 2026-12-03 an answered message of the other terminal came first, its hold was released, and
      // the approval then held what the network had reversed (found by an audit).
      choices.push(waiting(`${ofAcquirer(p(original.acquirerId))} ${ofRrn(p(info.rrn))}`));
    }
    // DE90's exact match (not when DE90 sends the acquirer as zeros: the ranking below takes the
    // message's own acquirer first). A reversal's is chosen as messageNamed chooses it.
    const exact = (acquirer: string) => `(SELECT swipe_id FROM card_transactions
        WHERE ${ofCard} AND stan = ${stan} AND transmission_date_time = ${de7}
          ${acquirer} AND expired_at IS NULL AND mti IN (${parameters.list(originalMtis)})
        ORDER BY ${reversalDe90(info) === undefined ? "status = 'FAILED', id DESC" : reversalTieBreak(parameters, info)} LIMIT 1)`;
    if (!zeros) choices.push(exact(`AND acquirer_id = ${p(original.acquirerId)}`));
    if (zeros) {
      // DE90 names no acquirer: waiting requests and answered messages are ranked together, one of
      // the message's RRN first, then one of its own acquirer (DE32), then any, a waiting request
      // before an answered message at each step. Until 2026-12-03 the newest waiting request of
      // any acquirer came first: a reversal meant for one terminal's purchase cancelled
      // another's, and left its own hold in place (found by an audit). Until 2026-12-03 an advice
      // or a completion sending zeros found only a message sent without DE32 (stored under zeros):
      // one naming an authorization of a given acquirer opened a lifecycle of its own beside the hold.
      const answered =
        de90 === undefined
          ? exact
          : (also: string) => {
              const { where, orderBy } = stanAndDe7Ranking(parameters, info, de90);
              return `(SELECT swipe_id FROM card_transactions WHERE ${ofCard} AND ${where} ${also} ORDER BY ${orderBy} LIMIT 1)`;
            };
      const rrn = p(info.rrn);
      const acquirer = p(info.acquirerId);
      choices.push(
        waiting(ofRrn(rrn)),
        answered(`AND rrn = ${rrn}`),
        waiting(ofAcquirer(acquirer)),
        answered(`AND acquirer_id = ${acquirer}`),
        waiting(''),
        answered(''),
      );
    } else if (de90 === undefined) {
      // Another message naming a request still waiting for the client's answer by DE90 (an advice,
      // the network's stand-in; a completion): that request's lifecycle, as its DE63 would find it.
      // Until 2026-12-03 such an advice without DE63 opened a lifecycle of its own, and the late
      // approval held the request beside it (found by an audit).
      choices.push(waiting(ofAcquirer(p(original.acquirerId))));
    } else {
      // A reversal whose DE90 has a message's STAN and DE7 under another MTI or acquirer: that
      // message's lifecycle, as messageNamed then takes it. Until 2026-12-03 such a reversal
      // without DE63 was an orphan (found by an audit).
      const { where, orderBy } = stanAndDe7Ranking(parameters, info, de90);
      choices.push(waiting(ofAcquirer(p(original.acquirerId))), `(SELECT swipe_id FROM card_transactions WHERE ${ofCard} AND ${where} ORDER BY ${orderBy} LIMIT 1)`);
    }
  }
  if (byRrn && (info.mti === '0120' || info.mti === '0220')) {
    // An advice sent under the identifiers of the request it approved (the network's stand-in for a
    // request that was declined, or answered too late): that request's lifecycle. Until
    // 2026-12-02 such an advice opened a lifecycle of its own, and a reversal naming the request
    // found the declined one and undid nothing (found by an audit).
    choices.push(`(SELECT swipe_id FROM card_transactions
      WHERE ${ofCard} AND stan = ${p(info.stan)} AND transmission_date_time = ${p(info.transmissionDateTime)} AND acquirer_id = ${p(info.acquirerId)}
        AND rrn = ${p(info.rrn)} AND expired_at IS NULL AND mti IN (${parameters.list([...sendingsOf('0100'), ...sendingsOf('0200')])})
        AND type IN ('PRE_AUTHORIZATION', 'PURCHASE')
      ORDER BY status = 'FAILED', id DESC LIMIT 1)`);
  }
  if (byRrn) {
    choices.push(`(SELECT id FROM card_swipes WHERE ${ofCard} AND rrn = ${p(info.rrn)} AND status = 'PENDING' AND held_minor = ${p(info.amountMinor.toString())}
      ORDER BY id DESC LIMIT 1)`);
  }
  if (choices.length === 0) return undefined;
  // COALESCE evaluates its arguments in order and stops at the first that is not null: the first choice that matches wins.
  return `(SELECT * FROM card_swipes WHERE client_id = ${client} AND id = coalesce(${choices.join(', ')}) FOR UPDATE)`;
}

/**
 * The message a reversal's DE90 names by its STAN and DE7 alone, when no record has all of DE90's
 * identifiers (a stand-in's 0120 or 0220 named as the request it approved, an acquirer sent as
 * zeros): the conditions and the ranking, written once for the correlation above and for the
 * messageNamed (lifecycle-records.ts). STANs are unique per acquirer only, so it is a message of DE90's
 * acquirer, or of any acquirer when DE90 sends it as zeros (then one of the reversal's RRN first,
 * then one of its own acquirer, DE32: until 2026-12-03 the acquirer came first, so a reversal
 * carrying a purchase's RRN took back its acquirer's refund under the same STAN instead of the
 * purchase sent without DE32; found by an audit); never a reversal's record. Ranked: DE90's own
 * MTI first, then one of its class (a request or its advice), then reversalTieBreak. Until
 * 2026-12-03 any acquirer's and any kind's record was taken (found by audits).
 */
function stanAndDe7Ranking(parameters: StatementParameters, info: MessageInfo, { original, mti }: De90ByStanAndDe7): { where: string; orderBy: string } {
  const p = parameters.add;
  const zeros = isZeros(original.acquirerId);
  return {
    where: `stan = ${p(original.stan)} AND transmission_date_time = ${p(original.transmissionDateTime)}${zeros ? '' : ` AND acquirer_id = ${p(original.acquirerId)}`}
      AND expired_at IS NULL AND repeat_of IS NULL AND type <> 'REVERSAL_ADVICE'`,
    orderBy: `${zeros ? `rrn <> ${p(info.rrn)}, acquirer_id <> ${p(info.acquirerId)}, ` : ''}mti NOT IN (${parameters.list(sendingsOf(mti))}), substr(mti, 2, 1) <> ${p(mti.charAt(1))},
      ${reversalTieBreak(parameters, info)}`,
  };
}

/**
 * How a reversal chooses among the records its DE90 names (all of its identifiers, or its STAN
 * and DE7 alone, after the ranking above): one of the reversal's RRN (a reversal carries its
 * message's RRN), then one of the kind its processing code says it reverses (20: a refund), then
 * one not declined (a duplicate of a request is), then the newest. Until 2026-12-03 DE90's exact
 * match chose the lifecycle by the last two alone, so a reversal without DE63 of a purchase whose
 * STAN and DE7 a refund or another purchase of the acquirer shared undid that one (found by an
 * audit).
 */
function reversalTieBreak(parameters: StatementParameters, info: MessageInfo): string {
  return `rrn <> ${parameters.add(info.rrn)}, (type = 'REFUND') <> ${parameters.add(transactionTypeOf(info) === '20')}, status = 'FAILED', id DESC`;
}

/** Whether an acquirer identification (DE32, DE90's) was sent as zeros: it names no acquirer. */
function isZeros(acquirerId: string): boolean {
  return /^0*$/.test(acquirerId);
}

/** Whether DE90's acquirer names a message's (DE32, as stored): the same, or zeros (any). */
export function de90NamesAcquirer(named: string, acquirerId: string): boolean {
  return named === acquirerId || isZeros(named);
}

type De90ByStanAndDe7 = { original: NonNullable<MessageInfo['original']>; mti: string };

/** DE90 of a reversal (0400, 0420), with its MTI's first sending; undefined without DE90 or with an MTI that names no message. */
function reversalDe90(info: MessageInfo): De90ByStanAndDe7 | undefined {
  const original = info.original;
  if (original === null || (info.mti !== '0420' && info.mti !== '0400')) return undefined;
  const mti = firstSendingOf(original.mti);
  return sendingsOf(mti).length === 0 ? undefined : { original, mti };
}

/**
 * DE90 of a reversal that may name a message by its STAN and DE7 alone (stanAndDe7Ranking);
 * undefined when the rule does not apply: not a reversal, no DE90, or DE90 naming a reversal (no
 * message stands for it but its own).
 */
function de90ByStanAndDe7(info: MessageInfo): De90ByStanAndDe7 | undefined {
  const de90 = reversalDe90(info);
  return de90 === undefined || de90.mti.charAt(1) === '4' ? undefined : de90;
}

/**
 * Whether DE90's exact match is not looked for: a reversal's DE90 that sends the acquirer as
 * zeros, when stanAndDe7Ranking applies (it takes the reversal's own acquirer first). A message
 * sent without DE32 is stored under zeros too, and was taken before the reversal's own acquirer's
 * until 2026-12-03 (found by an audit).
 */
function skipsExactMatch(info: MessageInfo): boolean {
  const de90 = de90ByStanAndDe7(info);
  return de90 !== undefined && isZeros(de90.original.acquirerId);
}

/**
 * The record of `swipe` a reversal's DE90 names by its STAN and DE7 alone (stanAndDe7Ranking), with
 * `columns`; undefined when it has none or the rule does not apply.
 */
export async function lifecycleRecordByStanAndDe7<R>(tx: Tx, clientId: string, swipe: CardSwipeRow, info: MessageInfo, columns: readonly string[]): Promise<R | undefined> {
  const de90 = de90ByStanAndDe7(info);
  if (de90 === undefined) return undefined;
  const statement = preparedTextStatement<R>((parameters) => {
    const p = parameters.add;
    const { where, orderBy } = stanAndDe7Ranking(parameters, info, de90);
    return `SELECT ${columns.join(', ')} FROM card_transactions
      WHERE client_id = ${p(clientId)} AND card_id = ${p(swipe.card_id)} AND swipe_id = ${p(swipe.id)} AND ${where}
      ORDER BY ${orderBy} LIMIT 1`;
  });
  return (await statement.execute(tx)).rows[0];
}

/**
 * The record of `swipe` a reversal's DE90 names with all of its identifiers (its MTI or that MTI's
 * repeat, STAN, DE7 and acquirer; reversalTieBreak among several), with `columns`; undefined when
 * it has none. When the exact match is not looked for (skipsExactMatch: the acquirer sent as
 * zeros), the record stanAndDe7Ranking names instead, a message stored under zeros among them (one
 * sent without DE32). The first version of the skip (bf12f4a) answered nothing there, so a reversal
 * naming such a message that opened its lifecycle undid nothing (found by an audit before it landed).
 */
export async function lifecycleRecordByDe90<R>(tx: Tx, clientId: string, swipe: CardSwipeRow, info: MessageInfo, columns: readonly string[]): Promise<R | undefined> {
  const de90 = reversalDe90(info);
  if (de90 === undefined) return undefined;
  if (skipsExactMatch(info)) return lifecycleRecordByStanAndDe7<R>(tx, clientId, swipe, info, columns);
  const { original, mti } = de90;
  const statement = preparedTextStatement<R>((parameters) => {
    const p = parameters.add;
    return `SELECT ${columns.join(', ')} FROM card_transactions
      WHERE client_id = ${p(clientId)} AND card_id = ${p(swipe.card_id)} AND swipe_id = ${p(swipe.id)}
        AND stan = ${p(original.stan)} AND transmission_date_time = ${p(original.transmissionDateTime)} AND acquirer_id = ${p(original.acquirerId)}
        AND mti IN (${parameters.list(sendingsOf(mti))}) AND expired_at IS NULL AND repeat_of IS NULL
      ORDER BY ${reversalTieBreak(parameters, info)} LIMIT 1`;
  });
  return (await statement.execute(tx)).rows[0];
}

/**
 * Whether a reversal's DE90 names a cooperative request still waiting for its answer, by the
 * identifiers its mark keeps: its STAN and DE7, its acquirer (or zeros), an MTI of its class (the
 * request, its repeat, or the advice a stand-in sent of it: 0100, 0101, 0120). The correlation's
 * choice above is the same rule in SQL.
 */
export function de90NamesRequest(original: NonNullable<MessageInfo['original']>, request: NonNullable<CoopPendingMark['request']>): boolean {
  const acquirer = de90NamesAcquirer(original.acquirerId, request.acquirerId);
  return original.stan === request.stan && original.transmissionDateTime === request.transmissionDateTime && acquirer && original.mti.slice(0, 2) === request.mti.slice(0, 2);
}
