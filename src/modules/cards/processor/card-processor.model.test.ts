import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../../test/harness.js';
import { expectLedgerClean } from '../../../../test/bank/fixtures.js';
import { authorize, balances, fundedCard, lifecycle, onParent, panOf, send } from '../../../../test/cards/card-network.js';
import { formatOriginalDataElements, formatReplacementAmounts } from '../network/index.js';
import { issuedCard } from '../../../../test/cards/fixtures.js';
import { fund } from '../../../../test/bank/fixtures.js';
import { modelRunOptions } from '../../../../test/support/model-runs.js';

let t: TestContext;
beforeAll(async () => {
  // The model sends several thousand requests a minute as one client: above the sandbox's rate limit, which is not what it tests.
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(async () => {
  await t.close();
});

const cents = (amount: string) => Math.round(Number(amount) * 100);

describe('concurrency', () => {
  it('50 concurrent authorizations of 1.00 on a wallet funded for 10.00 approve exactly 10 and never overspend', async () => {
    const card = await fundedCard(t, '10.00');
    const results = await Promise.all(Array.from({ length: 50 }, () => authorize(t, card.cardId, { amount: 1 })));
    expect(results.filter((result) => result.responseCode === '00')).toHaveLength(10);
    expect(results.filter((result) => result.responseCode === '51')).toHaveLength(40);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '0.00', RESERVED: '10.00' });
    await expectLedgerClean(t);
  });

  /** A figure of /metrics (0 when the series is not there yet). */
  async function metric(series: string): Promise<number> {
    const response = await t.request({ url: '/metrics', key: null });
    const line = String(response.body)
      .split('\n')
      .find((entry) => entry.startsWith(`${series} `));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  it('messages of different cards sent at once share transactions; cards on one wallet never share one, and the wallet is never overspent', async () => {
    const groupsBefore = await metric('openbaas_transaction_group_members_count{group="card-messages",result="committed"}');
    const deferredBefore = await metric('openbaas_transaction_group_deferred_total{group="card-messages"}');
    const alone = await Promise.all(Array.from({ length: 12 }, () => fundedCard(t, '10.00')));
    // Four cards on one wallet funded for 5.00: two authorizations of 2.00 fit, not four.
    const first = await issuedCard(t);
    const shared = [first.cardId, ...(await Promise.all([1, 2, 3].map(async () => (await issuedCard(t, t.clientA, { wallet: first.wallet })).cardId)))];
    await fund(t, first.wallet, '5.00');

    const results = await Promise.all([
      ...alone.map((card) => authorize(t, card.cardId, { amount: 1 })),
      ...shared.map((cardId) => authorize(t, cardId, { amount: 2 })),
    ]);
    expect(results.slice(0, 12).map((result) => result.responseCode)).toEqual(Array(12).fill('00'));
    expect(results.slice(12).map((result) => result.responseCode).sort()).toEqual(['00', '00', '51', '51']);
    for (const card of alone) expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '9.00', RESERVED: '1.00' });
    expect(await balances(t, first.wallet.walletId)).toMatchObject({ AVAILABLE: '1.00', RESERVED: '4.00' });

    // Some of them were written together, and the cards of the shared wallet left their group.
    expect(await metric('openbaas_transaction_group_members_count{group="card-messages",result="committed"}')).toBeGreaterThan(groupsBefore);
    expect(await metric('openbaas_transaction_group_deferred_total{group="card-messages"}')).toBeGreaterThan(deferredBefore);
    await expectLedgerClean(t);
  });
});

/**
 * The steps on authorization holds (purchases): their lifecycles are `open` (holding) or `posted`
 * (completed, or closed with something posted on them). A `refund` may credit a purchase beyond what
 * it posted: the lifecycle then nets a credit, and a `reverse` of it (nothing held) takes its last
 * refund back (docs/cards.md, the sandbox routes table).
 */
type HoldStep =
  | { kind: 'authorize'; amountCents: number }
  | { kind: 'increment' | 'advice' | 'complete' | 'reverse' | 'refund'; pick: number; amountCents: number }
  | { kind: 'expire'; pick: number };

/**
 * The steps of refunds (docs/cards.md, "Refund authorizations", "Reversals of refunds" and the table of
 * incoming messages): refund authorizations (0100, processing code 20) and their clearing (0220),
 * reversal and expiry; refunds credited at once (0200, processing code 20); refunds cleared (0220) on
 * any lifecycle of refunds; reversals (0420) of the refunds credited, full or partial, as often as
 * the steps ask (what is taken back of one refund never passes it).
 */
type RefundStep =
  | { kind: 'refundAuthorize' | 'financialRefund'; amountCents: number }
  | { kind: 'clearRefund'; pick: number; amountCents: number }
  | { kind: 'reverseRefundAuth' | 'expireRefundAuth'; pick: number }
  /**
   * `POST /v1/sandbox/card-transactions/:parentId/reversals` on a lifecycle with a refund credited
   * (a 0200 refund, a refund authorization whose refund cleared): it names the lifecycle's last
   * refund. `part` null sends no amount (all that is left); else the amount askedOf(part, left).
   */
  | { kind: 'reverseRefund'; pick: number; part: number | null }
  /**
   * An 0420 sent through `POST /v1/sandbox/iso8583`, built from a refund's request: DE90 names the
   * refund `named` % count of the lifecycle, or (null) nothing: then it names the refund that opened
   * a 0200 lifecycle (none on a refund authorization's). `part` null: no DE95; else DE95 keeps all
   * but askedOf(part, remaining).
   */
  | { kind: 'isoReverseRefund'; pick: number; named: number | null; part: number | null };

/**
 * The steps of the network's own messages on purchases, sent through `POST /v1/sandbox/iso8583`
 * (docs/cards.md, "Repeats and duplicates", the correlation rules and the table of incoming messages):
 * - `declineIncrement`: an incremental 0100 of a magic amount (990.05) on an open lifecycle:
 *   declined, a FAILED record on it, nothing moves (a reversal naming it may follow at once);
 * - `approveIncrement`: an incremental 0100 of at most 5.00 on an open lifecycle, approved when
 *   AVAILABLE covers it (a reversal naming it may follow at once: it releases that increment only);
 * - `standIn`: the network's stand-in approves a declined increment, or a declined first 0100,
 *   after all: an 0120 naming it by DE90 or sent under its own STAN, RRN and DE7 (with the
 *   lifecycle's DE63 or without), which sets the hold to the advised amount like any advice (a
 *   reversal naming what it approved may follow at once);
 * - `reverseNamed`: an 0420 naming by DE90 the lifecycle's first 0100, one of its approved
 *   increments or one of its declined increments (DE63 kept or not, DE95 keeping part or not): an
 *   approved increment releases what of it no reversal released yet (within what is held); a
 *   declined increment no advice approved undoes nothing; anything else undoes what the lifecycle
 *   holds, as a reversal does;
 * - `clear`: a 0220 naming a purchase's 0100 by DE90 under a STAN and RRN of its own (DE63 kept or
 *   not): it captures the hold, or, with none open, is posted (a second clearing of a split shipment);
 * - `reverseClearing`: an 0420 naming one clearing by DE90 (DE95 keeping part or not): what of that
 *   clearing no reversal took back yet is credited back, and nothing of the lifecycle's others;
 * - `purchase0200`: a single-message purchase (0200, `POST /v1/sandbox/cards/:cardId/financial`):
 *   posted at once, or declined 51 beyond AVAILABLE or for the magic amount 990.51 (a FAILED
 *   lifecycle the stand-in may approve);
 * - `standInPost`: the network's stand-in posts a declined 0200 after all: a 0220 naming it by DE90
 *   or sent under its identifiers (a force post on its lifecycle); the posting can then be named
 *   by either message, and is credited back once. Or (`ofApproved`) the stand-in's 0220 of an
 *   approved 0200, under its identifiers: only what it approved beyond what they posted together
 *   is posted, and the purchase with it is one posting under either name;
 * - `reverseWhole`: an 0420 without DE90 on a lifecycle opened by an approved 0200 (under its DE63):
 *   its open hold released, else its purchase (what of it is left) credited back, all or all but
 *   DE95's actual amount;
 * - `resend`: a message sent earlier by a step, sent again with the same STAN and RRN under its own
 *   MTI (a duplicate transmission: the stored answer, nothing written) or as the network's repeat
 *   (origin digit 1: a record of its own with the first answer); neither moves money.
 */
