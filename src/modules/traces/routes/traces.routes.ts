import { Type, type TSchema } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf, traceIdPattern } from '../../../platform/http/context.js';
import { Envelope } from '../../../platform/http/envelope.js';
import { flushRequestLog, traceRouteUrl } from '../request-log.js';
import { readTrace, traceItemsMax } from '../traces.service.js';

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

const TraceSchema = Type.Object(
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

export function registerTraceRoutes(app: App, deps: Deps): void {
  app.get(
    traceRouteUrl,
    {
      schema: {
        operationId: 'traces.get',
        tags: ['Traces'],
        summary: 'Retrieve a trace: everything one trace id caused, in time order',
        description:
          'Every request has a trace id (the X-Trace-Id header it was sent with, when it matches ^[A-Za-z0-9._:-]{1,128}$, ' +
          'else a new UUID; answered in the X-Trace-Id header and the `traceId` of every body). Background jobs (timers, the ' +
          'block and delivery workers) run with trace ids of their own. The trace lists the request itself (from the request log), ' +
          'the ledger transfers with their entries, the wallet transaction records they wrote, the events recorded, and the webhook ' +
          `deliveries and attempts of those events. At most ${traceItemsMax} items (see truncated). Reading a trace is not itself ` +
          'logged. An unknown trace id, or another client\'s, answers 404 NOT_FOUND. See docs/traces.md.',
        params: Type.Object({
          traceId: Type.String({ minLength: 1, maxLength: 128, pattern: traceIdPattern.source, description: 'a trace id, as the X-Trace-Id header gives it' }),
        }),
        response: { 200: Envelope(TraceSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      // The requests that made the trace may still be in the request log's buffer.
      await flushRequestLog(app);
      const data = await readTrace(deps.db, clientId, request.params.traceId);
      return { message: 'Trace retrieved', data, traceId: String(request.id) };
    },
  );
}
