import { Type, type Static, type TSchema } from 'typebox';

/**
 * The response schema of GET /v1/traces/:traceId, and the types the service builds from it (one
 * source for the OpenAPI document, the SDK and the code).
 */

/** The most items a trace shows; a longer one is cut after the earliest ones, with `truncated`. */
export const traceItemsMax = 1000;

const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });
const at = (description: string) => Type.String({ format: 'date-time', description });
const BalanceSide = Type.Object(
  {
    accountId: Type.String({ description: 'the ledger account (a wallet\'s account in one asset, or a shard of a system account)' }),
    balance: Type.String({ description: 'AVAILABLE, RESERVED or PENDING', examples: ['AVAILABLE'] }),
  },
  { title: 'TraceEntrySide' },
);

const RequestItem = Type.Object(
  {
    kind: Type.Literal('REQUEST'),
    at: at('when the request started, by the client\'s clock'),
    id: Type.String({ description: 'the request log row' }),
    method: Type.String({ examples: ['POST'] }),
    path: Type.String({ description: 'the URL path, without the query string', examples: ['/v1/sandbox/bank-deposits'] }),
    operationId: Nullable(Type.String(), 'the route\'s operationId'),
    statusCode: Type.Integer(),
    durationMs: Type.Number({ description: 'from the request\'s arrival to the end of its response, in milliseconds' }),
    idempotencyKey: Nullable(Type.String()),
    errorCode: Nullable(Type.String(), 'the `code` of the error body (status 400 or more)'),
  },
  { title: 'TraceRequestItem' },
);

const LedgerTransferItem = Type.Object(
  {
    kind: Type.Literal('LEDGER_TRANSFER'),
    at: at('when the transfer was posted, by the client\'s clock'),
    id: Type.String(),
    transferKind: Type.String({
      description: 'TRANSFER, HOLD_PLACE, HOLD_INCREMENT, HOLD_CAPTURE, HOLD_RELEASE, HOLD_EXPIRE, PENDING_CREDIT, PENDING_CLEAR or PENDING_FAIL',
      examples: ['PENDING_CREDIT'],
    }),
    parentTransactionId: Nullable(Type.String()),
    holdId: Nullable(Type.String()),
    description: Nullable(Type.String()),
    entries: Type.Array(
      Type.Object(
        {
          asset: Type.String({ examples: ['USD'] }),
          amount: Type.String({ description: 'decimal string in the asset\'s major units', examples: ['25.00'] }),
          debit: BalanceSide,
          credit: BalanceSide,
        },
        { title: 'TraceLedgerEntry' },
      ),
    ),
  },
  { title: 'TraceLedgerTransferItem' },
);

const RecordItem = Type.Object(
  {
    kind: Type.Literal('RECORD'),
    at: at('when the record was written, by the client\'s clock'),
    id: Type.String(),
    recordType: Type.Literal('WALLET_TRANSACTION'),
    walletId: Type.String(),
    ledgerTransferId: Type.String({ description: 'the LEDGER_TRANSFER item that wrote it' }),
    parentTransactionId: Type.String(),
    type: Type.String({ examples: ['DEPOSIT'] }),
    purpose: Type.String({ examples: ['PENDING_CREDIT'] }),
    operation: Type.String({ examples: ['CREDIT'] }),
    balanceType: Type.String({ examples: ['PENDING'] }),
    status: Type.String({ examples: ['PENDING'] }),
    amount: Type.String({ examples: ['25.00'] }),
    asset: Type.String({ examples: ['USD'] }),
  },
  { title: 'TraceRecordItem' },
);

const EventItem = Type.Object(
  {
    kind: Type.Literal('EVENT'),
    at: at('the event\'s createdAt, by the client\'s clock'),
    id: Type.String(),
    type: Type.String({ examples: ['BANK_DEPOSIT_TRANSACTION_PENDING'] }),
    data: Type.Object({}, { additionalProperties: true, description: 'the event\'s payload, as GET /v1/events returns it' }),
  },
  { title: 'TraceEventItem' },
);

const DeliveryItem = Type.Object(
  {
    kind: Type.Literal('DELIVERY'),
    at: at('when the delivery was created (with its event), by the client\'s clock'),
    id: Type.String(),
    eventId: Type.String(),
    eventType: Type.String(),
    subscriptionId: Type.String(),
    status: Type.String({ description: 'PENDING, DELIVERED, FAILED or CANCELLED' }),
    attemptCount: Type.Integer(),
    nextAttemptAt: Nullable(Type.String({ format: 'date-time' }), 'when PENDING: the earliest next attempt, by the client\'s clock'),
  },
  { title: 'TraceDeliveryItem' },
);

const DeliveryAttemptItem = Type.Object(
  {
    kind: Type.Literal('DELIVERY_ATTEMPT'),
    at: at('when the attempt was made, by the server\'s clock (not moved by the sandbox clock)'),
    id: Type.String({ description: '`deliveryId:attemptNumber`' }),
    deliveryId: Type.String(),
    attemptNumber: Type.Integer(),
    succeeded: Type.Boolean(),
    httpStatus: Nullable(Type.Integer()),
    latencyMs: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    responseBody: Nullable(Type.String()),
  },
  { title: 'TraceDeliveryAttemptItem' },
);

export const TraceSchema = Type.Object(
  {
    traceId: Type.String(),
    startedAt: Type.String({ format: 'date-time', description: 'the first item\'s `at`' }),
    endedAt: Type.String({ format: 'date-time', description: 'the last item\'s `at`' }),
    truncated: Type.Boolean({ description: `true when the trace has more than ${traceItemsMax} items: only the earliest ${traceItemsMax} are shown` }),
    items: Type.Array(Type.Union([RequestItem, LedgerTransferItem, RecordItem, EventItem, DeliveryItem, DeliveryAttemptItem]), {
      description: 'sorted by `at`; items with the same `at` in the order REQUEST, LEDGER_TRANSFER, RECORD, EVENT, DELIVERY, DELIVERY_ATTEMPT, then by id',
    }),
  },
  { title: 'Trace' },
);

export type TraceView = Static<typeof TraceSchema>;
export type TraceItem = TraceView['items'][number];