type NetworkStep =
  | { kind: 'declineIncrement'; pick: number; thenReverse: ThenReverse }
  | { kind: 'approveIncrement'; pick: number; amountCents: number; thenReverse: ThenReverse }
  | { kind: 'standIn'; pick: number; amountCents: number; byRef: boolean; underIdentifiers: boolean; thenReverse: ThenReverse }
  | { kind: 'reverseNamed'; named: number; byRef: boolean; part: number | null }
  | { kind: 'resend'; pick: number; repeat: boolean }
  | { kind: 'clear'; pick: number; amountCents: number; byRef: boolean }
  | { kind: 'reverseClearing'; pick: number; byRef: boolean; part: number | null }
  | { kind: 'purchase0200'; amountCents: number; magicDecline: boolean }
  | { kind: 'standInPost'; pick: number; amountCents: number; underIdentifiers: boolean; ofApproved: boolean }
  | { kind: 'reverseWhole'; pick: number; part: number | null };

/** A reversal that follows at once, naming the message the step sent or approved. */
type ThenReverse = { byRef: boolean; part: number | null } | null;

type Step = HoldStep | RefundStep | NetworkStep;

const holdKinds: ReadonlySet<Step['kind']> = new Set(['authorize', 'increment', 'advice', 'complete', 'reverse', 'refund', 'expire']);
const isHoldStep = (current: Step): current is HoldStep => holdKinds.has(current.kind);
const networkKinds: ReadonlySet<Step['kind']> = new Set(['declineIncrement', 'approveIncrement', 'standIn', 'reverseNamed', 'resend', 'clear', 'reverseClearing', 'purchase0200', 'standInPost', 'reverseWhole']);
const isNetworkStep = (current: Step): current is NetworkStep => networkKinds.has(current.kind);

const amountCents = fc.integer({ min: 1, max: 4000 });
const partOf = fc.option(fc.nat(), { nil: null, freq: 2 });
/** A reversal that follows a stand-in at once (half the time). */
const thenReverse = fc.option(fc.record({ byRef: fc.boolean(), part: partOf }), { nil: null });
/** The network's own steps on purchases (NetworkStep), each with its weight in a mix. */
const networkSteps = (weights: Record<NetworkStep['kind'], number>): fc.WeightedArbitrary<Step>[] => [
  { arbitrary: fc.record({ kind: fc.constant('declineIncrement' as const), pick: fc.nat(), thenReverse }), weight: weights.declineIncrement },
  { arbitrary: fc.record({ kind: fc.constant('approveIncrement' as const), pick: fc.nat(), amountCents: fc.integer({ min: 1, max: 500 }), thenReverse }), weight: weights.approveIncrement },
  { arbitrary: fc.record({ kind: fc.constant('standIn' as const), pick: fc.nat(), amountCents, byRef: fc.boolean(), underIdentifiers: fc.boolean(), thenReverse }), weight: weights.standIn },
  { arbitrary: fc.record({ kind: fc.constant('reverseNamed' as const), named: fc.nat(), byRef: fc.boolean(), part: partOf }), weight: weights.reverseNamed },
  { arbitrary: fc.record({ kind: fc.constant('resend' as const), pick: fc.nat(), repeat: fc.boolean() }), weight: weights.resend },
  { arbitrary: fc.record({ kind: fc.constant('clear' as const), pick: fc.nat(), amountCents, byRef: fc.boolean() }), weight: weights.clear },
  { arbitrary: fc.record({ kind: fc.constant('reverseClearing' as const), pick: fc.nat(), byRef: fc.boolean(), part: partOf }), weight: weights.reverseClearing },
  { arbitrary: fc.record({ kind: fc.constant('purchase0200' as const), amountCents, magicDecline: fc.boolean() }), weight: weights.purchase0200 },
  { arbitrary: fc.record({ kind: fc.constant('standInPost' as const), pick: fc.nat(), amountCents, underIdentifiers: fc.boolean(), ofApproved: fc.boolean() }), weight: weights.standInPost },
  { arbitrary: fc.record({ kind: fc.constant('reverseWhole' as const), pick: fc.nat(), part: partOf }), weight: weights.reverseWhole },
];

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('authorize' as const), amountCents }), weight: 3 },
  {
    arbitrary: fc.record({ kind: fc.constantFrom('increment' as const, 'advice' as const, 'complete' as const, 'reverse' as const, 'refund' as const), pick: fc.nat(), amountCents }),
    weight: 3,
  },
  // Refunds of purchases and reversals once more: a purchase refunded beyond what it posted, then reversed (its refunds taken back newest first).
  { arbitrary: fc.record({ kind: fc.constantFrom('reverse' as const, 'refund' as const), pick: fc.nat(), amountCents }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('expire' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constantFrom('refundAuthorize' as const, 'financialRefund' as const), amountCents }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('clearRefund' as const), pick: fc.nat(), amountCents }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('reverseRefund' as const), pick: fc.nat(), part: partOf }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('isoReverseRefund' as const), pick: fc.nat(), named: fc.option(fc.nat(), { nil: null, freq: 2 }), part: partOf }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constantFrom('reverseRefundAuth' as const, 'expireRefundAuth' as const), pick: fc.nat() }), weight: 2 },
  ...networkSteps({ declineIncrement: 2, approveIncrement: 1, standIn: 2, reverseNamed: 2, resend: 3, clear: 2, reverseClearing: 3, purchase0200: 2, standInPost: 2, reverseWhole: 2 }),
);

/**
 * What a partial reversal step asks to take back (cents) of `left`: mostly less than it (1 to
 * left - 1); each fourth draw, and whenever left is 0.01 or nothing, all of it or more (at least 0.01).
 */
const askedOf = (part: number, left: number) => (part % 4 === 3 || left <= 1 ? Math.max(left + (part % 3), 1) : 1 + (part % (left - 1)));

/** A refund credited on a lifecycle (0200 or 0220, processing code 20): what no reversal took back yet, and the request the sandbox sent for it (a reversal names it in DE90). */
interface CreditedRefund {
  leftCents: number;
  request: { mti: string; fields: Record<string, string> };
}

/**
 * A lifecycle of refunds in the model: opened by a refund authorization (0100) or by a refund
 * credited at once (0200); its status, what it announces (cents), the refunds credited on it, oldest
 * first. Nothing else is posted on it, so it nets (as a credit) what its refunds still credit.
 */
interface RefundLifecycle {
  opening: 'authorization' | 'refund';
  status: 'PENDING' | 'COMPLETED' | 'CANCELLED';
  pendingCents: number;
  refunds: CreditedRefund[];
  /** What reversals of the refund authorization withdrew from the announcement (REVERSAL_ADVICE DEBIT records that take no money). */
  withdrawnCents: number;
}

