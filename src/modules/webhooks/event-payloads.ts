import { Ajv, type ValidateFunction } from 'ajv';
import { Type, type TSchema } from 'typebox';
import { AssertionError } from '../../platform/assert.js';
import type { EventType } from './event-types.js';

/**
 * The payload (`data`) schema of every event type, taken from the specification. docs/webhooks.md
 * lists them, generated from this file (npm run docs:webhooks; a test checks they match), and
 * recordEvent checks every payload against its schema, so a module cannot emit an event that
 * breaks what the docs promise. Payloads may carry more fields than listed (new optional fields
 * are a backwards-compatible change); the listed ones must be there with these types.
 */

const traceId = Type.String({ description: 'trace id of the request or job that caused the event' });
const nullableString = (description?: string) =>
  Type.Union([Type.String(), Type.Null()], description === undefined ? {} : { description });

function payload(properties: Record<string, TSchema>, description: string) {
  return Type.Object({ ...properties, traceId }, { additionalProperties: true, description });
}

const webhookPayload = (description: string) => payload({ webhookId: Type.String() }, description);
const ltvFields = {
  customerId: Type.String(),
  creditLineId: Type.String({ description: 'the credit line whose LTV crossed the threshold' }),
  ltv: Type.Union([Type.String({ description: 'four decimals, rounded down' }), Type.Null()], { description: 'the LTV after the change; null when something is owed and the collateral is worth nothing' }),
  thresholdLtv: Type.String({ description: 'the threshold crossed, four decimals' }),
  collateralAsset: Type.String(),
  collateralAmount: Type.String({ description: 'collateral locked, in collateralAsset' }),
  collateralValue: Type.String({ description: 'collateral value in currency, rounded down' }),
  outstanding: Type.String({ description: 'principal + interest + pending card holds, in currency' }),
  currency: Type.String(),
};
const ltvPayload = (description: string) => payload(ltvFields, `${description} Emitted once per upward crossing, in the transaction of the change that caused it (a price change, a card hold or capture, interest, a collateral release); the level re-arms when the LTV falls 0.01 below its threshold.`);
const ltvLiquidatedPayload = payload(
  {
    ...ltvFields,
    // Before the sale, unlike the warnings' figures after the change (the catalogue said "after"; found by an audit, 2026-12-04).
    ltv: Type.Union([Type.String({ description: 'four decimals, rounded down' }), Type.Null()], { description: 'the LTV before the sale, the one that reached the liquidation threshold' }),
    collateralAmount: Type.String({ description: 'collateral locked before the sale, in collateralAsset' }),
    collateralValue: Type.String({ description: 'collateral value before the sale, in currency, rounded down' }),
    outstanding: Type.String({ description: 'principal + interest + pending card holds before the sale, in currency' }),
    parentTransactionId: Type.String({ description: 'the liquidation\'s wallet transactions (COLLATERAL_LIQUIDATION, LIQUIDATION_FEE) are under it' }),
    price: Type.String({ description: 'the collateral price the collateral was sold at' }),
    collateralSold: Type.String({ description: 'collateral sold at the price, in collateralAsset' }),
    penaltyAmount: Type.String({ description: 'collateral kept as the liquidation penalty, in collateralAsset' }),
    proceeds: Type.String({ description: 'what the sold collateral fetched, in currency (rounded down)' }),
    interestRepaid: Type.String(),
    principalRepaid: Type.String(),
    surplus: Type.String({ description: 'proceeds beyond the debt, credited to the collateral wallet' }),
  },
  'The collateral of a crypto-secured credit line was liquidated: its LTV reached the liquidation threshold, so collateral was sold at the current price (less the penalty) until the LTV was back at the opening LTV or no collateral was left. ltv and collateralAmount are the figures before the sale.',
);
const tradePayload = (description: string) =>
  payload(
    {
      transactionId: Type.String({ description: 'parent transaction id of the trade' }),
      quoteId: Type.String({ description: 'the quote executed (GET /v1/trades/quotes/:quoteId)' }),
      walletId: Type.String({ description: 'the wallet the trade debited and credited' }),
      customerId: Type.String({ description: "the wallet's customer" }),
    },
    description,
  );

