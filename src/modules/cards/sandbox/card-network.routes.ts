import { sql } from 'kysely';
import { Type, type Static, type TSchema } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import { writeBatchSizing, type Deps } from '../../../platform/deps.js';
import type { Tx } from '../../../platform/db/transaction.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { AppError, notFound, validationError } from '../../../platform/http/errors.js';
import { runPausableWrite, runWrite } from '../../../platform/http/idempotency.js';
import type { Metrics } from '../../../platform/http/metrics.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isUuid } from '../../../platform/ids.js';
import { GroupsInFlight, TransactionGroups } from '../../../platform/db/transaction-groups.js';
import { cardVaultOf } from '../card-vault.js';
import { packedLengthMax, parseKeyedIsoMessage, toKeyedIsoMessage, unpackIsoMessage, type IsoMessage } from '../network/index.js';
import { CardTransactionSchema, majorUnits, numericOfCurrency, toBigInt, type CardSwipeRow } from '../processor/card-transaction-views.js';
import { decidedHeld, expireSwipe, finishCoopDecision, isAwaitFirstStep, isCoopDecisionStep, processCardMessage, answerRepeatOfUnanswered, type CardMessageOutcome } from '../processor/processor.js';
import { firstPostingLeft, refundTakenBack } from '../processor/lifecycle-records.js';
import type { PendingCoopDecision } from '../processor/coop-auth.js';
import { callCoopClient, waitForRecord, type ClientCall } from '../processor/coop-client.js';
import { lockCardWithProgram, type LockedCard } from '../processor/processor-reads.js';
import { withUnusedStan } from './sandbox-stan.js';
import { amountMinorOf, buildSandboxMessage, newNetworkDataRef, sandboxCurrencies, type CardOfMessage, type MessageOptions } from './sandbox-messages.js';
import { jsonBodyLimitBytes } from '../../../platform/http/validation.js';

const tags = ['Sandbox'];

/** A message to process, and the card it was built from when the route locked it (the processor takes it from there). */
interface BuiltMessage {
  message: IsoMessage;
  card?: LockedCard;
}

/** Between the two transactions of a card message: a decision request to send, or a repeat waiting for its first sending. */
type Paused = { decision: PendingCoopDecision } | { repeat: { message: IsoMessage; childId: string; waitMs: number } };

const Amount = (description: string) =>
  Type.Number({ exclusiveMinimum: 0, description: `${description}: a JSON number in major units, at most 2 decimals (a string is refused)`, examples: [25.5] });