/** The refund a sandbox reversal names: the newest with something left, else the newest (undefined: none). */
const refundToReverse = (refunds: CreditedRefund[]): CreditedRefund | undefined => [...refunds].reverse().find((refund) => refund.leftCents > 0) ?? refunds[refunds.length - 1];
const creditOf = (refunds: RefundLifecycle) => refunds.refunds.reduce((sum, refund) => sum + refund.leftCents, 0);

/** A message as a step sent it (DE2 masked), with its answer: a later step names it in DE90 or sends it again. */
interface SentMessage {
  request: { mti: string; fields: Record<string, string> };
  responseCode: string;
  cardTransactionId: string | null;
}

/**
 * A purchase's lifecycle in the model: what is posted on it (cents; below zero when refunded beyond
 * it), its refunds, the 0100 that opened it, its declined increments (`stoodIn` once an
 * 0120 of the network approved one) and its clearings.
 */
interface Purchase {
  postedCents: number;
  /** Its refunds credited, oldest first. */
  refunds: CreditedRefund[];
  first: SentMessage['request'];
  declined: { request: SentMessage['request']; stoodIn: boolean }[];
  /** Its approved incremental 0100s, with what of each no reversal naming it released yet. */
  increments: { request: SentMessage['request']; leftCents: number }[];
  /**
   * Its postings, by the message a reversal names (a 0220, an approved 0200 that opened it; a posting
   * of the stand-in under both its names: the declined 0200 and the 0220), with what of each no
   * reversal naming it took back yet.
   */
  clearings: { request: SentMessage['request']; posting: { leftCents: number } }[];
  /** Its first message was declined (a FAILED lifecycle until the stand-in approves it). */
  firstDeclined: boolean;
  /** An approved 0200's: what it and the stand-in's 0220 under its identifiers posted together, once that 0220 came (one per purchase here). */
  approvedStoodIn?: { togetherCents: number };
}

/** DE90 (original data elements) of a sandbox reversal that names `refund`: its MTI and STAN first. */
const namesRefund = (request: { fields: Record<string, string> }, refund: CreditedRefund) => expect(request.fields['90']?.slice(0, 10)).toBe(`${refund.request.mti}${refund.request.fields['11']}`);
/** DE95 of a partial sandbox reversal: the actual amount (what stays), 12 digits of cents first. */
const keeps = (request: { fields: Record<string, string> }, stays: number | undefined) =>
  expect(request.fields['95']?.slice(0, 12)).toBe(stays === undefined ? undefined : String(stays).padStart(12, '0'));

/** An amount in cents as the API shows it in major units (0, not -0, when nothing). */
const major = (amountCents: number) => (amountCents === 0 ? 0 : amountCents / 100);
/** A lifecycle's postedAmount when `creditedCents` are credited on it (a credit posts negative). */
const postedCredit = (creditedCents: number) => major(-creditedCents);

const pickOf = <T>(items: readonly T[], pick: number): T | undefined => (items.length > 0 ? items[pick % items.length] : undefined);

/** The repeat MTI of a message (origin digit 1: 0100 → 0101, 0420 → 0421). */
const repeatMtiOf = (mti: string) => `${mti.slice(0, 3)}1`;

/** STANs of the messages the model sends itself (the sandbox routes draw theirs at random). */
let stans = 0;
const nextStan = () => String(700_000 + (stans++ % 100_000)).padStart(6, '0');

/** What the network steps did over one test's runs (a step that finds nothing to name does nothing). */
const exercisedNone = () => ({ standIn: 0, reversedDeclined: 0, reversedStoodIn: 0, reversedFirst: 0, reversedIncrement: 0, resent: 0, repeated: 0, clearingsReversed: 0, standInPosts: 0, reversedWhole: 0 });
type Exercised = ReturnType<typeof exercisedNone>;

/**
 * The model: random sequences of `stepArbitrary` on one card, the wallet's balances and the
 * lifecycles checked after every step. A wallet funded with 100.00, or with 20.00 so that declines
 * and overdrafts (force posts, reversals of refunds) come often.
 */
