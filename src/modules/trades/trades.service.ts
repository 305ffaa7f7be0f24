import { sql, type Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import { WriteStatement } from '../../platform/db/write-statement.js';
import type { Mode } from '../../platform/config.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError } from '../../platform/http/errors.js';
import { assert } from '../../platform/assert.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { formatAmount } from '../../platform/money/amount.js';
import { findAsset, type Asset } from '../../platform/money/assets.js';
import { findCustomer, findWallet } from '../customers/index.js';
import { LedgerBatch, walletBalances, type TransferLeg, type TransferOperation } from '../ledger/index.js';
import { recordEvents } from '../webhooks/index.js';
import { defaultAssetPairs, registryAssetCodeForId } from './asset-pairs.js';
import type { PriceProvider } from './prices.js';
import {
  computeQuote,
  isLiquidityFailureAmount,
  isQuoteExpired,
  quoteDisclaimer,
  quoteExpiresAt,
  quoteFigures,
  resolveQuoteRequest,
  type QuoteRequestFields,
  type ResolvedQuoteRequest,
  type TradeDirection,
  type TradeSide,
} from './quote-math.js';
import type { Ratio } from './ratio.js';
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
  status: QuoteStatus;
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
 * A quote request checked and priced, or the refusal found on the way; made before the quote's
 * transaction opens, since the price feed is an outside system (asked outside any transaction).
 */
export type PricedQuoteRequest =
  | { ok: true; customerId: string; resolved: ResolvedQuoteRequest; midPrice: Ratio }
  | { ok: false; customerId: string; error: AppError; stage: 'request' | 'price' };

/**
 * Checks a quote request against the catalogue (resolveQuoteRequest's rules, in its order) and
 * asks the price feed for the pair's mid price. Never throws an AppError: the refusal is returned,
 * so the write that follows records it under the request's Idempotency-Key like any other answer.
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
    return { ok: true, customerId: request.customerId, resolved, midPrice };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, customerId: request.customerId, error, stage: 'price' };
    throw error;
  }
}

const customerNotFound = () => new AppError('NOT_FOUND', 'Customer not found', { details: [{ field: 'customerId', message: 'no such customer' }] });

/**
 * Gives a quote and stores it with every figure. Rules, first failing wins: the request's own
 * rules (priceQuoteRequest), the customer exists for this client (404), the price feed answers,
 * the amounts lie within the pair's range (422 AMOUNT_OUT_OF_RANGE).
 */
export async function createQuote(tx: Tx, context: RequestContext, runtime: TradesRuntime, priced: PricedQuoteRequest): Promise<QuoteView> {
  if (!priced.ok && priced.stage === 'request') throw priced.error;
  if (!isUuid(priced.customerId) || !(await findCustomer(tx, context.clientId, priced.customerId.toLowerCase()))) throw customerNotFound();
  if (!priced.ok) throw priced.error;
  const amounts = computeQuote({ ...priced.resolved, midPrice: priced.midPrice, spreadBps: runtime.spreadBps });
  const row: QuoteRow = {
    client_id: context.clientId,
    id: idAt(context.now),
    customer_id: priced.customerId.toLowerCase(),
    pair_symbol: amounts.pairSymbol,
    direction: amounts.direction,
    side: amounts.side,
    from_asset: amounts.fromAsset.code,
    to_asset: amounts.toAsset.code,
    fee_asset: amounts.feeAsset.code,
    price_per_unit_units: amounts.pricePerUnitUnits.toString(),
    price_decimals: amounts.priceDecimals,
    fee_rate: amounts.feeRate,
    from_amount: amounts.fromAmountMinor.toString(),
    amount_to_spend: amounts.amountToSpendMinor.toString(),
    gross_to_receive: amounts.grossToReceiveMinor.toString(),
    fee_amount: amounts.feeAmountMinor.toString(),
    total_to_receive: amounts.totalToReceiveMinor.toString(),
    ttl_seconds: runtime.quoteTtlSeconds,
    status: 'OPEN',
    expires_at: quoteExpiresAt(context.now, runtime.quoteTtlSeconds),
    created_at: context.now,
    wallet_id: null,
    parent_transaction_id: null,
    source_transaction_id: null,
    target_transaction_id: null,
    fee_transaction_id: null,
    failure_code: null,
    executed_at: null,
  };
  await tx.insertInto('trade_quotes').values(row).execute();
  return quoteView(row);
}


async function findQuote(db: Db | Tx, clientId: string, quoteId: string, lock: boolean): Promise<QuoteRow | undefined> {
  if (!isUuid(quoteId)) return undefined;
  let query = db.selectFrom('trade_quotes').selectAll().where('client_id', '=', clientId).where('id', '=', quoteId.toLowerCase());
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** A quote with its execution, if any (GET /v1/trades/quotes/:quoteId). */
export async function getQuote(db: Db, clientId: string, quoteId: string): Promise<QuoteDetailView> {
  const row = await findQuote(db, clientId, quoteId, false);
  if (!row) throw new AppError('NOT_FOUND', 'Quote not found');
  return { ...quoteView(row), execution: executionView(row) };
}

function registryAsset(code: string): Asset {
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

function executionView(row: QuoteRow): ExecutionView | null {
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

const walletNotFound = () => new AppError('NOT_FOUND', 'Wallet not found', { details: [{ field: 'walletId', message: 'no such wallet of the quote\'s customer' }] });

/**
 * Executes a quote from a wallet of its customer, in the caller's transaction. Rules, first failing
 * wins: the quote exists (404); the wallet exists and belongs to the quote's customer (404); the
 * quote was never executed (409 QUOTE_ALREADY_EXECUTED); it has not expired by the client's clock
 * (422 QUOTE_EXPIRED); the wallet's AVAILABLE balance holds `totalPrice` of the from-asset (422
 * INSUFFICIENT_FUNDS); in the sandbox, the liquidity-failure amount makes the provider refuse
 * (201, `success: false`, ASSET_TRADE_FAIL).
 *
 * The quote row is locked first, so concurrent executions of one quote run one after the other and
 * all but the first find it executed. On success the ledger moves, in one batch, the from-asset
 * wallet → TRADING (and the fee → FEES when the fee is in the from-asset) and TRADING → wallet in
 * the to-asset (and the fee → FEES when it is in the to-asset), under one parent transaction; the
 * quote's result and ASSET_TRADE_SUCCESSFUL are written in the same statement as the ledger's rows.
 */
export async function executeQuote(
  tx: Tx,
  context: RequestContext,
  runtime: Pick<TradesRuntime, 'mode'>,
  quoteId: string,
  walletIdGiven: string,
): Promise<{ statusCode: number; view: ExecutionView }> {
  const quote = await findQuote(tx, context.clientId, quoteId, true);
  if (!quote) throw new AppError('NOT_FOUND', 'Quote not found');
  const walletId = walletIdGiven.toLowerCase();
  const wallet = isUuid(walletId) ? await findWallet(tx, context.clientId, walletId) : undefined;
  if (!wallet || wallet.customer_id !== quote.customer_id) throw walletNotFound();
  if (quote.status !== 'OPEN') {
    const outcome = quote.status === 'EXECUTED' ? 'was executed' : 'failed at the liquidity provider';
    throw new AppError('QUOTE_ALREADY_EXECUTED', `The quote ${outcome} at ${quote.executed_at?.toISOString() ?? 'an earlier time'} (parent transaction ${quote.parent_transaction_id ?? 'unknown'}); a quote executes once. Request a new quote.`);
  }
  if (isQuoteExpired(quote.expires_at, context.now)) {
    throw new AppError('QUOTE_EXPIRED', `The quote expired at ${quote.expires_at.toISOString()}; request a new quote.`);
  }

  const from = registryAsset(quote.from_asset);
  const to = registryAsset(quote.to_asset);
  const fromAmount = BigInt(quote.from_amount);
  const feeAmount = BigInt(quote.fee_amount);
  const feeInFrom = quote.fee_asset === quote.from_asset;
  const parentTransactionId = idAt(context.now);
  const history = { parentTransactionId, type: tradeTransactionType, traceId: context.traceId, note: `quote ${quote.id}` };

  if (runtime.mode === 'sandbox' && isLiquidityFailureAmount(from, fromAmount)) {
    // The provider refuses after the balance check, as a real one would; nothing moves, so nothing is locked.
    const balance = (await walletBalances(tx, context.clientId, walletId)).find((entry) => entry.asset === from.code);
    const available = balance?.available ?? 0n;
    if (available < fromAmount) throw insufficientFunds(from, available, fromAmount);
    const failed: QuoteRow = { ...quote, status: 'FAILED', wallet_id: walletId, parent_transaction_id: parentTransactionId, failure_code: liquidityUnavailableCode, executed_at: context.now };
    const write = new WriteStatement();
    write.add('trade_quotes', quoteResultStatement(failed), { expectRows: 1 });
    await recordEvents(tx, [{ context, type: 'ASSET_TRADE_FAIL', data: eventData(failed) }], write);
    await write.execute(tx);
    const view = executionView(failed);
    assert(view, 'a failed execution has a view');
    return { statusCode: 201, view };
  }

  const sourceLegs: TransferLeg[] = [
    { from: { walletId, field: 'walletId' }, to: { system: 'TRADING' }, amount: BigInt(quote.amount_to_spend), purpose: tradePurpose },
  ];
  const targetLegs: TransferLeg[] = [{ from: { system: 'TRADING' }, to: { walletId }, amount: BigInt(quote.gross_to_receive), purpose: tradePurpose }];
  if (feeAmount > 0n) {
    const feeLeg: TransferLeg = { from: { walletId, field: 'walletId' }, to: { system: 'FEES' }, amount: feeAmount, purpose: tradeFeePurpose };
    (feeInFrom ? sourceLegs : targetLegs).push(feeLeg);
  }
  const operations: TransferOperation[] = [
    { operation: 'transfer', clientId: context.clientId, now: context.now, asset: from, legs: sourceLegs, history, description: `trade ${quote.pair_symbol}: ${from.code} paid` },
    { operation: 'transfer', clientId: context.clientId, now: context.now, asset: to, legs: targetLegs, history, description: `trade ${quote.pair_symbol}: ${to.code} received` },
  ];
  const ledger = new LedgerBatch(tx, context.now);
  for (const operation of operations) ledger.declare(operation);
  // The wallet was found above, so the ledger may open its account in the to-asset.
  await ledger.load();
  const [paid, received] = operations.map((operation) => {
    try {
      return ledger.apply(operation);
    } catch (error) {
      // The request names no amount, only the wallet that lacks it: the detail names walletId.
      if (error instanceof AppError && error.code === 'INSUFFICIENT_FUNDS') throw new AppError('INSUFFICIENT_FUNDS', error.message, { details: [insufficientFundsDetail(from)] });
      throw error;
    }
  });
  assert(paid && received, 'both sides of a trade were applied');
  const sourceRecord = paid.legs[0]?.debitTransactionId;
  const targetRecord = received.legs[0]?.creditTransactionId;
  assert(sourceRecord && targetRecord, 'a trade writes a source debit and a target credit record');
  const feeRecord = feeAmount > 0n ? (feeInFrom ? paid.legs[1]?.debitTransactionId : received.legs[1]?.debitTransactionId) : null;
  assert(feeAmount === 0n || feeRecord, 'a trade with a fee writes a fee record');

  const executed: QuoteRow = {
    ...quote,
    status: 'EXECUTED',
    wallet_id: walletId,
    parent_transaction_id: parentTransactionId,
    source_transaction_id: sourceRecord,
    target_transaction_id: targetRecord,
    fee_transaction_id: feeRecord ?? null,
    executed_at: context.now,
  };
  const write = new WriteStatement();
  await ledger.flush(write);
  write.add('trade_quotes', quoteResultStatement(executed), { expectRows: 1 });
  await recordEvents(tx, [{ context, type: 'ASSET_TRADE_SUCCESSFUL', data: eventData(executed) }], write);
  await write.execute(tx);
  const view = executionView(executed);
  assert(view, 'an executed quote has a view');
  return { statusCode: 201, view };
}

function insufficientFunds(asset: Asset, available: bigint, needed: bigint): AppError {
  return new AppError(
    'INSUFFICIENT_FUNDS',
    `Insufficient funds: ${formatAmount(needed, asset)} ${asset.code} needed, ${formatAmount(available > 0n ? available : 0n, asset)} ${asset.code} available.`,
    { details: [insufficientFundsDetail(asset)] },
  );
}

function insufficientFundsDetail(asset: Asset) {
  return { field: 'walletId', message: `the wallet's AVAILABLE ${asset.code} is below the quote's totalPrice` };
}

function eventData(row: QuoteRow): Record<string, unknown> {
  return { transactionId: row.parent_transaction_id, quoteId: row.id, walletId: row.wallet_id, customerId: row.customer_id };
}

/** Records an attempted execution on the quote; only an OPEN quote changes (the row is locked). */
function quoteResultStatement(row: QuoteRow) {
  return sql`UPDATE trade_quotes SET status = ${row.status}, wallet_id = ${row.wallet_id}::uuid,
      parent_transaction_id = ${row.parent_transaction_id}::uuid, source_transaction_id = ${row.source_transaction_id}::uuid,
      target_transaction_id = ${row.target_transaction_id}::uuid, fee_transaction_id = ${row.fee_transaction_id}::uuid,
      failure_code = ${row.failure_code}::text, executed_at = ${row.executed_at}::timestamptz
    WHERE client_id = ${row.client_id}::uuid AND id = ${row.id}::uuid AND status = 'OPEN'
    RETURNING 1`;
}