const MerchantBody = Type.Object(
  {
    // Not only spaces: DE43's name would be blank (until 2026-12-04 taken; found by an audit).
    name: Type.String({ minLength: 1, maxLength: 23, pattern: '^[ -~]*[!-~][ -~]*$', description: 'printable ASCII (DE43 is ans), not only spaces; upper-cased in DE43' }),
    mcc: Type.String({ pattern: '^[0-9]{4}$', maxLength: 4 }),
    city: Type.String({ maxLength: 13, pattern: '^[ -~]*$', description: 'printable ASCII; upper-cased in DE43' }),
    state: Type.String({ maxLength: 2, pattern: '^([A-Z]{2})?$', description: 'two capital letters, or empty' }),
    country: Type.String({ maxLength: 2, pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, in capitals' }),
  },
  { additionalProperties: false, description: 'written into DE43 and DE18; text DE43 cannot carry is refused, not rewritten' },
);

const IsoBlock = Type.Object({
  request: Type.Object({ mti: Type.String(), fields: Type.Record(Type.String(), Type.String()) }, { description: 'the message sent, DE2 masked and card secrets removed' }),
  response: Type.Object({ mti: Type.String(), fields: Type.Record(Type.String(), Type.String()) }),
  packed: Type.String({ description: 'the response in the packed ASCII layout' }),
});

const SandboxCardResult = Type.Object(
  {
    cardTransactionId: Type.Union([Type.String(), Type.Null()]),
    parentCardTransactionId: Type.Union([Type.String(), Type.Null()]),
    responseCode: Type.String({ description: 'DE39' }),
    approvedAmount: Type.Number({ description: 'major units' }),
    authCode: Type.Union([Type.String(), Type.Null()]),
    decisionSource: Type.String(),
    stan: Type.String(),
    rrn: Type.String(),
    networkDataRef: Type.Union([Type.String(), Type.Null()]),
    replayed: Type.Boolean({ description: 'the message repeated an earlier one and got its first answer' }),
    record: Type.Union([CardTransactionSchema, Type.Null()]),
    iso: IsoBlock,
  },
  { title: 'SandboxCardMessageResult' },
);

const CardParams = Type.Object({ cardId: Text.id({ description: 'card id' }) });
const ParentParams = Type.Object({ parentId: Text.id({ description: 'parentCardTransactionId (or the id of any of its records)' }) });

const AuthorizationBody = Type.Object(
  {
    amount: Type.Number({ minimum: 0, description: 'the amount to authorize: a JSON number in major units, at most 2 decimals (a string is refused); 0 is an account verification', examples: [25.5] }),
    currency: Type.Optional(Type.Union(Object.keys(sandboxCurrencies).map((code) => Type.Literal(code)), { description: 'transaction currency (DE49), default USD; billed to the card 1:1 in the sandbox' })),
    merchant: Type.Optional(MerchantBody),
    posEntryMode: Type.Optional(Type.String({ pattern: '^[0-9]{3}$', maxLength: 3, description: 'DE22, default 071 (contactless)' })),
    partialApprovalCapable: Type.Optional(Type.Boolean({ description: 'whether the terminal takes a partial approval (default true)' })),
    processingCode: Type.Optional(Type.String({ pattern: '^[0-9]{6}$', maxLength: 6, description: 'DE3, default 000000; 300000 asks for the balance; 200000 authorizes a refund' })),
    networkDataRef: Type.Optional(Type.String({ pattern: '^[0-9A-Z]{16}$', maxLength: 16, description: 'the lifecycle reference for DE63 (new one by default)' })),
  },
  { additionalProperties: false, examples: [{ amount: 25, merchant: { name: 'JOES DINER', mcc: '5812', city: 'SAN FRANCISCO', state: 'CA', country: 'US' } }] },
);
const AmountBody = Type.Object({ amount: Amount('the amount') }, { additionalProperties: false, examples: [{ amount: 10 }] });
const CompletionBody = Type.Object(
  {
    amount: Type.Optional(Amount('the final amount (default: what the hold reserves; required when the lifecycle holds nothing, its hold expired or released)')),
    newRrn: Type.Optional(Type.Boolean({ description: 'a new RRN, as settlement batching makes (default true)' })),
  },
  { additionalProperties: false, examples: [{ amount: 30, newRrn: true }] },
);
const ReversalBody = Type.Object(
  { amount: Type.Optional(Amount('how much to reverse (default: all the hold reserves; less is a partial reversal through DE95)')) },
  { additionalProperties: false, examples: [{ amount: 5 }] },
);
const FinancialBody = Type.Object(
  {
    amount: Amount('the amount'),
    processingCode: Type.Optional(Type.String({ pattern: '^[0-9]{6}$', maxLength: 6, description: 'DE3, default 000000 (purchase); 200000 is a refund' })),
    merchant: Type.Optional(MerchantBody),
  },
  { additionalProperties: false, examples: [{ amount: 12.5 }] },
);
const ForcePostBody = Type.Object({ amount: Amount('the amount posted'), merchant: Type.Optional(MerchantBody) }, { additionalProperties: false, examples: [{ amount: 40 }] });
const IsoBody = Type.Object(
  {
    format: Type.Union([Type.Literal('json'), Type.Literal('ascii')]),
    message: Type.Union([Type.Object({}, { additionalProperties: true, description: 'json: field number → value, the MTI under "0"' }), Type.String({
        // Bounded only by the body's own limit: a message over packedLengthMax reaches the codec, whose answer names field 0.
        maxLength: jsonBodyLimitBytes,
        description: `ascii: the packed message (at most ${packedLengthMax} characters: a longer one is 400 ISO8583_MALFORMED, as any other fault of the message; maxLength is only the body's bound)`,
      })]),
  },
  {
    additionalProperties: false,
    examples: [{ format: 'json', message: { '0': '0100', '2': '4242424242424242', '3': '000000', '4': '000000002500', '7': '0315120000', '11': '000001', '37': '607412000001' } }],
  },
);
const IsoResult = Type.Object(
  {
    response: Type.Record(Type.String(), Type.String(), { description: 'the answer, keyed like the request ("0" is the MTI)' }),
    packed: Type.String(),
    cardTransactionId: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'SandboxIso8583Result' },
);

function resultOf(outcome: CardMessageOutcome): Static<typeof SandboxCardResult> {
  return {
    cardTransactionId: outcome.record?.id ?? null,
    parentCardTransactionId: outcome.record?.parentCardTransactionId ?? null,
    responseCode: outcome.responseCode,
    approvedAmount: majorUnits(outcome.approvedAmountMinor),
    authCode: outcome.authCode,
    decisionSource: outcome.decisionSource,
    stan: outcome.request.fields['11'] ?? '',
    rrn: outcome.request.fields['37'] ?? '',
    networkDataRef: outcome.record?.networkDataRef ?? null,
    replayed: outcome.replayed,
    record: outcome.record,
    iso: {
      request: { mti: outcome.request.isoMti, fields: outcome.request.fields },
      response: { mti: outcome.response.isoMti, fields: outcome.response.fields },
      packed: outcome.packedResponse,
    },
  };
}

function cardOfMessage(deps: Deps, context: RequestContext, { card, program }: LockedCard): CardOfMessage {
  if (!program) throw notFound('Card program');
  return {
    pan: cardVaultOf(deps).decryptPan(card.pan_encrypted, context.clientId, card.id),
    expiry: { expiryMonth: card.expiry_month, expiryYear: card.expiry_year },
    network: program.network,
  };
}

/**
 * The card a message is built from, with its program: locked already, as the processor would
 * lock it, so that the processor takes it from here instead of reading it again.
 */
async function cardOf(tx: Tx, context: RequestContext, cardId: string): Promise<LockedCard> {
  const locked = await lockCardWithProgram(tx, context.clientId, { id: cardId });
  if (!locked) throw notFound('Card');
  return locked;
}

/** The lifecycle named by its id or by the id of one of its records (404 otherwise). */
async function swipeOf(tx: Tx, context: RequestContext, id: string): Promise<CardSwipeRow> {
  if (!isUuid(id)) throw notFound('Card transaction');
  const childSwipeId = tx.selectFrom('card_transactions').select('swipe_id').where('client_id', '=', context.clientId).where('id', '=', id);
  const swipe = await tx
    .selectFrom('card_swipes')
    .selectAll()
    .where('client_id', '=', context.clientId)
    .where('id', '=', sql<string>`coalesce(${childSwipeId}, ${id}::uuid)`)
    .executeTakeFirst();
  if (!swipe) throw notFound('Card transaction');
  return swipe;
}

type FollowUp = Pick<MessageOptions, 'networkDataRef' | 'original' | 'merchant' | 'currencyNumeric'>;

/**
 * A follow-up message of a lifecycle carries its DE63 reference (a new one if it had none), DE90
 * naming its first message, its merchant and, when the lifecycle is billed 1:1 as the sandbox bills,
 * the currency of its first message (DE49: a completion of a EUR authorization is in EUR; until
 * 2026-12-02 it went in USD, found by an audit).
 */
async function followUpOf(tx: Tx, context: RequestContext, swipe: CardSwipeRow): Promise<FollowUp> {
  const first = await tx
    .selectFrom('card_transactions')
    .select(['transaction_currency', 'transaction_minor', 'requested_minor'])
    .where('client_id', '=', context.clientId)
    .where('swipe_id', '=', swipe.id)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  // Only a lifecycle billed 1:1, as the sandbox bills: a follow-up's DE4 is the amount billed to the
  // card, which with another rate (a message sent with its own DE6) is not one in DE49's currency.
  const atPar = first !== undefined && String(first.transaction_minor) === String(first.requested_minor);
  const currencyNumeric = atPar ? numericOfCurrency(first.transaction_currency) : undefined;
  return {
    networkDataRef: swipe.network_data_ref ?? newNetworkDataRef(),
    original: { mti: swipe.first_mti, stan: swipe.stan, transmissionDateTime: swipe.transmission_date_time, acquirerId: swipe.acquirer_id },
    merchant: swipe.merchant ?? undefined,
    ...(currencyNumeric === undefined ? {} : { currencyNumeric }),
  };
}

/**
 * The refund a sandbox reversal of the lifecycle names: its newest refund credited (0220 or 0200,
 * processing code 20) that reversals have not taken back in full, else its newest; what a reversal
 * of it names in DE90, and what of it no reversal has taken back yet (the processor's own count).
 * Until 2026-12-03 always the newest, so once it was taken back a reversal took nothing while an
 * older refund of the lifecycle still had its credit.
 */
async function refundToReverse(tx: Tx, context: RequestContext, swipe: CardSwipeRow): Promise<{ remainingMinor: bigint; original: NonNullable<MessageOptions['original']> } | undefined> {
  const rows = await tx
    .selectFrom('card_transactions')
    .select(['id', 'mti', 'stan', 'transmission_date_time', 'acquirer_id', 'amount_minor'])
    .where('client_id', '=', context.clientId)
    .where('card_id', '=', swipe.card_id)
    .where('swipe_id', '=', swipe.id)
    .where('type', '=', 'REFUND')
    .where('status', '=', 'COMPLETED')
    .where('repeat_of', 'is', null)
    .orderBy('id', 'desc')
    .execute();
  let chosen: { remainingMinor: bigint; original: NonNullable<MessageOptions['original']> } | undefined;
  for (const row of rows) {
    const remaining = toBigInt(row.amount_minor) - (await refundTakenBack(tx, context.clientId, swipe, row));
    const named = { remainingMinor: remaining > 0n ? remaining : 0n, original: { mti: row.mti, stan: row.stan, transmissionDateTime: row.transmission_date_time, acquirerId: row.acquirer_id } };
    chosen ??= named;
    if (remaining > 0n) return named;
  }
  return chosen;
}

/**
 * The sandbox card network (contract §12.5): each convenience endpoint builds a real ISO 8583
 * message, as an acquirer would, and runs it through the processor; POST /v1/sandbox/iso8583 takes
 * the message itself. Registered only in sandbox mode.
 */
export function registerSandboxCardNetworkRoutes(app: App, deps: Deps, metrics: Metrics): void {
  // The messages that arrive together share a transaction and its commit (docs/cards.md). The
  // second transactions of cooperative decisions have a lane of their own, so a decision the
  // client has answered does not queue behind the new messages; the two lanes share their claims
  // and the turn of ledger shards, so neither waits in the database for the other's locks.
  const inFlight = new GroupsInFlight();
  const lane = (name: string) =>
    new TransactionGroups(deps.database, {
      ...writeBatchSizing(deps, deps.config.cardGroupConcurrency),
      inFlight,
      overlapCommit: deps.config.cardGroupOverlap,
      observe: (members, committed, deferred) => metrics.transactionGroup(name, members, committed, deferred),
    });
  const group = lane('card-messages');
  const finishGroup = lane('card-decisions');
  /**
   * Runs one message through the processor. A COOP_AUTH decision request is a write in two
   * transactions with the call to the client between them (runPausableWrite): nothing is held
   * while the client thinks.
   */
  const runCardMessage = <D>(
    request: FastifyRequest,
    reply: FastifyReply,
    answer: { statusCode?: number; message: string },
    build: (tx: Tx, context: RequestContext) => Promise<BuiltMessage>,
    view: (outcome: CardMessageOutcome) => D,
  ) =>
    runPausableWrite<D, Paused>(request, reply, deps, {
      group,
      finishGroup,
      work: async (tx, context) => {
        const { message, card } = await build(tx, context);
        const step = await processCardMessage(tx, context, deps, message, card === undefined ? {} : { card });
        if (isCoopDecisionStep(step)) return { paused: { decision: step.pendingDecision } };
        if (isAwaitFirstStep(step)) return { paused: { repeat: { message, ...step.awaitFirst } } };
        return { ...answer, data: view(step) };
      },
      wait: async (paused, context) => {
        // The program's timeoutMs counts from the message's arrival (reply.elapsedTime: since Fastify received the request).
        if ('decision' in paused) return callCoopClient(deps, paused.decision, request.log, reply.elapsedTime);
        await waitForRecord(deps, context.clientId, paused.repeat.childId, paused.repeat.waitMs);
        return undefined;
      },
      finish: async (tx, context, paused, waited) => {
        if ('repeat' in paused) {
          // The first sending has its answer now (replayed), or never got one (the process that asked the
          // client stopped): then the stand-in decides it now, without asking (the network's window is
          // over), and this repeat gets that answer.
          const unanswered = await answerRepeatOfUnanswered(tx, context, deps, paused.repeat.message, paused.repeat.childId);
          if (unanswered) {
            metrics.coopDecision(null, 'TIMEOUT');
            return { ...answer, data: view(unanswered) };
          }
          const step = await processCardMessage(tx, context, deps, paused.repeat.message, { awaitFirst: false });
          if (isAwaitFirstStep(step)) throw new Error('a repeat waited for its first sending twice');
          if (!isCoopDecisionStep(step)) return { ...answer, data: view(step) };
          const { outcome } = await finishCoopDecision(tx, context, step.pendingDecision, null, context.now, {
            reason: 'TIMEOUT',
            detail: 'a repeat whose first sending was never answered; the client was not asked again',
          });
          metrics.coopDecision(null, 'TIMEOUT');
          return { ...answer, data: view(outcome) };
        }
        const call = waited as ClientCall;
        const { outcome, verdict } = await finishCoopDecision(tx, context, paused.decision, call.exchange, call.attemptedAt, call.notSent);
        metrics.coopDecision(call.exchange?.latencyMs ?? null, verdict.kind === 'STAND_IN' ? verdict.reason : null);
        return { ...answer, data: view(outcome) };
      },
    });
  const sendMessage = (request: FastifyRequest, reply: FastifyReply, build: (tx: Tx, context: RequestContext) => Promise<BuiltMessage>) =>
    runCardMessage(
      request,
      reply,
      { statusCode: 201, message: 'Card network message processed' },
      async (tx, context) => {
        const built = await build(tx, context);
        return built.card === undefined ? built : { ...built, message: await withUnusedStan(tx, context, built.card.card.id, built.message) };
      },
      resultOf,
    );

  const onParent = (
    path: string,
    operationId: string,
    summary: string,
    description: string,
    body: TSchema,
    build: (swipe: CardSwipeRow, card: CardOfMessage, requestBody: Record<string, unknown>, now: Date, follow: FollowUp, tx: Tx, context: RequestContext) => IsoMessage | Promise<IsoMessage>,
  ) => {
    app.post(
      path,
      { schema: { operationId, tags, summary, description, params: ParentParams, body, response: { 201: Envelope(SandboxCardResult) } } },
      async (request, reply) =>
        sendMessage(request, reply, async (tx, context) => {
          const swipe = await swipeOf(tx, context, (request.params).parentId);
          const card = await cardOf(tx, context, swipe.card_id);
          const follow = await followUpOf(tx, context, swipe);
          const message = await build(swipe, cardOfMessage(deps, context, card), (request.body ?? {}) as Record<string, unknown>, context.now, follow, tx, context);
          return { message, card };
        }),
    );
  };

  app.post(
    '/v1/sandbox/cards/:cardId/authorizations',
    {
      schema: {
        operationId: 'sandbox.createCardAuthorization',
        tags,
        summary: 'Send a card authorization (0100) from the sandbox network',
        description:
          'Builds a 0100 and runs it through the processor: approved (hold placed, CARD_TRANSACTION_PENDING), partially approved (10), or ' +
          'declined with the decision order\'s code (CARD_TRANSACTION_FAILED). Amount 0 is an account verification; processingCode 30xxxx a ' +
          'balance inquiry; 20xxxx a refund authorization (REFUND PENDING, nothing held or credited until the refund clears); another ' +
          'transaction type than 00, 01, 09, 20, 30, 31 is declined 12. Magic amounts: 990.NN answers NN, 990.10 approves half.',
        params: CardParams,
        body: AuthorizationBody,
        response: { 201: Envelope(SandboxCardResult) },
      },
    },
    async (request, reply) =>
      sendMessage(request, reply, async (tx, context) => {
        const body = request.body;
        const card = await cardOf(tx, context, request.params.cardId);
        const amountMinor = body.amount === 0 ? 0n : amountMinorOf(body.amount);
        const message = buildSandboxMessage(cardOfMessage(deps, context, card), context.now, {
          mti: '0100',
          processingCode: body.processingCode ?? '000000',
          amountMinor,
          currencyNumeric: sandboxCurrencies[body.currency ?? 'USD'] ?? '840',
          merchant: body.merchant,
          posEntryMode: body.posEntryMode,
          networkDataRef: body.networkDataRef ?? newNetworkDataRef(),
          partialApprovalCapable: body.partialApprovalCapable ?? true,
        });
        return { message, card };
      }),
  );

  onParent(
    '/v1/sandbox/card-transactions/:parentId/increments',
    'sandbox.createCardIncrement',
    'Send an incremental authorization (0100, same DE63 reference)',
    'Raises the open hold by amount when the decision order approves it; a declined increment leaves the hold as it was. A lifecycle that holds nothing any more (completed, reversed, expired) declines it with 57. ' +
      '409 INVALID_STATE for a lifecycle opened by a message without a DE63 reference: an increment names its lifecycle by that reference alone.',
    AmountBody,
    (swipe, card, body, now, follow) => {
      // Without a reference the 0100 would name nothing and open a lifecycle of its own, a second
      // hold the parent's completion never captures (found by an audit, 2026-12-02).
      if (swipe.network_data_ref === null) {
        throw new AppError(
          'INVALID_STATE',
          'This lifecycle was opened by a message without a DE63 reference (networkDataRef is null), and an incremental authorization names its lifecycle by that reference alone: it cannot be raised. Send an advice (0120) of the new total instead.',
        );
      }
      return buildSandboxMessage(card, now, { mti: '0100', processingCode: '000000', amountMinor: amountMinorOf(body.amount as number), ...follow, original: undefined });
    },
  );

  onParent(
    '/v1/sandbox/card-transactions/:parentId/advices',
    'sandbox.createCardAdvice',
    'Send an authorization advice (0120)',
    'Sets the hold to the advised amount; never declined. What AVAILABLE cannot cover is not reserved (the completion is forced).',
    AmountBody,
    (swipe, card, body, now, follow) => buildSandboxMessage(card, now, { mti: '0120', processingCode: '000000', amountMinor: amountMinorOf(body.amount as number), ...follow }),
  );

  onParent(
    '/v1/sandbox/card-transactions/:parentId/completions',
    'sandbox.createCardCompletion',
    'Send a completion (0220)',
    'Captures the open hold for amount (default the held amount, less what a cooperative increment still waiting for its answer reserved) with a new RRN by default; above the hold the excess is posted in full ' +
      '(forced when AVAILABLE is short) and flagged overCapture beyond the program tolerance. Without an open hold (expired): a force post ' +
      'of amount, which is then required (400 otherwise: there is no held amount to default to).',
    CompletionBody,
    (swipe, card, body, now, follow) => {
      const held = toBigInt(swipe.held_minor);
      // Nothing held (the hold expired or was released): no amount to default to, and a completion of 0 would post nothing.
      if (body.amount === undefined && held === 0n) throw validationError('amount', 'required: the lifecycle holds nothing (its hold expired or was released), so give the amount to post');
      // What the answered messages hold: a cooperative increment still waiting for its answer was
      // not approved (until 2026-12-03 its reservation was completed too; found by an audit).
      const amountMinor = body.amount === undefined ? decidedHeld(swipe) : amountMinorOf(body.amount as number);
      return buildSandboxMessage(card, now, {
        mti: '0220',
        processingCode: '000000',
        amountMinor,
        ...follow,
        ...(body.newRrn === false ? { rrn: swipe.rrn } : {}),
      });
    },
  );

  onParent(
    '/v1/sandbox/card-transactions/:parentId/reversals',
    'sandbox.createCardReversal',
    'Send a reversal (0420)',
    'Without amount, or with the whole held amount or more: a full reversal (hold released, CANCELLED; the record\'s amount is what was released). A smaller amount: a partial reversal, DE95 ' +
      'carrying what stays authorized (the hold is reduced, still PENDING); while a cooperative increment waits for its answer, the held amount is what the answered messages hold, without its reservation. On a completed single-message purchase (0200) it credits the ' +
      'purchase back (what of it no reversal took back yet, or the amount given); on a lifecycle that nets a credit (refunds credited, nothing held) it takes back its newest ' +
      'refund not yet taken back in full (DE90 names it; forced, like any reversal); on a refund authorization whose refund has not cleared, it cancels the authorization.',
    ReversalBody,
    async (swipe, card, body, now, follow, tx, context) => {
      // What the reversal undoes: the open hold, or, when nothing is held, what was posted (a completed 0200).
      // (Else, on a lifecycle of refunds, what they credited; on a refund authorization's, the refund it announced.)
      const held = toBigInt(swipe.held_minor);
      const posted = toBigInt(swipe.posted_minor);
      // A lifecycle that nets a credit (refunds; a refund authorization whose refund cleared; a
      // purchase refunded beyond its amount): its DE90 names its newest refund with something left.
      const refund = held === 0n && posted < 0n ? await refundToReverse(tx, context, swipe) : undefined;
      // A completed 0200 purchase: what of it no reversal took back (the processor's count; refunds on the lifecycle do not change it).
      const purchaseLeft = held === 0n && posted > 0n ? await firstPostingLeft(tx, context.clientId, swipe) : undefined;
      // While a cooperative increment waits for its answer, what the answered messages hold: the
      // processor takes DE95 against that (until 2026-12-03 DE4 and DE95 counted the reservation,
      // so a partial reversal released nothing; found by an audit).
      const base = held > 0n ? decidedHeld(swipe) : posted > 0n ? (purchaseLeft ?? posted) : posted < 0n ? (refund?.remainingMinor ?? -posted) : toBigInt(swipe.refund_authorized_minor);
      const reversed = body.amount === undefined ? base : amountMinorOf(body.amount as number);
      const partial = reversed > 0n && reversed < base;
      return buildSandboxMessage(card, now, {
        mti: '0420',
        // What is reversed is a refund (or its authorization) when nothing is held or posted but refunds.
        processingCode: held === 0n && posted <= 0n && base > 0n ? '200000' : '000000',
        amountMinor: base > 0n ? base : reversed,
        ...follow,
        ...(refund ? { original: refund.original } : {}),
        rrn: swipe.rrn,
        ...(partial ? { replacementActualMinor: base - reversed } : {}),
      });
    },
  );

  onParent(
    '/v1/sandbox/card-transactions/:parentId/refunds',
    'sandbox.createCardRefund',
    'Send a refund (0220, processing code 20)',
    'Credits amount back to the card\'s wallet (REFUND, operation CREDIT), joined to this lifecycle (by its DE63 reference; DE90 naming its first message when it has none).',
    AmountBody,
    (swipe, card, body, now, follow) =>
      buildSandboxMessage(card, now, {
        mti: '0220',
        processingCode: '200000',
        amountMinor: amountMinorOf(body.amount as number),
        ...follow,
        // A lifecycle without a reference is named by DE90 (refunds correlate by either); until
        // 2026-12-02 the refund named nothing and started a lifecycle of its own (found by an audit).
        ...(swipe.network_data_ref === null ? {} : { original: undefined }),
      }),
  );

  app.post(
    '/v1/sandbox/card-transactions/:parentId/expire',
    {
      schema: {
        operationId: 'sandbox.expireCardHold',
        tags,
        summary: 'Expire a card authorization hold now',
        description:
          'Runs hold expiry at once: the hold is released (and a refund authorization still announced lapses), the lifecycle CANCELLED with ' +
          'expiredAt. 409 CONFLICT when it is not PENDING and announces no refund.',
        params: ParentParams,
        response: { 200: Envelope(CardTransactionSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => {
        const swipe = await swipeOf(tx, context, request.params.parentId);
        const expired = await expireSwipe(tx, context, swipe.id);
        if (!expired) throw new AppError('CONFLICT', `The card transaction is ${swipe.status}; only a PENDING authorization (or an announced refund) can expire.`);
        return { message: 'Card authorization expired', data: expired };
      }),
  );

  app.post(
    '/v1/sandbox/cards/:cardId/financial',
    {
      schema: {
        operationId: 'sandbox.createCardFinancial',
        tags,
        summary: 'Send a single-message purchase (0200)',
        description: 'Decided like an authorization and posted at once (PURCHASE COMPLETED) or declined (FAILED). processingCode 200000 is a refund.',
        params: CardParams,
        body: FinancialBody,
        response: { 201: Envelope(SandboxCardResult) },
      },
    },
    async (request, reply) =>
      sendMessage(request, reply, async (tx, context) => {
        const card = await cardOf(tx, context, request.params.cardId);
        const message = buildSandboxMessage(cardOfMessage(deps, context, card), context.now, {
          mti: '0200',
          processingCode: request.body.processingCode ?? '000000',
          amountMinor: amountMinorOf(request.body.amount),
          merchant: request.body.merchant,
          networkDataRef: newNetworkDataRef(),
        });
        return { message, card };
      }),
  );

  app.post(
    '/v1/sandbox/cards/:cardId/force-posts',
    {
      schema: {
        operationId: 'sandbox.createCardForcePost',
        tags,
        summary: 'Send a force post (0220 without authorization)',
        description: 'Posted without a hold and never declined (forcePost: true); it may take AVAILABLE below zero, recorded as overdrawn.',
        params: CardParams,
        body: ForcePostBody,
        response: { 201: Envelope(SandboxCardResult) },
      },
    },
    async (request, reply) =>
      sendMessage(request, reply, async (tx, context) => {
        const card = await cardOf(tx, context, request.params.cardId);
        const message = buildSandboxMessage(cardOfMessage(deps, context, card), context.now, {
          mti: '0220',
          processingCode: '000000',
          amountMinor: amountMinorOf(request.body.amount),
          merchant: request.body.merchant,
          networkDataRef: newNetworkDataRef(),
        });
        return { message, card };
      }),
  );

  app.post(
    '/v1/sandbox/iso8583',
    {
      schema: {
        operationId: 'sandbox.sendIso8583',
        tags,
        summary: 'Send an ISO 8583 message to the processor',
        description:
          'format json: the message keyed by field number, the MTI under "0" (moov-io style); format ascii: the packed message. Answers the ' +
          'response keyed the same way and packed. DE2 must be a card of yours, else the answer is DE39 14. A message that breaks the ' +
          'sandbox layout: 400 ISO8583_MALFORMED naming the field.',
        body: IsoBody,
        response: { 200: Envelope(IsoResult) },
      },
    },
    async (request, reply) => {
      // Read before any transaction, as the body's schema is: a malformed message is a 400 of its
      // own and does not fail the transaction group it would have joined.
      const { format, message } = request.body;
      if (format === 'ascii' && typeof message !== 'string') throw validationError('message', 'the ascii format takes the packed message as a string');
      const parsed = format === 'json' ? parseKeyedIsoMessage(message) : unpackIsoMessage(typeof message === 'string' ? message : '');
      return runCardMessage(
        request,
        reply,
        { message: 'ISO 8583 message processed' },
        async () => ({ message: parsed }),
        (outcome) => ({ response: toKeyedIsoMessage(outcome.response), packed: outcome.packedResponse, cardTransactionId: outcome.record?.id ?? null }),
      );
    },
  );
}
