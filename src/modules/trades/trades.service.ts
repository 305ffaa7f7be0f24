import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Mode } from '../../platform/config.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError } from '../../platform/http/errors.js';
import { assert } from '../../platform/assert.js';
import { isUuid } from '../../platform/ids.js';
import { findAsset, type Asset } from '../../platform/money/assets.js';
import { defaultAssetPairs, registryAssetCodeForId } from './asset-pairs.js';
import type { PriceProvider } from './prices.js';
import {
  computeQuote,
  isQuoteExpired,
  quoteDisclaimer,
  quoteFigures,
  resolveQuoteRequest,
  type QuoteAmounts,
  type QuoteRequestFields,
  type ResolvedQuoteRequest,
  type TradeDirection,
  type TradeSide,
} from './quote-math.js';
import type { QuoteStatus, TradeQuotesTable } from './trades.tables.js';
import './trades.tables.js';

type QuoteRow = Selectable<TradeQuotesTable>;

/** What the trade routes need besides the database: the mode, the price feed and the quote settings. */
export interface TradesRuntime {
  mode: Mode;
  prices: PriceProvider;
  quoteTtlSeconds: number;
  spreadBps: number;
}

/** The `type` of a trade's wallet records, and the response's `txType`. */
export const tradeTransactionType = 'TRADE';
/** Purposes of a trade's wallet records (contract §12.9). */
export const tradePurpose = 'USER_TRADE';
export const tradeFeePurpose = 'TRADE_FEE_SETTLEMENT';
/** The code inside a refused execution's `error` (a 201 with `success: false`, not an error response). */
export const liquidityUnavailableCode = 'LIQUIDITY_UNAVAILABLE';

export interface QuoteRequest extends QuoteRequestFields {
  customerId: string;
}

export interface QuoteView {
  quoteId: string;
  customerId: string;
  pairSymbol: string;
  direction: TradeDirection;
  side: TradeSide;
  fromAsset: string;
  toAsset: string;
  feeAsset: string;
  fromAmount: string;
  amountToSpend: string;
  pricePerUnit: string;
  fee: string;
  feeAmount: string;
  totalPrice: string;
  totalToReceive: string;
  expiresAt: string;
  disclaimer: string;
  /** As stored, except EXPIRED: an OPEN quote read once its expiresAt has passed on the client's clock (getQuote). */
  status: QuoteStatus | 'EXPIRED';
  createdAt: string;
}

export interface ExecutionView {
  quoteId: string;
  parentTransactionId: string;
  success: boolean;
  status: 'COMPLETED' | 'FAILED';
  walletId: string;
  txType: typeof tradeTransactionType;
  /** The quote the execution filled: the client's reference for the trade. */
  reference: string;
  filledPrice: string | null;
  totalSourceAmount: string | null;
  totalTargetAmount: string | null;
  totalFeeAmount: string | null;
  sourceAsset: string;
  targetAsset: string;
  feeAsset: string;
  sourceAssetTransferId: string | null;
  targetAssetTransferId: string | null;
  feeTransferId: string | null;
  error: { code: string; message: string } | null;
  executedAt: string;
}

export interface QuoteDetailView extends QuoteView {
  execution: ExecutionView | null;
}

/**
 * A quote request checked and priced, with every amount fixed, or the refusal found on the way;
 * made before the quote's transaction opens, since the price feed is an outside system (asked
 * outside any transaction). `stage` says where the refusal came from in the rules' order: the
 * request's own rules come before the customer's (404), the pricing (the feed's answer, the
 * amounts' range) after it.
 */
export type PricedQuoteRequest =
  | { ok: true; customerId: string; amounts: QuoteAmounts }
  | { ok: false; customerId: string; error: AppError; stage: 'request' | 'price' };

/**
 * Checks a quote request against the catalogue (resolveQuoteRequest's rules, in its order), asks
 * the price feed for the pair's mid price and computes the quote's amounts (the pair's range).
 * Never throws an AppError: the refusal is returned, so the write that follows records it under
 * the request's Idempotency-Key like any other answer.
 */
export async function priceQuoteRequest(runtime: TradesRuntime, context: RequestContext, request: QuoteRequest): Promise<PricedQuoteRequest> {
  let resolved: ResolvedQuoteRequest;
  try {
    resolved = resolveQuoteRequest(request, { mode: runtime.mode, assetCodeForId: registryAssetCodeForId, pairs: defaultAssetPairs });
  } catch (error) {
    if (error instanceof AppError) return { ok: false, customerId: request.customerId, error, stage: 'request' };
    throw error;
  }
  try {
    const midPrice = await runtime.prices.midPrice({ clientId: context.clientId, symbol: resolved.pair.symbol, at: context.now });
    if (!midPrice || midPrice.numerator === 0n) {
      const error = new AppError('PAIR_NOT_TRADABLE', `the price feed has no price for ${resolved.pair.symbol} at the moment; try again later`);
      return { ok: false, customerId: request.customerId, error, stage: 'price' };
    }
    return { ok: true, customerId: request.customerId, amounts: computeQuote({ ...resolved, midPrice, spreadBps: runtime.spreadBps }) };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, customerId: request.customerId, error, stage: 'price' };
    throw error;
  }
}

