import type { Selectable } from 'kysely';
import currencyCodes from 'currency-codes';
import { Type, type Static } from 'typebox';
import type { CardSwipesTable, CardTransactionsTable, CardTransactionStatus, CardTransactionType } from './card-transactions.tables.js';

export type CardSwipeRow = Selectable<CardSwipesTable>;
export type CardTransactionRow = Selectable<CardTransactionsTable>;

export interface Iso4217Currency {
  alpha: string;
  numeric: string;
  /** Decimals of its minor unit (ISO 4217's "N.A.", as for gold, reads 0). */
  exponent: number;
}

/**
 * Every currency of ISO 4217 (the `currency-codes` package's copy of the maintenance agency's
 * list), by numeric and by alpha code, read once. DE49, DE51 and DE54 name currencies by numeric
 * code; the records keep the alpha code, and a currency's exponent sets where DE4's decimal point
 * goes (BHD has 3 decimals, JPY none). Until 2026-12-04 the sandbox knew eight currencies and took
 * any other code as a currency of 2 decimals shown as its number (a 1.000 BHD message showed as
 * 10.00; found by an audit).
 */
const byNumeric = new Map<string, Iso4217Currency>();
const byAlpha = new Map<string, Iso4217Currency>();
for (const record of currencyCodes.data) {
  const currency = { alpha: record.code, numeric: record.number, exponent: record.digits };
  byNumeric.set(currency.numeric, currency);
  byAlpha.set(currency.alpha, currency);
}

/** The ISO 4217 currency of a numeric code (DE49, DE51, DE54), undefined for a code ISO 4217 does not assign. */
export function currencyOfNumeric(numeric: string): Iso4217Currency | undefined {
  return byNumeric.get(numeric);
}

export function numericOfCurrency(alpha: string): string | undefined {
  return byAlpha.get(alpha)?.numeric;
}

/**
 * The exponent of a currency as a record keeps it (its alpha code); 2 for a record an earlier
 * version kept under a code ISO 4217 does not assign (the number itself).
 */
function exponentOfStored(currency: string): number {
  return byAlpha.get(currency)?.exponent ?? 2;
}

const conversionRateDecimals = 6;

/**
 * A foreign-currency message's settlement (CONTRACT §12.3): what the network billed the card
 * (DE6, kept as the requested amount) in the card's currency, and the rate between the two amounts
 * of the message itself. Nothing for a message in the card's own currency.
 */
function settlementOf(row: CardTransactionRow, transactionExponent: number): { settlement?: number; settlementCurrency?: string; conversionRate?: number } {
  if (row.transaction_currency === row.asset) return {};
  const settledMinor = BigInt(row.requested_minor);
  const transactionMinor = BigInt(row.transaction_minor);
  const settlement = { settlement: majorUnits(settledMinor), settlementCurrency: row.asset };
  if (transactionMinor === 0n) return settlement;
  // settled / 10^2 over transaction / 10^e, scaled by 10^6 and rounded half up, in integers.
  const numerator = settledMinor * 10n ** BigInt(transactionExponent + conversionRateDecimals) * 2n;
  const denominator = transactionMinor * 10n ** 2n;
  const scaled = (numerator / denominator + 1n) / 2n;
  return { ...settlement, conversionRate: majorUnits(scaled, conversionRateDecimals) };
}

/** Minor units as a JSON number in major units (card amounts are numbers, specification). */
export function majorUnits(minor: bigint | string, exponent = 2): number {
  const value = BigInt(minor);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(exponent + 1, '0');
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return Number(negative ? `-${text}` : text);
}

export const toBigInt = (value: string | number | bigint): bigint => BigInt(value);

const StatusSchema = Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED'), Type.Literal('CANCELLED')]);
export const CardTransactionTypeSchema = Type.Union(
  [
    Type.Literal('PRE_AUTHORIZATION'),
    Type.Literal('ACCOUNT_VERIFICATION'),
    Type.Literal('BALANCE_INQUIRY'),
    Type.Literal('PURCHASE'),
    Type.Literal('REFUND'),
    Type.Literal('PRE_AUTH_COMPLETION'),
    Type.Literal('REVERSAL_ADVICE'),
  ],
  { description: 'PRE_AUTHORIZATION, ACCOUNT_VERIFICATION, BALANCE_INQUIRY, PURCHASE (formerly ONLINE_TRANSACTION), REFUND, PRE_AUTH_COMPLETION, REVERSAL_ADVICE' },
);
const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description === undefined ? {} : { description });
const MerchantSchema = Type.Union([
  Type.Object({ name: Type.String(), mcc: Type.String(), city: Type.String(), state: Type.String(), country: Type.String() }, { title: 'CardMerchant' }),
  Type.Null(),
]);