const bankCounterparty = Type.Object(
  {
    name: Type.String(),
    givenName: nullableString(),
    surname: nullableString(),
    accountNumber: Type.String(),
    swiftCode: Type.Optional(nullableString('BIC/SWIFT')),
    routingNumber: Type.Optional(nullableString('ABA routing number')),
    financialInstitutionId: Type.Optional(nullableString('institution id when it is neither BIC/SWIFT nor ABA')),
    street1: Type.Optional(nullableString()),
    street2: Type.Optional(nullableString()),
    cityCounty: Type.Optional(nullableString()),
    stateRegion: Type.Optional(nullableString()),
    countryCode: Type.Optional(nullableString()),
    zip: Type.Optional(nullableString()),
    addressLine: Type.Optional(nullableString()),
  },
  { additionalProperties: true },
);
const bankPayload = (description: string) =>
  payload(
    {
      walletId: Type.Union([Type.String(), Type.Null()], {
        description: 'the wallet credited or debited; null only on BANK_DEPOSIT_TRANSACTION_FAILED for a deposit that could not be routed to any wallet',
      }),
      bankTransactionId: Type.String({ description: 'the child bank transaction record' }),
      parentBankTransactionId: Type.String({ description: 'the bank transaction (the parent of every record of one payment)' }),
      amount: Type.String({ description: 'decimal string' }),
      asset: Type.String(),
      bankNetwork: Type.Union([Type.Literal('ACH'), Type.Literal('FEDWIRE'), Type.Literal('SWIFT'), Type.Literal('UNSPECIFIED'), Type.Null()]),
      counterparty: Type.Union([bankCounterparty, Type.Null()], { description: 'the sender for deposits; null for withdrawals' }),
      returnCode: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'on a *_FAILED event: the ACH R-code or ISO 20022 reason code' })),
      failureReason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'on a *_FAILED event: why, for people' })),
    },
    description,
  );

const kycPayload = (description: string, extra: Record<string, TSchema> = {}) =>
  payload({ customerId: Type.String(), status: Type.String({ description: 'onboarding status' }), onboardingId: Type.String(), ...extra }, description);
const kybPayload = (description: string) =>
  payload({ customerId: Type.String(), status: Type.String(), businessOnboardingId: Type.String() }, description);

const minor = (description: string) => Type.Optional(Type.Integer({ description }));
const optionalString = (description?: string) => Type.Optional(Type.String(description === undefined ? {} : { description }));
const coopAuthPayload = (description: string) =>
  payload(
    {
      mti: Type.String({ description: 'ISO 8583 message type indicator' }),
      stan: optionalString('system trace audit number'),
      rrn: optionalString('retrieval reference number'),
      timestamp: optionalString(),
      amountMinor: minor('amount in minor units of `currency` (DE4); a decision answer\'s approvedAmountMinor is in the same unit'),
      billingAmountMinor: minor('billing amount in minor units of the card\'s currency (DE6, foreign currencies)'),
      currency: optionalString('currency acronym, not the numeric code'),
      processingCode: optionalString(),
      mcc: optionalString(),
      posEntryMode: optionalString(),
      posConditionCode: optionalString(),
      terminalId: optionalString(),
      merchantId: optionalString(),
      merchantNameLocation: optionalString(),
      acquirerId: optionalString(),
      cardReferenceId: optionalString(),
      posData: optionalString(),
      networkData: optionalString(),
      tpi: optionalString(),
      networkDataRef: optionalString('stable lifecycle id from positions 9-24 of DE63; correlate messages by it'),
      original: Type.Optional(
        Type.Object({ mti: optionalString(), stan: optionalString(), rrn: optionalString() }, { additionalProperties: true }),
      ),
      raw: Type.Optional(
        Type.Object(
          { isoMti: Type.String(), fields: Type.Object({}, { additionalProperties: true, description: 'raw ISO 8583 fields' }) },
          { additionalProperties: true },
        ),
      ),
      responseCode: optionalString(),
      authCode: optionalString(),
      message: optionalString(),
      approvedAmountMinor: minor('advices: what OpenBaaS held, posted or reversed, in minor units of the card\'s currency'),
      cardId: optionalString('OpenBaaS addition: the card'),
      cardTransactionId: optionalString('OpenBaaS addition: the card transaction record this message produces; dedupe decision requests on it'),
      parentCardTransactionId: optionalString('OpenBaaS addition: the lifecycle (one swipe) it belongs to'),
      partialApprovalCapable: Type.Optional(Type.Boolean({ description: 'OpenBaaS addition: the terminal takes a partial approval (answer approvedAmountMinor below amountMinor)' })),
      availableMinor: minor('OpenBaaS addition, decision requests: the AVAILABLE balance the system checks found, minor units'),
    },
    description,
  );

