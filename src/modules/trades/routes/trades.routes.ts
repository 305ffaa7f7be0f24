import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import { writeBatchSizing, type Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { requestContext } from '../../../platform/http/idempotency.js';
import type { Metrics } from '../../../platform/http/metrics.js';
import { WriteBatcher } from '../../../platform/http/write-batcher.js';
import { defaultAssetPairs } from '../asset-pairs.js';
import { executionWriteBatch, OpenQuotes, quoteWriteBatch, type ExecuteRequest, type LoadedExecutions, type LoadedQuotes } from '../trade-batches.js';
import { getQuote, priceQuoteRequest, type ExecutionView, type PricedQuoteRequest, type QuoteView, type TradesRuntime } from '../trades.service.js';

const tags = ['Trades'];
/** The `route` labels of the trade routes' batched writes in openbaas_write_batches_total. */
const quoteRoute = '/v1/trades/quotes';
const executeRoute = '/v1/trades/quotes/:quoteId/execute';
const exampleCustomer = '019c8f2e-5a09-7b2c-8d3e-9f0a1b2c3d4e';
const exampleWallet = '019c8f2e-6b1a-7c3d-9e4f-0a1b2c3d4e5f';
const exampleQuote = '019c9a10-2b3c-7d4e-8f50-6a7b8c9d0e1f';

const AssetPairSchema = Type.Object(
  {
    id: Type.String({ description: 'stable id of the pair (the same for every client and release)' }),
    symbol: Type.String({ description: 'base asset first', examples: ['BTC-USD'] }),
    baseAsset: Type.String({ examples: ['BTC'] }),
    quoteAsset: Type.String({ examples: ['USD'] }),
    minAmount: Type.String({ description: 'smallest trade, in the base asset', examples: ['0.00000100'] }),
    maxAmount: Type.String({ description: 'largest trade, in the base asset', examples: ['100.00000000'] }),
    tradable: Type.Boolean(),
    feeRate: Type.String({ description: 'share of the traded amount charged as the fee', examples: ['0.001'] }),
  },
  { title: 'AssetPair' },
);

const assetField = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `${description}: an asset id (UUID), a crypto symbol or an ISO 4217 code`, examples: [example] });