const CoopAuthDecisionSchema = Type.Object(
  {
    eventId: Type.String({ description: 'the COOP_AUTH_0100/0200 event sent (its webhook-id)' }),
    webhookId: NullableString('the subscription asked; null when none lists the event type'),
    latencyMs: Type.Union([Type.Integer(), Type.Null()], { description: 'from sending to the answer or the timeout; null when nothing was sent' }),
    httpStatus: Type.Union([Type.Integer(), Type.Null()]),
    standInReason: Type.Union(
      [
        Type.Literal('TIMEOUT'),
        Type.Literal('NON_2XX'),
        Type.Literal('BAD_BODY'),
        Type.Literal('UNREACHABLE'),
        Type.Literal('NO_ENDPOINT'),
        Type.Literal('LIFECYCLE_CLOSED'),
        Type.Null(),
      ],
      { description: 'why the program\'s stand-in rule decided (decisionSource STAND_IN); null when the client\'s answer was used' },
    ),
    detail: NullableString('what was wrong with the answer'),
    clientResponseCode: NullableString('the responseCode the client answered'),
    message: NullableString('the client\'s message'),
    metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'the client\'s metadata (at most 20 keys)' }),
  },
  { title: 'CardCoopAuthDecision' },
);

export const CardTransactionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'this child record (one message)' }),
    cardTransactionId: Type.String({ format: 'uuid', description: 'the same as id, as events name it' }),
    parentCardTransactionId: Type.String({ format: 'uuid', description: 'the lifecycle (one swipe) this message belongs to' }),
    cardId: Type.String({ format: 'uuid' }),
    walletId: Type.String({ format: 'uuid' }),
    creditLineId: NullableString('credit cards only'),
    cardType: Type.Union([Type.Literal('DEBIT'), Type.Literal('CREDIT')]),
    type: CardTransactionTypeSchema,
    operation: Type.Union([Type.Literal('CREDIT'), Type.Literal('DEBIT')]),
    status: StatusSchema,
    amount: Type.Number({ description: 'major units: what this message approved, posted, released or credited (0 for a decline)', examples: [25] }),
    asset: Type.String({ examples: ['USD'] }),
    amounts: Type.Object({
      transaction: Type.Number({ description: 'DE4, major units of transactionCurrency' }),
      transactionCurrency: Type.String({ description: 'DE49 as an alpha code' }),
      surcharge: Type.Union([Type.Number(), Type.Null()], { description: 'DE28, included in the total' }),
      fees: Type.Array(Type.Object({ type: Type.String(), amount: Type.Number(), currency: Type.String() }), { description: 'DE54 entries' }),
      settlement: Type.Optional(Type.Number({ description: 'only when transactionCurrency is not the card\'s: DE6, what the network billed the card for the message, major units of settlementCurrency (requestedAmount)' })),
      settlementCurrency: Type.Optional(Type.String({ description: 'only with settlement: the card\'s currency (DE51), the record\'s asset' })),
      conversionRate: Type.Optional(
        Type.Number({ description: 'only with settlement, and when transaction is not 0: settlement per unit of transactionCurrency (major units over major units), rounded half up to 6 decimals' }),
      ),
    }),
    requestedAmount: Type.Number({ description: 'what the network asked for, major units of asset' }),
    heldAmount: Type.Number({ description: 'what the lifecycle\'s hold reserves after this message' }),
    retrievalReferenceNo: Type.String({ description: 'DE37' }),
    stan: Type.String({ description: 'DE11' }),
    authCode: NullableString('DE38 of an approval'),
    responseCode: Type.String({ description: 'DE39 answered' }),
    declineReason: NullableString(),
    decisionSource: Type.Union([Type.Literal('SYSTEM'), Type.Literal('CLIENT'), Type.Literal('STAND_IN'), Type.Literal('NETWORK')]),
    networkDataRef: NullableString('DE63 positions 9-24'),
    merchant: MerchantSchema,
    mti: Type.String({ description: 'the message type received' }),
    timestamp: Type.String({ format: 'date-time' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the hold expires (client clock)' }),
    expiredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    overCapture: Type.Boolean({ description: 'a completion above the hold beyond the program tolerance' }),
    forcePost: Type.Boolean({ description: 'posted without a hold (never declined)' }),
    orphan: Type.Boolean({ description: 'an advice that matched no lifecycle: acknowledged, no money moved' }),
    repeatOfCardTransactionId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description:
        'a repeat (0101, 0201, …) of a message already answered: the record it repeats, whose answer it got again (nothing moved, nobody asked again); null otherwise',
    }),
    reversesCardTransactionId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description:
        'a reversal (REVERSAL_ADVICE) that credited a posting back, released an increment or took a refund back: the record of that posting (a 0200 purchase, a 0220 completion or force post), increment (an 0100) or refund (a 0200 or 0220 of processing code 20; since 2026-12-03); null otherwise (a reversal of a hold or of a refund authorization, every other record)',
    }),
    coopAuth: Type.Union([CoopAuthDecisionSchema, Type.Null()], {
      description: 'COOP_AUTH decision requests (0100/0200 of a cooperative card that passed the system checks): what the client answered or why the stand-in decided; null otherwise',
    }),
    traceId: NullableString('the trace of the request (or the background run, such as a hold expiry) that wrote this record: GET /v1/traces/{traceId}; null for records written before it was kept'),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'CardTransaction' },
);
export type CardTransactionView = Static<typeof CardTransactionSchema>;