const cardPayload = (description: string) =>
  payload(
    {
      cardId: Type.String(),
      cardTransactionId: Type.String({ description: 'the child card transaction record' }),
      parentCardTransactionId: optionalString('groups the records of one card transaction'),
      cardType: Type.Optional(Type.Union([Type.Literal('CREDIT'), Type.Literal('DEBIT')])),
      type: optionalString('PRE_AUTHORIZATION, PRE_AUTH_COMPLETION, REVERSAL_ADVICE, PURCHASE, ...'),
      operation: Type.Optional(Type.Union([Type.Literal('CREDIT'), Type.Literal('DEBIT')])),
      status: Type.Optional(
        Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED'), Type.Literal('CANCELLED')]),
      ),
      amount: Type.Optional(Type.Number({ description: 'major units' })),
      heldAmount: Type.Optional(
        Type.Number({ description: "what the lifecycle's hold reserves after this message, major units (OpenBaaS addition): below `amount` when an advice recorded more than the card's funds could hold, 0 once nothing is held" }),
      ),
      asset: optionalString('currency acronym'),
      amounts: Type.Optional(
        Type.Object(
          {
            transaction: Type.Number({ description: 'total (DE4), major units' }),
            transactionCurrency: Type.String({ description: 'DE49' }),
            surcharge: Type.Optional(Type.Number({ description: 'DE28, included in the total' })),
            fees: Type.Optional(
              Type.Array(
                Type.Object({ type: Type.String(), amount: Type.Number(), currency: optionalString() }, { additionalProperties: true }),
                { description: 'entries of DE54' },
              ),
            ),
            settlement: Type.Optional(Type.Number({ description: 'only when transactionCurrency is not the card\'s: DE6, billed to the card, major units of settlementCurrency' })),
            settlementCurrency: optionalString('with settlement: the card\'s currency'),
            conversionRate: Type.Optional(Type.Number({ description: 'with settlement, when transaction is not 0: settlement per unit of transactionCurrency, rounded half up to 6 decimals' })),
          },
          { additionalProperties: true },
        ),
      ),
      retrievalReferenceNo: optionalString('DE37'),
      merchant: Type.Optional(
        Type.Object(
          { name: optionalString(), mcc: optionalString(), city: optionalString(), state: optionalString(), country: optionalString() },
          { additionalProperties: true },
        ),
      ),
      timestamp: optionalString('ISO 8601'),
      responseCode: optionalString('DE39 answered to the network (OpenBaaS addition)'),
      declineReason: optionalString('why a FAILED record was declined, for example INSUFFICIENT_FUNDS (OpenBaaS addition)'),
      networkDataRef: optionalString('DE63 positions 9-24 (OpenBaaS addition)'),
    },
    description,
  );

const cryptoPayload = (description: string) =>
  payload(
    {
      walletId: Type.String(),
      cryptoTransactionId: Type.String({ description: 'the child crypto transaction record' }),
      parentCryptoTransactionId: Type.String({ description: 'the deposit or withdrawal' }),
      asset: Type.String(),
      network: Type.Union([Type.Literal('BITCOIN'), Type.Literal('ETHEREUM'), Type.Literal('TRON'), Type.Literal('SOLANA')]),
      amount: Type.String({ description: 'decimal string, as the deposit or withdrawal request named it' }),
      fee: Type.String({ description: 'decimal string, the network fee of the withdrawal (zero for deposits): charged to the wallet when it completes; on a FAILED withdrawal nothing was charged (the whole hold went back)' }),
      txHash: Type.String({ description: 'the chain transaction in the network\'s format' }),
      confirmations: Type.Integer(),
      status: Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED')]),
      failureReason: nullableString('why it failed, on the FAILED events'),
    },
    description,
  );