const QuoteBody = Type.Object(
  {
    customerId: Text.id({ description: 'the customer who trades (404 when not a customer of this client)', examples: [exampleCustomer] }),
    fromAssetId: assetField('the asset the customer gives up', 'USD'),
    toAssetId: assetField('the asset the customer receives', 'BTC'),
    fromAmount: Text.amount({ description: 'how much of the from-asset the customer gives up, a decimal string in its scale', examples: ['1000.00'] }),
    feeAssetId: assetField('the asset the fee is charged in: the from or the to asset', 'USD'),
    side: Type.Union([Type.Literal('buy'), Type.Literal('sell')], { description: 'relative to the pair\'s base asset: direct sells it, reverse buys it' }),
    direction: Type.Union([Type.Literal('direct'), Type.Literal('reverse')], { description: 'direct: from the base asset to the quote asset; reverse: from quote to base' }),
  },
  {
    additionalProperties: false,
    title: 'TradeQuoteRequest',
    examples: [{ customerId: exampleCustomer, fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', feeAssetId: 'USD', side: 'buy', direction: 'reverse' }],
  },
);

const quoteProperties = {
  quoteId: Type.String({ description: 'the quote to execute' }),
  customerId: Type.String(),
  pairSymbol: Type.String({ examples: ['BTC-USD'] }),
  direction: Type.Union([Type.Literal('direct'), Type.Literal('reverse')]),
  side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
  fromAsset: Type.String({ examples: ['USD'] }),
  toAsset: Type.String({ examples: ['BTC'] }),
  feeAsset: Type.String({ examples: ['USD'] }),
  fromAmount: Type.String({ examples: ['1000.00'] }),
  amountToSpend: Type.String({ description: 'the part of fromAmount exchanged at the price (fromAmount less a fee in the from-asset)', examples: ['999.00'] }),
  pricePerUnit: Type.String({ description: 'the executed price of one base unit in quote units', examples: ['60000.00'] }),
  fee: Type.String({ description: 'the fee rate', examples: ['0.001'] }),
  feeAmount: Type.String({ description: 'the fee, in feeAsset (rounded up)', examples: ['1.00'] }),
  totalPrice: Type.String({ description: 'debited from the wallet, in the from-asset (= fromAmount)', examples: ['1000.00'] }),
  totalToReceive: Type.String({ description: 'credited to the wallet, in the to-asset (rounded down)', examples: ['0.01665000'] }),
  expiresAt: Type.String({ format: 'date-time', description: 'by the client\'s clock; from this instant the quote cannot be executed' }),
  disclaimer: Type.String(),
  status: Type.Union([Type.Literal('OPEN'), Type.Literal('EXECUTED'), Type.Literal('FAILED'), Type.Literal('EXPIRED')], {
    description:
      'OPEN until an execution is attempted (EXECUTED, or FAILED when the liquidity provider refused it); EXPIRED when read (GET) once expiresAt has passed on the client\'s clock without one',
  }),
  createdAt: Type.String({ format: 'date-time' }),
};

const QuoteSchema = Type.Object(quoteProperties, { title: 'TradeQuote' });

const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const ExecutionSchema = Type.Object(
  {
    quoteId: Type.String(),
    parentTransactionId: Type.String({ description: 'the trade\'s parent transaction: GET /v1/transactions?parentTransactionId= lists its records' }),
    success: Type.Boolean({ description: 'false when the liquidity provider refused the trade (nothing moved)' }),
    status: Type.Union([Type.Literal('COMPLETED'), Type.Literal('FAILED')]),
    walletId: Type.String(),
    txType: Type.Literal('TRADE'),
    reference: Type.String({ description: 'the quote the execution filled' }),
    filledPrice: nullableString('the price filled (the quote\'s pricePerUnit); null when the trade failed'),
    totalSourceAmount: nullableString('debited, in sourceAsset; null when the trade failed'),
    totalTargetAmount: nullableString('credited, in targetAsset; null when the trade failed'),
    totalFeeAmount: nullableString('the fee, in feeAsset; null when the trade failed'),
    sourceAsset: Type.String(),
    targetAsset: Type.String(),
    feeAsset: Type.String(),
    sourceAssetTransferId: nullableString('the wallet transaction record of the source debit (purpose USER_TRADE)'),
    targetAssetTransferId: nullableString('the wallet transaction record of the target credit (purpose USER_TRADE)'),
    feeTransferId: nullableString('the wallet transaction record of the fee (purpose TRADE_FEE_SETTLEMENT); null without a fee'),
    error: Type.Union([Type.Object({ code: Type.String({ examples: ['LIQUIDITY_UNAVAILABLE'] }), message: Type.String() }), Type.Null()]),
    executedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'TradeExecution' },
);

const QuoteDetailSchema = Type.Object({ ...quoteProperties, execution: Type.Union([ExecutionSchema, Type.Null()]) }, { title: 'TradeQuoteDetail' });

const ExecuteBody = Type.Object(
  { walletId: Text.id({ description: 'a wallet of the quote\'s customer (404 otherwise)', examples: [exampleWallet] }) },
  { additionalProperties: false, title: 'TradeExecuteRequest', examples: [{ walletId: exampleWallet }] },
);

const QuoteParams = Type.Object({ quoteId: Text.id({ examples: [exampleQuote] }) });

export function registerTradeRoutes(app: App, deps: Deps, runtime: TradesRuntime, metrics: Metrics): void {
  // Quotes and executions are written in batches, as internal transfers are, each route with its
  // own batcher (trade-batches.ts); the executions know the quotes this process gave.
  const openQuotes = new OpenQuotes();
  const batcherOptions = writeBatchSizing(deps);
  const quoteWrites = new WriteBatcher<PricedQuoteRequest, QuoteView, LoadedQuotes>(deps, {
    ...batcherOptions,
    ...quoteWriteBatch(runtime, openQuotes),
    observe: (path, committed) => metrics.writeBatch(quoteRoute, path, committed),
  });
  const executionWrites = new WriteBatcher<ExecuteRequest, ExecutionView, LoadedExecutions>(deps, {
    ...batcherOptions,
    ...executionWriteBatch(runtime, openQuotes),
    observe: (path, committed) => metrics.writeBatch(executeRoute, path, committed),
  });

  app.get(
    '/v1/trades/asset-pairs',
    {
      schema: {
        operationId: 'trades.listAssetPairs',
        tags,
        summary: 'List the asset pairs that can be traded',
        description: 'One entry per unordered pair of assets, base asset first; limits are in the base asset. A quote may trade a pair in either order.',
        response: { 200: Envelope(Type.Array(AssetPairSchema)) },
      },
    },
    async (request) => {
      authOf(request);
      return {
        message: 'Asset pairs retrieved',
        data: defaultAssetPairs.map(({ id, symbol, baseAsset, quoteAsset, minAmount, maxAmount, tradable, feeRate }) => ({ id, symbol, baseAsset, quoteAsset, minAmount, maxAmount, tradable, feeRate })),
        traceId: String(request.id),
      };
    },
  );

  app.post(
    '/v1/trades/quotes',
    {
      schema: {
        operationId: 'trades.createQuote',
        tags,
        summary: 'Create an executable quote',
        description:
          'Prices a trade at the price feed\'s mid price (less the configured spread), fixes every amount and stores the quote until expiresAt ' +
          '(OPENBAAS_QUOTE_TTL_SECONDS of the client\'s clock). Rules, first failing wins: known assets (400 UNKNOWN_ASSET), fee asset is the from ' +
          'or to asset (400), fromAmount within the asset scale (400 INVALID_AMOUNT), a tradable pair joins the assets (422 PAIR_NOT_TRADABLE), ' +
          'direction matches (400 DIRECTION_MISMATCH), side matches (400 SIDE_MISMATCH), customer exists (404), a price feed is connected ' +
          '(503 PRICE_FEED_UNAVAILABLE in production), the base amount within the pair\'s range (422 AMOUNT_OUT_OF_RANGE). Honours Idempotency-Key.',
        body: QuoteBody,
        response: { 201: Envelope(QuoteSchema) },
      },
    },
    async (request, reply) => {
      // Priced and stamped at the same client time.
      const context = requestContext(request, deps);
      const priced = await priceQuoteRequest(runtime, context, request.body);
      await quoteWrites.submit(request, reply, priced, context);
    },
  );

  app.get(
    '/v1/trades/quotes/:quoteId',
    {
      schema: {
        operationId: 'trades.getQuote',
        tags,
        summary: 'Retrieve a quote and its execution',
        params: QuoteParams,
        response: { 200: Envelope(QuoteDetailSchema) },
      },
    },
    async (request) => {
      const context = requestContext(request, deps);
      return { message: 'Quote retrieved', data: await getQuote(deps.db, context.clientId, request.params.quoteId, context.now), traceId: String(request.id) };
    },
  );

  app.post(
    '/v1/trades/quotes/:quoteId/execute',
    {
      schema: {
        operationId: 'trades.executeQuote',
        tags,
        summary: 'Execute a quote',
        description:
          'Moves the quote\'s amounts in one ledger transaction under one parent transaction: the source debit and the target credit (purpose ' +
          'USER_TRADE) against the client\'s TRADING account and the fee (TRADE_FEE_SETTLEMENT) to its FEES account, and records ' +
          'ASSET_TRADE_SUCCESSFUL. Rules, first failing wins: quote exists (404), wallet of the quote\'s customer (404), not executed before ' +
          '(409 QUOTE_ALREADY_EXECUTED; an Idempotency-Key replay returns the first response), not expired by the client\'s clock (422 ' +
          'QUOTE_EXPIRED), enough AVAILABLE from-asset (422 INSUFFICIENT_FUNDS). In the sandbox a liquidity-failure fromAmount answers 201 with ' +
          'success false and error.code LIQUIDITY_UNAVAILABLE, nothing moved, ASSET_TRADE_FAIL.',
        params: QuoteParams,
        body: ExecuteBody,
        response: { 201: Envelope(ExecutionSchema) },
      },
    },
    async (request, reply) => {
      await executionWrites.submit(request, reply, { quoteId: request.params.quoteId, walletId: request.body.walletId });
    },
  );
}