const modelProperty = (stepArbitrary: fc.Arbitrary<Step>, exercised: Exercised, maxLength = 20) =>
      fc.asyncProperty(fc.constantFrom(10_000, 2_000), fc.boolean(), fc.array(stepArbitrary, { minLength: 1, maxLength, size: 'max' }), async (fundedCents, zerosInDe90, steps) => {
        const card = await fundedCard(t, (fundedCents / 100).toFixed(2));
        let pan: string | undefined;
        // The model: AVAILABLE and RESERVED in cents (AVAILABLE may go below zero: force posts and
        // reversals of refunds are forced), and what each open lifecycle holds.
        let available = fundedCents;
        let reserved = 0;
        const open = new Map<string, number>();
        // Lifecycles open with nothing held (an advice that could reserve nothing): a full reversal naming their first message closes them.
        const waiting = new Set<string>();
        const posted: string[] = [];
        const purchases = new Map<string, Purchase>();
        // Lifecycles of refunds: opened by a refund authorization (0100), or by a refund credited at once (0200).
        const refundLifecycles = new Map<string, RefundLifecycle>();
        const expectLifecycle = async (parentId: string, expected: Record<string, unknown>) => {
          const actual = await lifecycle(t, parentId);
          expect(actual).toMatchObject(expected);
          return actual;
        };
        // Every message a step sent (not the resent ones), for `resend`.
        const sent: SentMessage[] = [];
        const remembered = <T extends { iso: { request: SentMessage['request'] }; responseCode: string; cardTransactionId: string | null }>(result: T): T => {
          sent.push({ request: result.iso.request, responseCode: result.responseCode, cardTransactionId: result.cardTransactionId });
          return result;
        };
        /** Sends a message built from an earlier request through `POST /v1/sandbox/iso8583` (the card's number in DE2). */
        const sendIso = async (fields: Record<string, string>): Promise<{ response: Record<string, string>; cardTransactionId: string | null }> => {
          pan ??= await panOf(t, card.cardId);
          const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...fields, '2': pan } } });
          expect(response.status).toBe(200);
          return response.body.data;
        };
        const recordOf = async (id: string | null) => {
          if (id === null) throw new Error('the message wrote no record');
          const response = await t.request({ url: `/v1/cards/transactions/${id}` });
          expect(response.status).toBe(200);
          return response.body.data as Record<string, unknown>;
        };
        /**
         * DE90 naming an earlier request by its MTI, STAN, DE7 and acquirer; in half the runs the
         * network sends the acquirer as zeros (it names no acquirer: the message's RRN, then its own
         * acquirer, rank the candidates, and the model expects the same outcome).
         */
        const acquirerNamed = (acquirerId: string | undefined) => (zerosInDe90 ? '00000000000' : acquirerId);
        const naming = (request: SentMessage['request']) =>
          formatOriginalDataElements({ mti: request.mti, stan: request.fields['11'], transmissionDateTime: request.fields['7'], acquirerId: acquirerNamed(request.fields['32']) });
        /** An earlier request's fields without what names or trims (DE90, DE95), and without DE63 unless `byRef`. */
        const fieldsOf = (request: SentMessage['request'], byRef: boolean) => {
          const { '90': _named, '95': _kept, '63': reference, ...fields } = request.fields;
          return byRef && reference !== undefined ? { ...fields, '63': reference } : fields;
        };
        const purchaseOf = (parentId: string): Purchase => {
          const purchase = purchases.get(parentId);
          if (purchase === undefined) throw new Error(`the model does not know the purchase ${parentId}`);
          return purchase;
        };

        /**
         * A reversal of a refund answered: `taken` (cents) of `refund` taken back (forced: AVAILABLE may
         * go below zero), the record a REVERSAL_ADVICE operation DEBIT, CANCELLED when the lifecycle
         * nets 0 after it, else COMPLETED, and so is the lifecycle; nothing left to take: amount 0,
         * CANCELLED, the lifecycle as it was.
         */
        const tookBack = async (parentId: string, refunds: RefundLifecycle, refund: CreditedRefund | undefined, record: unknown, taken: number) => {
          const credit = creditOf(refunds) - taken;
          if (taken > 0) {
            expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: credit === 0 ? 'CANCELLED' : 'COMPLETED', amount: taken / 100 });
            if (refund === undefined) throw new Error('the model took back a refund it does not know');
            available -= taken;
            refund.leftCents -= taken;
            refunds.status = credit === 0 ? 'CANCELLED' : 'COMPLETED';
          } else {
            expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 0 });
          }
          await expectLifecycle(parentId, { status: refunds.status, heldAmount: 0, postedAmount: postedCredit(credit), pendingRefundAmount: 0 });
        };

        /** A step of refunds: sends its message (when it has a lifecycle to name), checks the answer and the lifecycle, and moves the model. */
        const refundStep = async (current: RefundStep) => {
          const authorizations = () => [...refundLifecycles].filter(([, refunds]) => refunds.opening === 'authorization');
          const credited = () => [...refundLifecycles].filter(([, refunds]) => refunds.refunds.length > 0);
          if (current.kind === 'refundAuthorize') {
            // 0100 processing code 20: approved, nothing held or credited, a PENDING lifecycle of its own announcing the amount.
            const result = remembered(await authorize(t, card.cardId, { amount: current.amountCents / 100, processingCode: '200000' }));
            expect(result.responseCode).toBe('00');
            expect(result.record).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'PENDING', heldAmount: 0 });
            const parentId = result.parentCardTransactionId as string;
            expect(refundLifecycles.has(parentId) || open.has(parentId) || purchases.has(parentId)).toBe(false);
            refundLifecycles.set(parentId, { opening: 'authorization', status: 'PENDING', pendingCents: current.amountCents, refunds: [], withdrawnCents: 0 });
            await expectLifecycle(parentId, { status: 'PENDING', heldAmount: 0, postedAmount: 0, pendingRefundAmount: current.amountCents / 100 });
          } else if (current.kind === 'financialRefund') {
            // 0200 processing code 20: credited at once, on a COMPLETED lifecycle of its own.
            const result = remembered(await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: current.amountCents / 100, processingCode: '200000' }));
            expect(result.responseCode).toBe('00');
            expect(result.record).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'COMPLETED', amount: current.amountCents / 100 });
            const parentId = result.parentCardTransactionId as string;
            expect(refundLifecycles.has(parentId) || open.has(parentId) || purchases.has(parentId)).toBe(false);
            available += current.amountCents;
            refundLifecycles.set(parentId, { opening: 'refund', status: 'COMPLETED', pendingCents: 0, refunds: [{ leftCents: current.amountCents, request: result.iso.request }], withdrawnCents: 0 });
            await expectLifecycle(parentId, { status: 'COMPLETED', heldAmount: 0, postedAmount: postedCredit(current.amountCents) });
          } else if (current.kind === 'clearRefund') {
            // A refund clears (0220 processing code 20) on any lifecycle of refunds: a refund authorization's
            // (pending, reversed, expired or cleared already; its refund reversed or not) or a 0200 refund's.
            // It credits what it clears; the lifecycle is COMPLETED, nothing announced any more.
            const picked = pickOf([...refundLifecycles], current.pick);
            if (picked === undefined) return;
            const [parentId, refunds] = picked;
            const result = remembered(await onParent(t, parentId, 'refunds', { amount: current.amountCents / 100 }));
            expect(result.responseCode).toBe('00');
            expect(result.record).toMatchObject({ type: 'REFUND', operation: 'CREDIT', status: 'COMPLETED', amount: current.amountCents / 100, parentCardTransactionId: parentId });
            available += current.amountCents;
            refunds.status = 'COMPLETED';
            refunds.pendingCents = 0;
            refunds.refunds.push({ leftCents: current.amountCents, request: result.iso.request });
            await expectLifecycle(parentId, { status: 'COMPLETED', heldAmount: 0, postedAmount: postedCredit(creditOf(refunds)), pendingRefundAmount: 0 });
          } else if (current.kind === 'reverseRefundAuth') {
            // A reversal (0420) of a refund authorization whose refund has not cleared: nothing moves, CANCELLED.
            const picked = pickOf(
              authorizations().filter(([, refunds]) => refunds.status === 'PENDING'),
              current.pick,
            );
            if (picked === undefined) return;
            const [parentId, refunds] = picked;
            const result = remembered(await onParent(t, parentId, 'reversals'));
            expect(result.responseCode).toBe('00');
            expect(result.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', status: 'CANCELLED', amount: refunds.pendingCents / 100 });
            refunds.status = 'CANCELLED';
            refunds.withdrawnCents += refunds.pendingCents;
            refunds.pendingCents = 0;
            await expectLifecycle(parentId, { status: 'CANCELLED', heldAmount: 0, postedAmount: 0, pendingRefundAmount: 0 });
          } else if (current.kind === 'expireRefundAuth') {
            // Expiry of a refund authorization: nothing moves, CANCELLED with expiredAt; 409 when it is not PENDING any more.
            const picked = pickOf(authorizations(), current.pick);
            if (picked === undefined) return;
            const [parentId, refunds] = picked;
            const response = await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${parentId}/expire` });
            if (refunds.status === 'PENDING') {
              expect(response.status).toBe(200);
              expect(response.body.data).toMatchObject({ type: 'REFUND', status: 'CANCELLED', amount: refunds.pendingCents / 100 });
              refunds.status = 'CANCELLED';
              refunds.pendingCents = 0;
              const after = await expectLifecycle(parentId, { status: 'CANCELLED', heldAmount: 0, postedAmount: 0, pendingRefundAmount: 0 });
              expect(after.expiredAt).not.toBeNull();
            } else {
              expect(response.status).toBe(409);
              await expectLifecycle(parentId, { status: refunds.status, postedAmount: postedCredit(creditOf(refunds)), pendingRefundAmount: 0 });
            }
          } else if (current.kind === 'reverseRefund') {
            // The sandbox reversal of a lifecycle with a refund credited names its newest refund with something left (DE90) and takes
            // back what no reversal took back yet, or the amount given when it is smaller (DE95 keeping the
            // rest); sent again when nothing is left, it takes nothing.
            const picked = pickOf(credited(), current.pick);
            if (picked === undefined) return;
            const [parentId, refunds] = picked;
            const last = refundToReverse(refunds.refunds);
            if (last === undefined) return;
            const asked = current.part === null ? undefined : askedOf(current.part, last.leftCents);
            const result = remembered(await onParent(t, parentId, 'reversals', asked === undefined ? {} : { amount: asked / 100 }));
            expect(result.responseCode).toBe('00');
            // Naming that refund while the lifecycle nets a credit; DE95 keeping what stays of it when the amount is smaller.
            if (creditOf(refunds) > 0) namesRefund(result.iso.request, last);
            keeps(result.iso.request, asked !== undefined && asked < last.leftCents ? last.leftCents - asked : undefined);
            await tookBack(parentId, refunds, last, result.record, Math.min(asked ?? last.leftCents, last.leftCents));
          } else if (current.kind === 'isoReverseRefund') {
            // An 0420 of the network (POST /v1/sandbox/iso8583). DE90 names a refund of the lifecycle: what is
            // left of it is taken back. Without DE90, the refund that opened a 0200 lifecycle (what is left of
            // it, never more than the lifecycle still credits); a refund authorization's lifecycle opened with
            // an 0100: nothing. DE95 keeps part (its actual amount, when below what would be taken back).
            const picked = pickOf(credited(), current.pick);
            if (picked === undefined) return;
            const [parentId, refunds] = picked;
            const refund = current.named === null ? (refunds.opening === 'refund' ? refunds.refunds[0] : undefined) : refunds.refunds[current.named % refunds.refunds.length];
            const source = refund ?? refunds.refunds[0];
            if (source === undefined) return;
            const remaining = refund === undefined ? 0 : current.named === null ? Math.min(refund.leftCents, creditOf(refunds)) : refund.leftCents;
            const asked = current.part === null ? undefined : askedOf(current.part, remaining);
            const actual = asked === undefined ? undefined : asked < remaining ? remaining - asked : undefined;
            pan ??= await panOf(t, card.cardId);
            const { '90': _named, ...fields } = source.request.fields;
            const message = {
              ...fields,
              '0': '0420',
              '2': pan,
              '11': nextStan(),
              ...(current.named === null ? {} : { '90': formatOriginalDataElements({ mti: source.request.mti, stan: fields['11'], transmissionDateTime: fields['7'], acquirerId: acquirerNamed(fields['32']) }) }),
              ...(actual === undefined ? {} : { '95': formatReplacementAmounts({ actualTransactionMinor: BigInt(actual) }) }),
            };
            const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
            expect(response.status).toBe(200);
            expect(response.body.data.response['39']).toBe('00');
            const record = await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}` });
            expect(record.body.data.parentCardTransactionId).toBe(parentId);
            await tookBack(parentId, refunds, refund, record.body.data, Math.min(asked ?? remaining, remaining));
          }
        };

        /**
         * An 0420 built from an earlier request (DE63 kept when `byRef`), under a STAN of its own, naming
         * the request by DE90 when `named`, DE4 `amountCents` when given, DE95 keeping all but `asked` of
         * `total` when `asked` is less: sent, remembered, answered 00. Answers its record.
         */
        const sendReversal = async (
          request: SentMessage['request'],
          how: { byRef: boolean; named: boolean; asked: number; total: number; amountCents?: number },
        ): Promise<Record<string, unknown>> => {
          const fields = {
            ...fieldsOf(request, how.byRef),
            '0': '0420',
            '11': nextStan(),
            ...(how.amountCents === undefined ? {} : { '4': String(how.amountCents).padStart(12, '0') }),
            ...(how.named ? { '90': naming(request) } : {}),
            ...(how.asked < how.total ? { '95': formatReplacementAmounts({ actualTransactionMinor: BigInt(how.total - how.asked) }) } : {}),
          };
          const answer = await sendIso(fields);
          expect(answer.response['39']).toBe('00');
          sent.push({ request: { mti: '0420', fields }, responseCode: '00', cardTransactionId: answer.cardTransactionId });
          return recordOf(answer.cardTransactionId);
        };

        /**
         * An 0420 naming `named.request` of the lifecycle `named.parentId` by DE90 (DE63 kept when `byRef`,
         * DE95 keeping all but askedOf(part, held) when `part` is given). A declined increment no advice
         * approved undoes nothing; anything else undoes what the lifecycle holds. A lifecycle open with
         * nothing held (an advice that could reserve nothing) is closed by a full reversal.
         */
        const reverseNaming = async (
          named: { parentId: string; request: SentMessage['request']; undoes: boolean; increment?: { leftCents: number } },
          how: { byRef: boolean; part: number | null },
        ) => {
          const target = named.parentId;
          const held = open.get(target) ?? 0;
          const purchase = purchaseOf(target);
          // An approved increment named: what of it no reversal released yet, all or all but DE95's
          // actual amount (the increment's), then never more than is held.
          const total = named.increment === undefined ? held : named.increment.leftCents;
          const asked = how.part === null ? total : askedOf(how.part, total);
          const record = await sendReversal(named.request, { byRef: how.byRef, named: true, asked, total });
          // A declined message the stand-in approved (an increment, or the lifecycle's first message), the first 0100, an approved increment, a declined increment.
          if (named.undoes && purchase.declined.some((entry) => entry.request === named.request)) exercised.reversedStoodIn++;
          else if (named.request === purchase.first) exercised.reversedFirst++;
          else if (named.increment !== undefined) exercised.reversedIncrement++;
          else exercised.reversedDeclined++;
          if (!named.undoes) {
            // A declined increment no advice approved: nothing to undo, the lifecycle as it was.
            expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', status: 'CANCELLED', amount: 0, parentCardTransactionId: target });
            return;
          }
          const reversed = Math.min(asked, total, held);
          expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: reversed / 100, parentCardTransactionId: target });
          if (named.increment !== undefined) {
            // Nothing left of it: recorded, the hold as it was. What was asked of it is gone from it, held or not.
            named.increment.leftCents -= Math.min(asked, total);
            if (reversed === 0) return;
          }
          available += reversed;
          reserved -= reversed;
          if (reversed === held) {
            open.delete(target);
            waiting.delete(target);
            if (purchase.postedCents !== 0 && !posted.includes(target)) posted.push(target);
            // Nothing held any more: the lifecycle is closed (COMPLETED when something is posted on it).
            expect((await lifecycle(t, target)).status).not.toBe('PENDING');
          } else open.set(target, held - reversed);
        };

        /** The network's own messages on purchases: declined increments, stand-in advices, reversals naming a message, messages sent again. */
        const networkStep = async (current: NetworkStep) => {
          if (current.kind === 'declineIncrement') {
            const target = pickOf([...open.keys()], current.pick);
            if (target === undefined) return;
            const result = remembered(await onParent(t, target, 'increments', { amount: 990.05 }));
            expect(result.responseCode).toBe('05');
            expect(result.record).toMatchObject({ status: 'FAILED', parentCardTransactionId: target });
            purchaseOf(target).declined.push({ request: result.iso.request, stoodIn: false });
            // A reversal naming it at once: nothing to undo.
            if (current.thenReverse !== null) await reverseNaming({ parentId: target, request: result.iso.request, undoes: false }, current.thenReverse);
          } else if (current.kind === 'approveIncrement') {
            const target = pickOf([...open.keys()], current.pick);
            if (target === undefined) return;
            const held = open.get(target) ?? 0;
            const purchase = purchaseOf(target);
            const result = remembered(await onParent(t, target, 'increments', { amount: current.amountCents / 100 }));
            const approved = current.amountCents <= available;
            expect(result.responseCode).toBe(approved ? '00' : '51');
            if (!approved) return;
            available -= current.amountCents;
            reserved += current.amountCents;
            open.set(target, held + current.amountCents);
            const increment = { request: result.iso.request, leftCents: current.amountCents };
            purchase.increments.push(increment);
            if (current.thenReverse !== null) await reverseNaming({ parentId: target, request: increment.request, undoes: true, increment }, current.thenReverse);
          } else if (current.kind === 'standIn') {
            // An 0120 naming the declined increment by DE90: the hold is set to the advised amount (what AVAILABLE can still reserve, above it).
            const declined = [...purchases].flatMap(([parentId, purchase]) => purchase.declined.filter((entry) => !entry.stoodIn).map((entry) => ({ parentId, entry })));
            const picked = pickOf(declined, current.pick);
            if (picked === undefined) return;
            const { parentId, entry } = picked;
            // Naming it by DE90 under a STAN of its own, or sent under its identifiers (its STAN, RRN and DE7).
            const fields = {
              ...fieldsOf(entry.request, current.byRef),
              '0': '0120',
              '4': String(current.amountCents).padStart(12, '0'),
              ...(current.underIdentifiers ? {} : { '11': nextStan(), '90': naming(entry.request) }),
            };
            const answer = await sendIso(fields);
            expect(answer.response['39']).toBe('00');
            expect(await recordOf(answer.cardTransactionId)).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'PENDING', parentCardTransactionId: parentId });
            sent.push({ request: { mti: '0120', fields }, responseCode: '00', cardTransactionId: answer.cardTransactionId });
            entry.stoodIn = true;
            exercised.standIn++;
            const held = open.get(parentId);
            const change =
              held === undefined
                ? Math.min(current.amountCents, Math.max(available, 0))
                : current.amountCents > held
                  ? Math.min(current.amountCents - held, Math.max(available, 0))
                  : current.amountCents - held;
            available -= change;
            reserved += change;
            if (held !== undefined || change > 0) open.set(parentId, (held ?? 0) + change);
            // A hold placed again: the increments of the earlier one have nothing left to release.
            if (held === undefined && change > 0) for (const increment of purchaseOf(parentId).increments) increment.leftCents = 0;
            if (open.has(parentId)) waiting.delete(parentId);
            else waiting.add(parentId);
            // The network reverses what it stood in for, at once (naming the increment it approved).
            if (current.thenReverse !== null) await reverseNaming({ parentId, request: entry.request, undoes: true }, current.thenReverse);
          } else if (current.kind === 'reverseNamed') {
            // One of the messages of the open lifecycles: their first 0100s, their approved increments and their declined increments.
            const candidates = [...open.keys()].flatMap((parentId) => {
              const purchase = purchaseOf(parentId);
              return [
                { parentId, request: purchase.first, undoes: true },
                ...purchase.increments.map((increment) => ({ parentId, request: increment.request, undoes: true, increment })),
                ...purchase.declined.map((entry) => ({ parentId, request: entry.request, undoes: entry.stoodIn })),
              ];
            });
            const named = pickOf(candidates, current.named);
            if (named === undefined) return;
            await reverseNaming(named, current);
          } else if (current.kind === 'clear') {
            const target = pickOf([...new Set([...open.keys(), ...posted])], current.pick);
            if (target === undefined) return;
            const purchase = purchaseOf(target);
            const stan = nextStan();
            const fields = {
              ...fieldsOf(purchase.first, current.byRef),
              '0': '0220',
              '4': String(current.amountCents).padStart(12, '0'),
              '11': stan,
              '37': `9${stan}00000`,
              '90': naming(purchase.first),
            };
            const answer = await sendIso(fields);
            expect(answer.response['39']).toBe('00');
            expect(await recordOf(answer.cardTransactionId)).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', amount: current.amountCents / 100, parentCardTransactionId: target });
            sent.push({ request: { mti: '0220', fields }, responseCode: '00', cardTransactionId: answer.cardTransactionId });
            const held = open.get(target);
            if (held !== undefined) {
              reserved -= held;
              available += held;
              open.delete(target);
            }
            waiting.delete(target);
            available -= current.amountCents;
            purchase.postedCents += current.amountCents;
            purchase.clearings.push({ request: { mti: '0220', fields }, posting: { leftCents: current.amountCents } });
            if (!posted.includes(target)) posted.push(target);
          } else if (current.kind === 'reverseClearing') {
            const clearings = [...purchases].flatMap(([parentId, purchase]) => purchase.clearings.map((clearing) => ({ parentId, purchase, clearing })));
            const picked = pickOf(clearings, current.pick);
            if (picked === undefined) return;
            const { parentId, purchase, clearing } = picked;
            // Naming the lifecycle's first message while a hold is open releases the hold (reverseNamed's case), not a posting.
            if (clearing.request === purchase.first && open.has(parentId)) return;
            if (clearing.request === purchase.first && waiting.has(parentId)) {
              // Open with nothing held: a full reversal closes it, a partial one leaves it; nothing moves either way.
              const record = await sendReversal(clearing.request, { byRef: current.byRef, named: true, asked: 0, total: 0 });
              expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0, parentCardTransactionId: parentId });
              waiting.delete(parentId);
              expect((await lifecycle(t, parentId)).status).not.toBe('PENDING');
              return;
            }
            const left = clearing.posting.leftCents;
            const asked = current.part === null ? left : askedOf(current.part, left);
            const record = await sendReversal(clearing.request, { byRef: current.byRef, named: true, asked, total: left });
            // All of what is left of the clearing, or all but DE95's actual amount.
            const credited = Math.min(asked, left);
            expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: credited / 100, parentCardTransactionId: parentId, ...(credited > 0 ? { operation: 'CREDIT' } : {}) });
            exercised.clearingsReversed++;
            available += credited;
            clearing.posting.leftCents -= credited;
            purchase.postedCents -= credited;
            await expectLifecycle(parentId, { postedAmount: major(purchase.postedCents) });
          } else if (current.kind === 'purchase0200') {
            // Declined 51 beyond AVAILABLE, or by the sandbox's magic amount 990.51.
            const result = remembered(await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: current.magicDecline ? 990.51 : current.amountCents / 100 }));
            const parentId = result.parentCardTransactionId as string;
            const approved = !current.magicDecline && current.amountCents <= available;
            expect(result.responseCode).toBe(approved ? '00' : '51');
            expect(result.record).toMatchObject({ type: 'PURCHASE', status: approved ? 'COMPLETED' : 'FAILED' });
            purchases.set(parentId, {
              postedCents: approved ? current.amountCents : 0,
              refunds: [],
              first: result.iso.request,
              declined: approved ? [] : [{ request: result.iso.request, stoodIn: false }],
              increments: [],
              clearings: approved ? [{ request: result.iso.request, posting: { leftCents: current.amountCents } }] : [],
              firstDeclined: !approved,
            });
            if (approved) {
              available -= current.amountCents;
              posted.push(parentId);
            }
          } else if (current.kind === 'standInPost' && current.ofApproved) {
            // The stand-in's 0220 of an approved 0200, under its identifiers: what it approved beyond the purchase only.
            // (One an advice opened again, with a hold or with nothing it could reserve, is a completion's: left out.)
            const approved0200 = [...purchases].filter(
              ([parentId, purchase]) => !purchase.firstDeclined && purchase.first.mti === '0200' && purchase.approvedStoodIn === undefined && purchase.clearings.length > 0 && !open.has(parentId) && !waiting.has(parentId),
            );
            const picked = pickOf(approved0200, current.pick);
            if (picked === undefined) return;
            const [parentId, purchase] = picked;
            const clearing = purchase.clearings[0];
            if (clearing === undefined) return;
            // The purchase's amount (approved in full: the model's amounts stay below the magic ones).
            const together = Number(purchase.first.fields['4']);
            const extra = Math.max(0, current.amountCents - together);
            const fields = { ...fieldsOf(purchase.first, false), '0': '0220', '4': String(current.amountCents).padStart(12, '0') };
            const answer = await sendIso(fields);
            expect(answer.response['39']).toBe('00');
            expect(await recordOf(answer.cardTransactionId)).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', parentCardTransactionId: parentId, amount: major(extra), forcePost: extra > 0 });
            sent.push({ request: { mti: '0220', fields }, responseCode: '00', cardTransactionId: answer.cardTransactionId });
            exercised.standInPosts++;
            available -= extra;
            purchase.postedCents += extra;
            purchase.approvedStoodIn = { togetherCents: together + extra };
            // One posting, two names.
            clearing.posting.leftCents += extra;
            purchase.clearings.push({ request: { mti: '0220', fields }, posting: clearing.posting });
          } else if (current.kind === 'standInPost') {
            // A 0220 posting a declined 0200 (naming it by DE90, or under its identifiers): forced, on its lifecycle.
            const unposted = [...purchases].filter(([, purchase]) => purchase.firstDeclined && purchase.first.mti === '0200' && purchase.clearings.length === 0 && !purchase.declined.some((entry) => entry.stoodIn));
            const picked = pickOf(unposted, current.pick);
            if (picked === undefined) return;
            const [parentId, purchase] = picked;
            const stan = nextStan();
            const fields = {
              ...fieldsOf(purchase.first, false),
              '0': '0220',
              '4': String(current.amountCents).padStart(12, '0'),
              ...(current.underIdentifiers ? {} : { '11': stan, '37': `8${stan}00000`, '90': naming(purchase.first) }),
            };
            const answer = await sendIso(fields);
            expect(answer.response['39']).toBe('00');
            expect(await recordOf(answer.cardTransactionId)).toMatchObject({ type: 'PRE_AUTH_COMPLETION', status: 'COMPLETED', parentCardTransactionId: parentId, amount: current.amountCents / 100 });
            sent.push({ request: { mti: '0220', fields }, responseCode: '00', cardTransactionId: answer.cardTransactionId });
            exercised.standInPosts++;
            available -= current.amountCents;
            purchase.postedCents += current.amountCents;
            // One posting, two names: a reversal naming either takes from the same posting.
            const posting = { leftCents: current.amountCents };
            purchase.clearings.push({ request: purchase.first, posting }, { request: { mti: '0220', fields }, posting });
          } else if (current.kind === 'reverseWhole') {
            const picked = pickOf(
              [...purchases].filter(([, purchase]) => purchase.first.mti === '0200' && !purchase.firstDeclined),
              current.pick,
            );
            if (picked === undefined) return;
            const [parentId, purchase] = picked;
            if (waiting.has(parentId)) {
              const record = await sendReversal(purchase.first, { byRef: true, named: false, asked: 0, total: 0 });
              expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0, parentCardTransactionId: parentId });
              waiting.delete(parentId);
              expect((await lifecycle(t, parentId)).status).not.toBe('PENDING');
              return;
            }
            // Open: its hold is undone; else its purchase (what of it is left).
            const held = open.get(parentId);
            const opening = purchase.clearings[0]?.posting;
            if (opening === undefined) throw new Error('the model lost the purchase');
            const base = held ?? opening.leftCents;
            const asked = current.part === null ? base : askedOf(current.part, base);
            const record = await sendReversal(purchase.first, { byRef: true, named: false, asked, total: base, amountCents: Math.max(base, 1) });
            exercised.reversedWhole++;
            const undone = Math.min(asked, base);
            expect(record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: undone / 100, parentCardTransactionId: parentId });
            if (held !== undefined) {
              available += undone;
              reserved -= undone;
              if (undone === held) open.delete(parentId);
              else open.set(parentId, held - undone);
            } else {
              available += undone;
              opening.leftCents -= undone;
              purchase.postedCents -= undone;
            }
          } else {
            // Sent again under its own MTI: the stored answer and record, nothing written. As a repeat: the first answer on a record of its own.
            const earlier = pickOf(sent, current.pick);
            if (earlier === undefined) return;
            const answer = await sendIso({ ...earlier.request.fields, '0': current.repeat ? repeatMtiOf(earlier.request.mti) : earlier.request.mti });
            expect(answer.response['39']).toBe(earlier.responseCode);
            exercised[current.repeat ? 'repeated' : 'resent']++;
            if (!current.repeat) expect(answer.cardTransactionId).toBe(earlier.cardTransactionId);
            else if (earlier.cardTransactionId !== null) expect(await recordOf(answer.cardTransactionId)).toMatchObject({ repeatOfCardTransactionId: earlier.cardTransactionId });
          }
        };

        for (const current of steps) {
          // The lifecycle a step on holds names: an open one, or (each third pick, or when none is open) one with something posted.
          const lifecycles = [...open.keys()];
          const pick = isHoldStep(current) && current.kind !== 'authorize' ? current.pick : undefined;
          const onPosted = pick !== undefined && posted.length > 0 && (lifecycles.length === 0 || pick % 3 === 0);
          const target = pick === undefined ? undefined : onPosted ? posted[Math.floor(pick / 3) % posted.length] : lifecycles[pick % Math.max(lifecycles.length, 1)];
          /** A lifecycle closed with something posted on it (a refund too) may still be named by the steps that follow. */
          const closed = (parentId: string) => {
            if (purchaseOf(parentId).postedCents !== 0 && !posted.includes(parentId)) posted.push(parentId);
          };
          if (isNetworkStep(current)) {
            await networkStep(current);
          } else if (!isHoldStep(current)) {
            await refundStep(current);
          } else if (current.kind === 'authorize') {
            const result = remembered(await authorize(t, card.cardId, { amount: current.amountCents / 100 }));
            // Against AVAILABLE as it is: below zero (a force post, a reversed refund), every amount is declined.
            if (current.amountCents <= available) {
              expect(result.responseCode).toBe('00');
              available -= current.amountCents;
              reserved += current.amountCents;
              open.set(result.parentCardTransactionId, current.amountCents);
              purchases.set(result.parentCardTransactionId, { postedCents: 0, refunds: [], first: result.iso.request, declined: [], increments: [], clearings: [], firstDeclined: false });
            } else {
              expect(result.responseCode).toBe('51');
              // A FAILED lifecycle: the network's stand-in may still approve its 0100 (standIn).
              purchases.set(result.parentCardTransactionId, {
                postedCents: 0,
                refunds: [],
                first: result.iso.request,
                declined: [{ request: result.iso.request, stoodIn: false }],
                increments: [],
                clearings: [],
                firstDeclined: true,
              });
            }
          } else if (target !== undefined && current.kind === 'reverse' && !open.has(target) && purchaseOf(target).firstDeclined && purchaseOf(target).first.mti === '0200') {
            // The sandbox reversal of a declined 0200 the stand-in posted: its base is the lifecycle's posted amount while the
            // processor counts the stand-in's postings; not modelled here (reverseClearing names them).
          } else if (target !== undefined && current.kind !== 'expire') {
            const held = open.get(target);
            const purchase = purchaseOf(target);
            const result = remembered(await onParent(t, target, current.kind === 'complete' ? 'completions' : current.kind === 'reverse' ? 'reversals' : `${current.kind}s`, {
              amount: current.amountCents / 100,
            }));
            if (current.kind === 'refund') {
              available += current.amountCents;
              purchase.postedCents -= current.amountCents;
              purchase.refunds.push({ leftCents: current.amountCents, request: result.iso.request });
            } else if (held === undefined) {
              // No open hold: a completion is a force post; increments/advices open nothing here; a reversal of a
              // lifecycle that nets a credit takes its newest refund with something left back (forced, never more than is left of it:
              // the amount given, or less), any other moves nothing.
              if (current.kind === 'complete') {
                available -= current.amountCents;
                purchase.postedCents += current.amountCents;
                purchase.clearings.push({ request: result.iso.request, posting: { leftCents: current.amountCents } });
                waiting.delete(target);
              }
              if (current.kind === 'advice') {
                const reservable = Math.min(current.amountCents, Math.max(available, 0));
                available -= reservable;
                reserved += reservable;
                if (reservable > 0) open.set(result.parentCardTransactionId, reservable);
                // A hold placed again: the increments of the earlier one have nothing left to release.
                if (reservable > 0) for (const increment of purchase.increments) increment.leftCents = 0;
                if (reservable > 0) waiting.delete(target);
                else waiting.add(target);
              }
              if (current.kind === 'increment' && result.responseCode === '00') throw new Error('an increment without an open hold opened one');
              if (current.kind === 'reverse' && waiting.has(target) && purchase.postedCents >= 0) {
                // Open with nothing held: DE90 names its first message; nothing moves, and a full reversal closes it.
                expect(result.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0 });
                if ((await lifecycle(t, target)).status !== 'PENDING') waiting.delete(target);
              } else if (current.kind === 'reverse' && purchase.first.mti === '0200' && purchase.postedCents > 0) {
                // A 0200 purchase: DE90 names it; what of it is left comes back (the amount given, when less).
                const opening = purchase.clearings[0]?.posting;
                if (opening === undefined) throw new Error('the model lost the purchase');
                const credited = Math.min(current.amountCents, opening.leftCents);
                expect(result.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: credited / 100, ...(credited > 0 ? { operation: 'CREDIT' } : {}) });
                available += credited;
                opening.leftCents -= credited;
                purchase.postedCents -= credited;
                await expectLifecycle(target, { heldAmount: 0, postedAmount: major(purchase.postedCents) });
              } else if (current.kind === 'reverse') {
                const last = purchase.postedCents < 0 ? refundToReverse(purchase.refunds) : undefined;
                const taken = last === undefined ? 0 : Math.min(current.amountCents, last.leftCents);
                expect(result.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: taken / 100, ...(taken > 0 ? { operation: 'DEBIT' } : {}) });
                if (last !== undefined) {
                  namesRefund(result.iso.request, last);
                  keeps(result.iso.request, current.amountCents < last.leftCents ? last.leftCents - current.amountCents : undefined);
                  available -= taken;
                  purchase.postedCents += taken;
                  last.leftCents -= taken;
                  await expectLifecycle(target, { heldAmount: 0, postedAmount: major(purchase.postedCents) });
                }
              }
            } else if (current.kind === 'increment') {
              if (current.amountCents <= available) {
                available -= current.amountCents;
                reserved += current.amountCents;
                open.set(target, held + current.amountCents);
                purchase.increments.push({ request: result.iso.request, leftCents: current.amountCents });
              }
            } else if (current.kind === 'advice') {
              const change = current.amountCents > held ? Math.min(current.amountCents - held, Math.max(available, 0)) : current.amountCents - held;
              available -= change;
              reserved += change;
              open.set(target, held + change);
            } else if (current.kind === 'complete') {
              reserved -= held;
              available -= current.amountCents - held;
              purchase.postedCents += current.amountCents;
              purchase.clearings.push({ request: result.iso.request, posting: { leftCents: current.amountCents } });
              open.delete(target);
              posted.push(target);
            } else {
              const reversed = current.amountCents < held ? current.amountCents : held;
              available += reversed;
              reserved -= reversed;
              if (reversed === held) {
                open.delete(target);
                closed(target);
              } else open.set(target, held - reversed);
            }
          } else if (current.kind === 'expire' && target !== undefined && open.has(target)) {
            await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${target}/expire` });
            const held = open.get(target) ?? 0;
            available += held;
            reserved -= held;
            open.delete(target);
            closed(target);
          }
          const actual = await balances(t, card.walletId);
          expect({ available: cents(actual.AVAILABLE), reserved: cents(actual.RESERVED) }).toEqual({ available, reserved });
        }

        // What the reversals of each lifecycle of refunds took back, added up, never passes what its refunds credited.
        for (const [parentId, refunds] of refundLifecycles) {
          const actual = await expectLifecycle(parentId, { status: refunds.status, postedAmount: postedCredit(creditOf(refunds)) });
          // A repeat (a record of its own with the first answer) moves nothing: not counted.
          const children = (actual.children as { type: string; operation: string; status: string; amount: number; repeatOfCardTransactionId: string | null }[]).filter(
            (child) => child.repeatOfCardTransactionId === null,
          );
          const sum = (kept: (child: (typeof children)[number]) => boolean) => children.filter(kept).reduce((total, child) => total + cents(String(child.amount)), 0);
          const credits = sum((child) => child.type === 'REFUND' && child.status === 'COMPLETED');
          const takenBack = sum((child) => child.type === 'REVERSAL_ADVICE' && child.operation === 'DEBIT') - refunds.withdrawnCents;
          expect(takenBack).toBeLessThanOrEqual(credits);
          expect(credits - takenBack).toBe(creditOf(refunds));
        }
      });

const modelOptions = modelRunOptions<[number, boolean, Step[]]>('model test', 60);

/** Purchases and the network's own messages on them: declined increments, stand-in advices, reversals naming a message, messages sent again. */
const networkMix: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('authorize' as const), amountCents }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constantFrom('increment' as const, 'advice' as const, 'complete' as const, 'reverse' as const, 'refund' as const), pick: fc.nat(), amountCents }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('expire' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('financialRefund' as const), amountCents }), weight: 1 },
  ...networkSteps({ declineIncrement: 3, approveIncrement: 2, standIn: 3, reverseNamed: 3, resend: 3, clear: 2, reverseClearing: 3, purchase0200: 3, standInPost: 4, reverseWhole: 2 }),
);

/**
 * One sequence of the network mix that meets every kind its tally counts, run before the random
 * ones (on a wallet of 100.00, DE90 without zeros), as the cooperative model test does: the tally
 * over random runs alone is a matter of chance. A purchase of 10.00; a declined increment reversed
 * at once; another the stand-in approves, reversed in part at once; an approved increment reversed
 * in part at once; the first 0100 reversed in part; a message sent again and repeated; a clearing,
 * reversed; a declined 0200 the stand-in posts; an approved 0200 reversed whole.
 */
const everyNetworkKind: Step[] = [
  { kind: 'authorize', amountCents: 1000 },
  { kind: 'declineIncrement', pick: 0, thenReverse: { byRef: true, part: null } },
  { kind: 'declineIncrement', pick: 0, thenReverse: null },
  { kind: 'standIn', pick: 0, amountCents: 1500, byRef: true, underIdentifiers: false, thenReverse: { byRef: true, part: 1 } },
  { kind: 'approveIncrement', pick: 0, amountCents: 100, thenReverse: { byRef: false, part: 1 } },
  { kind: 'reverseNamed', named: 0, byRef: true, part: 1 },
  { kind: 'resend', pick: 0, repeat: false },
  { kind: 'resend', pick: 0, repeat: true },
  { kind: 'clear', pick: 0, amountCents: 500, byRef: true },
  { kind: 'reverseClearing', pick: 0, byRef: true, part: null },
  { kind: 'purchase0200', amountCents: 300, magicDecline: true },
  { kind: 'standInPost', pick: 0, amountCents: 300, underIdentifiers: false, ofApproved: false },
  { kind: 'purchase0200', amountCents: 400, magicDecline: false },
  { kind: 'reverseWhole', pick: 0, part: null },
];

describe('model', () => {
  it('random message sequences agree with a model of holds and balances', async () => {
    await fc.assert(modelProperty(step, exercisedNone()), modelOptions);
    await expectLedgerClean(t);
  }, 600_000);

  it("the network's own messages on purchases (declined increments, stand-in advices, reversals naming a message by DE90, messages sent again) agree with the model", async () => {
    const exercised = exercisedNone();
    // Longer sequences and more runs: its cases need several steps in a row (a purchase, a decline, the stand-in, the reversal).
    await fc.assert(modelProperty(networkMix, exercised, 30), { ...modelRunOptions<[number, boolean, Step[]]>('model test', 100), examples: [[10_000, false, everyNetworkKind]] });
    for (const [kind, count] of Object.entries(exercised)) expect(count, kind).toBeGreaterThan(0);
    await expectLedgerClean(t);
  }, 600_000);
});