export const eventPayloadSchemas = {
  WEBHOOK_CREATED: webhookPayload('A webhook subscription was created.'),
  WEBHOOK_UPDATED: webhookPayload('A webhook subscription was changed (PATCH), its secret rotated, or OpenBaaS disabled it after its endpoint failed for WEBHOOK_DISABLE_AFTER_MS.'),
  WEBHOOK_DELETED: webhookPayload('A webhook subscription was deleted (DELETE /v1/webhooks/:id).'),
  CUSTOMER_CREATED: payload({ customerId: Type.String() }, 'A customer was created.'),
  VIRTUAL_ACCOUNT_CREATED: payload({ customerId: Type.String(), walletId: Type.String() }, 'A wallet received a virtual account.'),
  ASSET_TRADE_SUCCESSFUL: tradePayload('A quote was executed.'),
  ASSET_TRADE_FAIL: tradePayload('A quote failed to execute.'),
  LTV_LIQUIDATED: ltvLiquidatedPayload,
  LTV_LIQUIDATION_WARNING: ltvPayload('The loan-to-value ratio is close to the liquidation threshold.'),
  LTV_URGENT_COLLATERAL_NEEDED: ltvPayload('More collateral is needed urgently.'),
  LTV_COLLATERAL_NEEDED: ltvPayload('More collateral is needed.'),
  LTV_PURCHASE_RESTRICTED: ltvPayload('Purchases on the credit line are restricted until the ratio improves.'),
  LTV_THRESHOLD_WARNING: ltvPayload('The loan-to-value ratio crossed a warning threshold.'),
  BANK_DEPOSIT_TRANSACTION_PENDING: bankPayload('A bank deposit was received and is pending clearing.'),
  BANK_DEPOSIT_TRANSACTION_COMPLETED: bankPayload('A bank deposit cleared.'),
  BANK_DEPOSIT_TRANSACTION_FAILED: bankPayload('A bank deposit was returned or rejected (before it settled, or, on ACH, after: then it follows the COMPLETED event).'),
  BANK_WITHDRAWAL_TRANSACTION_PENDING: bankPayload('A bank withdrawal was initiated; its funds are reserved.'),
  BANK_WITHDRAWAL_TRANSACTION_COMPLETED: bankPayload('A bank withdrawal completed.'),
  BANK_WITHDRAWAL_TRANSACTION_FAILED: bankPayload('A bank withdrawal failed or was returned (a return after settlement follows the COMPLETED event).'),
  INTERNAL_TRANSACTION_COMPLETED: payload(
    { walletId: Type.String(), transactionId: Type.String({ description: 'the ledger transaction of this wallet (debit or credit side)' }) },
    'An internal transfer completed; one event per wallet (source and destination).',
  ),
  CUSTOMER_KYC_STARTED: kycPayload('KYC started: SDK links generated; the person must complete verification.'),
  CUSTOMER_KYC_SDK_FLOW_REQUIRED: kycPayload('SDK links generated: the person must complete the SDK flow.'),
  CUSTOMER_KYC_SDK_FLOW_COMPLETED: kycPayload('The person finished the SDK flow; verification was submitted.'),
  CUSTOMER_KYC_FINISHED: kycPayload('KYC reached its final outcome; read status (APPROVED, DENIED_COMPLIANCE, ...).'),
  CUSTOMER_KYC_RESTARTED: kycPayload('KYC was re-run; a new onboarding replaces the previous one.', { previousOnboardingId: Type.String() }),
  CUSTOMER_KYC_SDK_EXPIRED: kycPayload('The SDK links expired before the person completed verification.'),
  CUSTOMER_KYC_ERROR: kycPayload('A system error occurred during verification.', { errorType: optionalString(), errorMessage: optionalString() }),
  CUSTOMER_KYB_STARTED: kybPayload('KYB started for a business customer.'),
  CUSTOMER_KYB_FINISHED: kybPayload('KYB reached its final outcome; read status.'),
  COOP_AUTH_0100: coopAuthPayload('Authorization request (MTI 0100): a synchronous decision request to the cooperative-authorization endpoint.'),
  COOP_AUTH_0120: coopAuthPayload('Authorization advice (MTI 0120).'),
  COOP_AUTH_0200: coopAuthPayload('Financial transaction request (MTI 0200): a synchronous decision request.'),
  COOP_AUTH_0220: coopAuthPayload('Authorization completion (MTI 0220); the RRN may differ from the 0100.'),
  COOP_AUTH_0420: coopAuthPayload('Reversal (MTI 0420).'),
  CARD_TRANSACTION_PENDING: cardPayload('A card authorization was approved with a hold.'),
  CARD_TRANSACTION_COMPLETED: cardPayload('A card transaction settled.'),
  CARD_TRANSACTION_FAILED: cardPayload('A card authorization was declined; no hold.'),
  CARD_TRANSACTION_CANCELLED: cardPayload('A card transaction was reversed or voided.'),
  CRYPTO_DEPOSIT_TRANSACTION_PENDING: cryptoPayload('A crypto deposit was detected on chain and awaits confirmations.'),
  CRYPTO_DEPOSIT_TRANSACTION_COMPLETED: cryptoPayload('A crypto deposit reached its confirmations.'),
  CRYPTO_DEPOSIT_TRANSACTION_FAILED: cryptoPayload('A crypto deposit failed.'),
  CRYPTO_WITHDRAWAL_TRANSACTION_PENDING: cryptoPayload('A crypto withdrawal was initiated.'),
  CRYPTO_WITHDRAWAL_TRANSACTION_COMPLETED: cryptoPayload('A crypto withdrawal was confirmed on chain.'),
  CRYPTO_WITHDRAWAL_TRANSACTION_FAILED: cryptoPayload('A crypto withdrawal failed.'),
} satisfies Record<EventType, TSchema>;