async function findQuote(db: Db, clientId: string, quoteId: string): Promise<QuoteRow | undefined> {
  if (!isUuid(quoteId)) return undefined;
  return db.selectFrom('trade_quotes').selectAll().where('client_id', '=', clientId).where('id', '=', quoteId.toLowerCase()).executeTakeFirst();
}

/**
 * A quote with its execution, if any (GET /v1/trades/quotes/:quoteId). A quote never executed reads
 * EXPIRED once its expiresAt has passed on the client's clock (`now`): executing it answers 422
 * QUOTE_EXPIRED. The row keeps OPEN (nothing is written when a quote lapses).
 */
export async function getQuote(db: Db, clientId: string, quoteId: string, now: Date): Promise<QuoteDetailView> {
  const row = await findQuote(db, clientId, quoteId);
  if (!row) throw new AppError('NOT_FOUND', 'Quote not found');
  const view = quoteView(row);
  return { ...view, status: row.status === 'OPEN' && isQuoteExpired(row.expires_at, now) ? 'EXPIRED' : view.status, execution: executionView(row) };
}

export function registryAsset(code: string): Asset {
  const asset = findAsset(code, 'sandbox');
  assert(asset, `a stored quote names an asset missing from the registry: ${code}`);
  return asset;
}

/** The quote's figures as the API shows them (the same as when it was given). */
export function quoteView(row: QuoteRow): QuoteView {
  const from = registryAsset(row.from_asset);
  const to = registryAsset(row.to_asset);
  const fee = registryAsset(row.fee_asset);
  const base = row.direction === 'direct' ? from : to;
  const quote = row.direction === 'direct' ? to : from;
  const figures = quoteFigures({
    pairSymbol: row.pair_symbol,
    direction: row.direction,
    side: row.side,
    baseAsset: base,
    quoteAsset: quote,
    fromAsset: from,
    toAsset: to,
    feeAsset: fee,
    pricePerUnitUnits: BigInt(row.price_per_unit_units),
    priceDecimals: row.price_decimals,
    feeRate: trimRate(String(row.fee_rate)),
    fromAmountMinor: BigInt(row.from_amount),
    amountToSpendMinor: BigInt(row.amount_to_spend),
    grossToReceiveMinor: BigInt(row.gross_to_receive),
    feeAmountMinor: BigInt(row.fee_amount),
    totalToReceiveMinor: BigInt(row.total_to_receive),
    baseAmountMinor: row.direction === 'direct' ? BigInt(row.from_amount) : BigInt(row.gross_to_receive),
  });
  return {
    quoteId: row.id,
    customerId: row.customer_id,
    pairSymbol: figures.pairSymbol,
    direction: figures.direction,
    side: figures.side,
    fromAsset: figures.fromAsset,
    toAsset: figures.toAsset,
    feeAsset: figures.feeAsset,
    fromAmount: figures.fromAmount,
    amountToSpend: figures.amountToSpend,
    pricePerUnit: figures.pricePerUnit,
    fee: figures.fee,
    feeAmount: figures.feeAmount,
    totalPrice: figures.totalPrice,
    totalToReceive: figures.totalToReceive,
    expiresAt: row.expires_at.toISOString(),
    disclaimer: quoteDisclaimer(row.ttl_seconds),
    status: row.status,
    createdAt: row.created_at.toISOString(),
  };
}

/** "0.001000000000000000" as stored → "0.001" as the pair states it. */
function trimRate(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

export function executionView(row: QuoteRow): ExecutionView | null {
  if (row.status === 'OPEN' || !row.parent_transaction_id || !row.wallet_id || !row.executed_at) return null;
  const view = quoteView(row);
  const success = row.status === 'EXECUTED';
  return {
    quoteId: row.id,
    parentTransactionId: row.parent_transaction_id,
    success,
    status: success ? 'COMPLETED' : 'FAILED',
    walletId: row.wallet_id,
    txType: tradeTransactionType,
    reference: row.id,
    filledPrice: success ? view.pricePerUnit : null,
    totalSourceAmount: success ? view.totalPrice : null,
    totalTargetAmount: success ? view.totalToReceive : null,
    totalFeeAmount: success ? view.feeAmount : null,
    sourceAsset: view.fromAsset,
    targetAsset: view.toAsset,
    feeAsset: view.feeAsset,
    sourceAssetTransferId: row.source_transaction_id,
    targetAssetTransferId: row.target_transaction_id,
    feeTransferId: row.fee_transaction_id,
    error: success ? null : { code: row.failure_code ?? liquidityUnavailableCode, message: liquidityFailureMessage },
    executedAt: row.executed_at.toISOString(),
  };
}

const liquidityFailureMessage = 'The liquidity provider could not fill the trade; nothing was moved. Request a new quote to try again.';