export const CardTransactionGroupSchema = Type.Object(
  {
    parentCardTransactionId: Type.String({ format: 'uuid' }),
    cardId: Type.String({ format: 'uuid' }),
    walletId: Type.String({ format: 'uuid' }),
    cardType: Type.Union([Type.Literal('DEBIT'), Type.Literal('CREDIT')]),
    status: StatusSchema,
    asset: Type.String(),
    heldAmount: Type.Number({ description: 'what the hold still reserves' }),
    postedAmount: Type.Number({ description: 'net amount posted (debits minus refunds)' }),
    pendingRefundAmount: Type.Number({
      description:
        'what refund authorizations (0100, processing code 20) announced on this lifecycle and no refund has cleared yet; nothing is held or credited for it until the refund (0220 or 0200, processing code 20) clears. 0 otherwise.',
    }),
    networkDataRef: NullableString(),
    retrievalReferenceNo: Type.String({ description: 'the RRN of the first message' }),
    merchant: MerchantSchema,
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expiredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    children: Type.Array(CardTransactionSchema, { description: 'one record per message, oldest first' }),
  },
  { title: 'CardTransactionGroup' },
);
export type CardTransactionGroupView = Static<typeof CardTransactionGroupSchema>;

export function cardTransactionView(row: CardTransactionRow): CardTransactionView {
  const exponent = exponentOfStored(row.transaction_currency);
  return {
    id: row.id,
    cardTransactionId: row.id,
    parentCardTransactionId: row.swipe_id,
    cardId: row.card_id,
    walletId: row.wallet_id,
    creditLineId: row.credit_line_id,
    cardType: row.card_type,
    type: row.type,
    operation: row.operation,
    status: row.status,
    amount: majorUnits(row.amount_minor),
    asset: row.asset,
    amounts: {
      transaction: majorUnits(row.transaction_minor, exponent),
      transactionCurrency: row.transaction_currency,
      surcharge: row.surcharge_minor === null ? null : majorUnits(row.surcharge_minor, exponent),
      fees: row.fees.map((fee) => ({ type: fee.type, amount: majorUnits(fee.amountMinor, exponentOfStored(fee.currency)), currency: fee.currency })),
      ...settlementOf(row, exponent),
    },
    requestedAmount: majorUnits(row.requested_minor),
    heldAmount: majorUnits(row.held_minor),
    retrievalReferenceNo: row.rrn,
    stan: row.stan,
    authCode: row.auth_code,
    responseCode: row.response_code,
    declineReason: row.decline_reason,
    decisionSource: row.decision_source,
    networkDataRef: row.network_data_ref,
    merchant: row.merchant,
    mti: row.mti,
    timestamp: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    expiredAt: row.expired_at?.toISOString() ?? null,
    overCapture: row.over_capture,
    forcePost: row.force_post,
    orphan: row.orphan,
    repeatOfCardTransactionId: row.repeat_of,
    reversesCardTransactionId: row.reverses_id,
    coopAuth:
      row.coop_decision === null
        ? null
        : {
            eventId: row.coop_decision.eventId,
            webhookId: row.coop_decision.subscriptionId,
            latencyMs: row.coop_decision.latencyMs,
            httpStatus: row.coop_decision.httpStatus,
            standInReason: row.coop_decision.standInReason,
            detail: row.coop_decision.detail,
            clientResponseCode: row.coop_decision.clientResponseCode,
            message: row.coop_decision.message,
            metadata: row.coop_decision.metadata,
          },
    traceId: row.trace_id,
    createdAt: row.created_at.toISOString(),
  };
}