/**
 * The type of the test event sent by POST /v1/webhooks/:id/test. It is not part of the event
 * stream (GET /v1/events never lists it) and cannot be subscribed to: every subscription can be
 * tested.
 */
export const testEventType = 'WEBHOOK_TEST';
export const testEventPayloadSchema = payload(
  { webhookId: Type.String(), test: Type.Literal(true) },
  'Sent only by POST /v1/webhooks/:id/test, whatever the subscribed event types; never part of GET /v1/events.',
);

const ajv = new Ajv({ allErrors: true, strict: true, keywords: ['example'] });
const validators = new Map<string, ValidateFunction>();

/**
 * The compiled check of one event type's payload, compiled when first asked for: compiling all of
 * them took a fifth of the program's start (about 0.2 s of CPU for every `openbaas` command and
 * every server start, until 2026-12-07). A test compiles every one (event-payloads.test.ts).
 */
export function eventPayloadValidator(type: string): ValidateFunction | undefined {
  let validate = validators.get(type);
  if (validate === undefined) {
    if (!Object.hasOwn(eventPayloadSchemas, type)) return undefined;
    validate = ajv.compile((eventPayloadSchemas as Record<string, TSchema>)[type] as object);
    validators.set(type, validate);
  }
  return validate;
}

/** A payload that breaks its schema is a bug in the module emitting it: fail loudly. */
export function assertEventPayload(type: EventType, data: Record<string, unknown>): void {
  const validate = eventPayloadValidator(type);
  if (!validate) throw new AssertionError(`no payload schema for event type ${type}`);
  if (!validate(data)) {
    const problems = (validate.errors ?? []).map((error) => `${error.instancePath || '(data)'} ${error.message ?? 'is invalid'}`);
    throw new AssertionError(`event ${type}: payload does not match its schema: ${problems.join('; ')}`);
  }
}