export function cardTransactionGroupView(swipe: CardSwipeRow, children: CardTransactionRow[]): CardTransactionGroupView {
  return {
    parentCardTransactionId: swipe.id,
    cardId: swipe.card_id,
    walletId: swipe.wallet_id,
    cardType: swipe.card_type,
    status: swipe.status,
    asset: swipe.asset,
    heldAmount: majorUnits(swipe.held_minor),
    postedAmount: majorUnits(swipe.posted_minor),
    pendingRefundAmount: majorUnits(swipe.refund_authorized_minor),
    networkDataRef: swipe.network_data_ref,
    retrievalReferenceNo: swipe.rrn,
    merchant: swipe.merchant,
    expiresAt: swipe.expires_at?.toISOString() ?? null,
    expiredAt: swipe.expired_at?.toISOString() ?? null,
    createdAt: swipe.created_at.toISOString(),
    updatedAt: swipe.updated_at.toISOString(),
    children: children.map(cardTransactionView),
  };
}

/** The CARD_TRANSACTION_* event of a child record's status. */
export const cardEventTypes: Readonly<Record<CardTransactionStatus, 'CARD_TRANSACTION_PENDING' | 'CARD_TRANSACTION_COMPLETED' | 'CARD_TRANSACTION_FAILED' | 'CARD_TRANSACTION_CANCELLED'>> = {
  PENDING: 'CARD_TRANSACTION_PENDING',
  COMPLETED: 'CARD_TRANSACTION_COMPLETED',
  FAILED: 'CARD_TRANSACTION_FAILED',
  CANCELLED: 'CARD_TRANSACTION_CANCELLED',
};

/** The event payload (specification "Card transactions"): the record's fields in major units. */
export function cardEventData(view: CardTransactionView): Record<string, unknown> {
  return {
    cardId: view.cardId,
    cardTransactionId: view.cardTransactionId,
    parentCardTransactionId: view.parentCardTransactionId,
    cardType: view.cardType,
    type: view.type,
    operation: view.operation,
    status: view.status,
    amount: view.amount,
    // What the hold reserves after this message: an advice records the advised amount, which may
    // be more than the card's funds could hold (until 2026-12-07 the event did not say what was
    // held, and a consumer reconciling a credit line from events counted too much; a credit audit).
    heldAmount: view.heldAmount,
    asset: view.asset,
    amounts: {
      transaction: view.amounts.transaction,
      transactionCurrency: view.amounts.transactionCurrency,
      ...(view.amounts.surcharge === null ? {} : { surcharge: view.amounts.surcharge }),
      fees: view.amounts.fees,
      ...(view.amounts.settlement === undefined ? {} : { settlement: view.amounts.settlement, settlementCurrency: view.amounts.settlementCurrency }),
      ...(view.amounts.conversionRate === undefined ? {} : { conversionRate: view.amounts.conversionRate }),
    },
    retrievalReferenceNo: view.retrievalReferenceNo,
    ...(view.merchant === null ? {} : { merchant: view.merchant }),
    responseCode: view.responseCode,
    ...(view.declineReason === null ? {} : { declineReason: view.declineReason }),
    ...(view.networkDataRef === null ? {} : { networkDataRef: view.networkDataRef }),
    timestamp: view.timestamp,
  };
}

export type { CardTransactionType };
