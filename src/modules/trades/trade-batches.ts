import { sql, type Selectable } from 'kysely';
import type { Tx } from '../../platform/db/transaction.js';
import type { WriteStatement } from '../../platform/db/write-statement.js';
import { assert } from '../../platform/assert.js';
import { AppError } from '../../platform/http/errors.js';
import type { BatchItem, BatchOutcome } from '../../platform/http/write-batcher.js';
import { idAt, isUuid } from '../../platform/ids.js';
import type { Asset } from '../../platform/money/assets.js';
import { insufficientFundsMessage, LedgerBatch, type TransferLeg, type TransferOperation } from '../ledger/index.js';
import { recordEvents, type EventToRecord } from '../webhooks/index.js';
import { isLiquidityFailureAmount, isQuoteExpired, quoteExpiresAt } from './quote-math.js';
import {
  executionView,
  liquidityUnavailableCode,
  quoteView,
  registryAsset,
  tradeFeePurpose,
  tradePurpose,
  tradeTransactionType,
  type ExecutionView,
  type PricedQuoteRequest,
  type QuoteView,
  type TradesRuntime,
} from './trades.service.js';
import type { TradeQuotesTable } from './trades.tables.js';

/**
 * Quotes and executions written in batches (platform/http/write-batcher.ts), as internal transfers
 * are: concurrent requests share one database transaction, and a batch of fresh requests that all
 * succeed costs one round trip. docs/trades.md, "How a trade is written".
 */

type QuoteRow = Selectable<TradeQuotesTable>;

const keyOf = (clientId: string, id: string) => `${clientId}/${id}`;

/**
 * The quotes this process gave and has not seen executed, so that their execution can be written
 * without reading them first. A quote's figures never change once given; only its status does,
 * and the write that executes it checks, in the database, that it is still OPEN and that the
 * wallet is its customer's. An entry may name a quote that never committed (its batch failed):
 * the execution's write then finds no row and the batch runs the checked way, which answers 404.
 * Bounded: past `capacity`, the oldest entries are forgotten (their executions read the quote).
 */
export class OpenQuotes {
  private readonly rows = new Map<string, QuoteRow>();

  constructor(private readonly capacity = 50_000) {}

  remember(row: QuoteRow): void {
    this.rows.set(keyOf(row.client_id, row.id), row);
    if (this.rows.size > this.capacity) {
      const oldest = this.rows.keys().next();
      if (!oldest.done) this.rows.delete(oldest.value);
    }
  }

  get(clientId: string, quoteId: string): QuoteRow | undefined {
    return this.rows.get(keyOf(clientId, quoteId.toLowerCase()));
  }

  forget(clientId: string, quoteId: string): void {
    this.rows.delete(keyOf(clientId, quoteId));
  }
}

// ---- quotes ---------------------------------------------------------------------------------

/** A batch of quote requests, with the customers found (undefined: assumed to exist). */
export interface LoadedQuotes {
  items: BatchItem<PricedQuoteRequest>[];
  customers: Set<string> | undefined;
}

const customerNotFound = () => new AppError('NOT_FOUND', 'Customer not found', { details: [{ field: 'customerId', message: 'no such customer' }] });

/** Which of the batch's customers exist (keys `${clientId}/${customerId}`), in one query. */
async function loadQuotes(tx: Tx, items: BatchItem<PricedQuoteRequest>[]): Promise<LoadedQuotes> {
  const wanted = items
    .map(({ context, input }) => ({ clientId: context.clientId, customerId: input.customerId.toLowerCase() }))
    .filter((entry) => isUuid(entry.customerId));
  if (wanted.length === 0) return { items, customers: new Set() };
  const result = await sql<{ client_id: string; id: string }>`
    SELECT c.client_id, c.id FROM customers c
    JOIN unnest(${wanted.map((entry) => entry.clientId)}::uuid[], ${wanted.map((entry) => entry.customerId)}::uuid[]) AS w (client_id, id)
      ON c.client_id = w.client_id AND c.id = w.id`.execute(tx);
  return { items, customers: new Set(result.rows.map((row) => keyOf(row.client_id, row.id))) };
}

/** For the batch written without reading: every customer is assumed to exist (the insert looks each one up). */
function assumeQuotes(items: BatchItem<PricedQuoteRequest>[]): LoadedQuotes {
  return { items, customers: undefined };
}

/**
 * Whether a batch of quotes can be written without reading its customers: not when one of them is
 * refused by its pricing (the feed's answer, the range). That refusal comes after the customer's
 * rule, so a missing customer must answer 404 first, and a refused request inserts nothing that
 * would look its customer up. The request's own rules come before the customer's and need no read.
 */
function quotesAssumable(items: BatchItem<PricedQuoteRequest>[]): boolean {
  return items.every(({ input }) => input.ok || input.stage === 'request');
}

/**
 * Gives the batch's quotes and adds their rows to `write`. Rules per request, first failing wins:
 * the request's own rules (priceQuoteRequest), the customer exists for this client (404), the
 * price feed answered, the amounts lie within the pair's range (422 AMOUNT_OUT_OF_RANGE), both
 * decided by priceQuoteRequest. When the customers were assumed (no request refused by its pricing:
 * quotesAssumable), the insert looks each one up, and a missing one fails the batch (which then
 * runs the checked way and answers 404).
 */
function processQuotes(runtime: TradesRuntime, openQuotes: OpenQuotes) {
  return async (_tx: Tx, loaded: LoadedQuotes, fresh: readonly number[], write: WriteStatement): Promise<BatchOutcome<QuoteView>[]> => {
    const { items } = loaded;
    const rows: QuoteRow[] = [];
    const outcomes = fresh.map((index): BatchOutcome<QuoteView> => {
      const item = items[index];
      assert(item, 'a fresh quote request is in its batch');
      const { context, input: priced } = item;
      if (!priced.ok && priced.stage === 'request') return { ok: false, error: priced.error };
      const customerId = priced.customerId.toLowerCase();
      if (!isUuid(customerId) || (loaded.customers && !loaded.customers.has(keyOf(context.clientId, customerId)))) return { ok: false, error: customerNotFound() };
      if (!priced.ok) return { ok: false, error: priced.error };
      const { amounts } = priced;
      const row: QuoteRow = {
        client_id: context.clientId,
        id: idAt(context.now),
        customer_id: customerId,
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
      rows.push(row);
      return { ok: true, result: { statusCode: 201, message: 'Quote created', data: quoteView(row) } };
    });
    if (rows.length > 0) {
      write.add('trade_quotes_given', insertQuotesStatement(rows), { expectRows: rows.length });
      for (const row of rows) openQuotes.remember(row);
    }
    return outcomes;
  };
}

/** Inserts open quotes, each only if its customer exists (so the statement returns fewer rows if one does not). Exported for its plan's test. */
export function insertQuotesStatement(rows: readonly QuoteRow[]) {
  const column = <T>(pick: (row: QuoteRow) => T) => rows.map(pick);
  return sql`
    INSERT INTO trade_quotes (client_id, id, customer_id, pair_symbol, direction, side, from_asset, to_asset, fee_asset,
      price_per_unit_units, price_decimals, fee_rate, from_amount, amount_to_spend, gross_to_receive, fee_amount, total_to_receive,
      ttl_seconds, status, expires_at, created_at)
    SELECT q.client_id, q.id, q.customer_id, q.pair_symbol, q.direction, q.side, q.from_asset, q.to_asset, q.fee_asset,
      q.price_per_unit_units, q.price_decimals, q.fee_rate, q.from_amount, q.amount_to_spend, q.gross_to_receive, q.fee_amount,
      q.total_to_receive, q.ttl_seconds, 'OPEN', q.expires_at, q.created_at
    FROM unnest(
      ${column((row) => row.client_id)}::uuid[],
      ${column((row) => row.id)}::uuid[],
      ${column((row) => row.customer_id)}::uuid[],
      ${column((row) => row.pair_symbol)}::text[],
      ${column((row) => row.direction)}::text[],
      ${column((row) => row.side)}::text[],
      ${column((row) => row.from_asset)}::text[],
      ${column((row) => row.to_asset)}::text[],
      ${column((row) => row.fee_asset)}::text[],
      ${column((row) => String(row.price_per_unit_units))}::numeric[],
      ${column((row) => row.price_decimals)}::smallint[],
      ${column((row) => String(row.fee_rate))}::numeric[],
      ${column((row) => String(row.from_amount))}::numeric[],
      ${column((row) => String(row.amount_to_spend))}::numeric[],
      ${column((row) => String(row.gross_to_receive))}::numeric[],
      ${column((row) => String(row.fee_amount))}::numeric[],
      ${column((row) => String(row.total_to_receive))}::numeric[],
      ${column((row) => row.ttl_seconds)}::int[],
      ${column((row) => row.expires_at)}::timestamptz[],
      ${column((row) => row.created_at)}::timestamptz[]
    ) AS q (client_id, id, customer_id, pair_symbol, direction, side, from_asset, to_asset, fee_asset, price_per_unit_units,
      price_decimals, fee_rate, from_amount, amount_to_spend, gross_to_receive, fee_amount, total_to_receive, ttl_seconds, expires_at,
      created_at)
    -- Looked up quote by quote by its key (a scalar subquery cannot become a join, whose generic
    -- plan could scan the customers when the table looked small once).
    WHERE (SELECT true FROM customers c WHERE c.client_id = q.client_id AND c.id = q.customer_id)
    RETURNING 1`;
}

// ---- executions -----------------------------------------------------------------------------

/** An execution request: the quote (from the path) and the wallet (from the body). */
export interface ExecuteRequest {
  quoteId: string;
  walletId: string;
}

/** The ledger operations of one execution, declared before the batch loads its accounts. */
interface PlannedExecution {
  parentTransactionId: string;
  paid: TransferOperation;
  received: TransferOperation;
  from: Asset;
}

/** A batch of executions once its quotes and wallets are known and its accounts loaded (or assumed). */
export interface LoadedExecutions {
  items: BatchItem<ExecuteRequest>[];
  /** The quotes named by the batch (locked, or from OpenQuotes when assumed), by `${clientId}/${quoteId}`. */
  quotes: Map<string, QuoteRow>;
  /** Each named wallet's customer (undefined: assumed to be the quote's customer, checked by the write). */
  walletOwners: Map<string, string> | undefined;
  /** Per item: its planned ledger operations, when the quote and the wallet allow the trade. */
  plans: (PlannedExecution | undefined)[];
  ledger: LedgerBatch | undefined;
  /** Whether the quotes were assumed (only executions that all pass the checks made in code). */
  assumed: boolean;
}

const quoteNotFound = () => new AppError('NOT_FOUND', 'Quote not found');
const walletNotFound = () => new AppError('NOT_FOUND', 'Wallet not found', { details: [{ field: 'walletId', message: 'no such wallet of the quote\'s customer' }] });

function insufficientFundsDetail(asset: Asset) {
  return { field: 'walletId', message: `the wallet's AVAILABLE ${asset.code} is below the quote's totalPrice` };
}

function insufficientFunds(asset: Asset, available: bigint, needed: bigint): AppError {
  return new AppError('INSUFFICIENT_FUNDS', insufficientFundsMessage(asset, available, needed), { details: [insufficientFundsDetail(asset)] });
}

/**
 * Whether a batch of executions can be written without reading: every quote is one this process
 * gave and still knows as OPEN, none is named twice, none has expired by its request's clock, none
 * is a sandbox liquidity failure (which needs the balance read), every wallet id is well-formed.
 * What the write cannot know it checks itself: the quote is still OPEN and the wallet is its
 * customer's (the quote update), the wallet holds enough (the ledger's accounts).
 */
function executionsAssumable(mode: TradesRuntime['mode'], openQuotes: OpenQuotes, items: BatchItem<ExecuteRequest>[]): boolean {
  const seen = new Set<string>();
  for (const { context, input } of items) {
    const quote = openQuotes.get(context.clientId, input.quoteId);
    if (!quote || !isUuid(input.walletId)) return false;
    const key = keyOf(quote.client_id, quote.id);
    if (seen.has(key)) return false;
    seen.add(key);
    if (isQuoteExpired(quote.expires_at, context.now)) return false;
    if (mode === 'sandbox' && isLiquidityFailureAmount(registryAsset(quote.from_asset), BigInt(quote.from_amount))) return false;
  }
  return true;
}

/** The batch's quotes from OpenQuotes, its ledger assumed loaded (executionsAssumable said yes). */
function assumeExecutions(tx: Tx, openQuotes: OpenQuotes, items: BatchItem<ExecuteRequest>[]): LoadedExecutions {
  const quotes = new Map<string, QuoteRow>();
  for (const { context, input } of items) {
    const quote = openQuotes.get(context.clientId, input.quoteId);
    assert(quote, 'an assumed execution names a quote this process knows');
    quotes.set(keyOf(quote.client_id, quote.id), quote);
  }
  const loaded = planExecutions(tx, items, quotes, undefined, true);
  // The to-asset account is opened by the write when the wallet never held that asset.
  loaded.ledger?.assumeLoaded({ openCredited: true });
  return loaded;
}

/**
 * Reads the batch's quotes and its wallets' customers in one round trip (without locks), locks the
 * ledger accounts of the executions those allow, then locks the quotes (in id order) and reads
 * them again. Writes nothing.
 *
 * The lock order is the ledger's accounts, then the quotes, as in the assumed batch's one
 * statement (its ledger part updates the accounts before its last part updates the quotes). With
 * the quotes locked first, an execution of a quote here waited for the accounts an assumed batch
 * of the same quote held while that batch waited for the quote: a deadlock, broken by PostgreSQL
 * after deadlock_timeout (until 2026-12-06; two server processes executing one quote, or one
 * process whose assumed batch fell back to this checked way; found by an audit). A quote's terms
 * never change once given, only its status: a quote executed meanwhile is refused from the row
 * read under the lock.
 */
async function loadExecutions(tx: Tx, items: BatchItem<ExecuteRequest>[]): Promise<LoadedExecutions> {
  const quoteKeys = new Map<string, { clientId: string; id: string }>();
  const walletKeys = new Map<string, { clientId: string; id: string }>();
  for (const { context, input } of items) {
    const quoteId = input.quoteId.toLowerCase();
    const walletId = input.walletId.toLowerCase();
    if (isUuid(quoteId)) quoteKeys.set(keyOf(context.clientId, quoteId), { clientId: context.clientId, id: quoteId });
    if (isUuid(walletId)) walletKeys.set(keyOf(context.clientId, walletId), { clientId: context.clientId, id: walletId });
  }
  const sortedQuotes = [...quoteKeys.values()].sort((a, b) => (a.clientId === b.clientId ? a.id.localeCompare(b.id) : a.clientId.localeCompare(b.clientId)));
  const readQuotes = (lock: boolean) =>
    sortedQuotes.length === 0
      ? Promise.resolve([] as QuoteRow[])
      : sql<QuoteRow>`
          SELECT t.* FROM trade_quotes t
          JOIN unnest(${sortedQuotes.map((key) => key.clientId)}::uuid[], ${sortedQuotes.map((key) => key.id)}::uuid[]) WITH ORDINALITY AS k (client_id, id, position)
            ON t.client_id = k.client_id AND t.id = k.id
          ORDER BY k.position
          ${lock ? sql`FOR UPDATE OF t` : sql``}`
          .execute(tx)
          .then((result) => result.rows);
  const [quoteRows, walletRows] = await Promise.all([
    readQuotes(false),
    walletKeys.size === 0
      ? Promise.resolve([] as { client_id: string; id: string; customer_id: string }[])
      : sql<{ client_id: string; id: string; customer_id: string }>`
          SELECT w.client_id, w.id, w.customer_id FROM wallets w
          JOIN unnest(${[...walletKeys.values()].map((key) => key.clientId)}::uuid[], ${[...walletKeys.values()].map((key) => key.id)}::uuid[]) AS k (client_id, id)
            ON w.client_id = k.client_id AND w.id = k.id`
          .execute(tx)
          .then((result) => result.rows),
  ]);
  const quotes = new Map(quoteRows.map((row) => [keyOf(row.client_id, row.id), row]));
  const walletOwners = new Map(walletRows.map((row) => [keyOf(row.client_id, row.id), row.customer_id]));
  const loaded = planExecutions(tx, items, quotes, walletOwners, false);
  // The wallets were found above, so the ledger may open their accounts in the to-asset.
  await loaded.ledger?.load();
  // Only quotes still OPEN when read can have changed since (their status only leaves OPEN).
  if (quoteRows.some((row) => row.status === 'OPEN')) {
    for (const row of await readQuotes(true)) quotes.set(keyOf(row.client_id, row.id), row);
  }
  return loaded;
}

/** Declares the ledger operations of every execution its quote and wallet allow (the rules run again in processExecutions). */
function planExecutions(tx: Tx, items: BatchItem<ExecuteRequest>[], quotes: Map<string, QuoteRow>, walletOwners: Map<string, string> | undefined, assumed: boolean): LoadedExecutions {
  const plans = items.map(({ context, input }): PlannedExecution | undefined => {
    const quote = quotes.get(keyOf(context.clientId, input.quoteId.toLowerCase()));
    const walletId = input.walletId.toLowerCase();
    if (!quote || quote.status !== 'OPEN') return undefined;
    if (walletOwners && walletOwners.get(keyOf(context.clientId, walletId)) !== quote.customer_id) return undefined;
    return planExecution(context.clientId, context.now, context.traceId, quote, walletId);
  });
  const planned = plans.filter((plan): plan is PlannedExecution => plan !== undefined);
  if (planned.length === 0) return { items, quotes, walletOwners, plans, ledger: undefined, assumed };
  const latest = planned.reduce((moment, plan) => (plan.paid.now > moment ? plan.paid.now : moment), new Date(0));
  const ledger = new LedgerBatch(tx, latest);
  for (const plan of planned) {
    ledger.declare(plan.paid);
    ledger.declare(plan.received);
  }
  return { items, quotes, walletOwners, plans, ledger, assumed };
}

/**
 * The ledger operations of a trade, under one parent transaction: the from-asset wallet → TRADING
 * (and the fee → FEES when the fee is in the from-asset), then TRADING → wallet in the to-asset
 * (and the fee → FEES when it is in the to-asset).
 */
function planExecution(clientId: string, now: Date, traceId: string, quote: QuoteRow, walletId: string): PlannedExecution {
  const from = registryAsset(quote.from_asset);
  const to = registryAsset(quote.to_asset);
  const feeAmount = BigInt(quote.fee_amount);
  const feeInFrom = quote.fee_asset === quote.from_asset;
  const parentTransactionId = idAt(now);
  const history = { parentTransactionId, type: tradeTransactionType, traceId, note: `quote ${quote.id}` };
  const sourceLegs: TransferLeg[] = [{ from: { walletId, field: 'walletId' }, to: { system: 'TRADING' }, amount: BigInt(quote.amount_to_spend), purpose: tradePurpose }];
  const targetLegs: TransferLeg[] = [{ from: { system: 'TRADING' }, to: { walletId }, amount: BigInt(quote.gross_to_receive), purpose: tradePurpose }];
  if (feeAmount > 0n) {
    const feeLeg: TransferLeg = { from: { walletId, field: 'walletId' }, to: { system: 'FEES' }, amount: feeAmount, purpose: tradeFeePurpose };
    (feeInFrom ? sourceLegs : targetLegs).push(feeLeg);
  }
  return {
    parentTransactionId,
    from,
    paid: { operation: 'transfer', clientId, now, asset: from, legs: sourceLegs, history, description: `trade ${quote.pair_symbol}: ${from.code} paid` },
    received: { operation: 'transfer', clientId, now, asset: to, legs: targetLegs, history, description: `trade ${quote.pair_symbol}: ${to.code} received` },
  };
}

/**
 * Executes the batch's fresh requests in order and adds their writes to `write`: the ledger's
 * rows, one update of the quotes (each only if still OPEN and the wallet is its customer's, or the
 * statement fails) and the events. Rules per request, first failing wins: the quote exists (404);
 * the wallet exists and belongs to the quote's customer (404); the quote was never executed, by an
 * earlier request of this batch either (409 QUOTE_ALREADY_EXECUTED); it has not expired by the
 * client's clock (422 QUOTE_EXPIRED); the wallet's AVAILABLE from-asset holds `totalPrice` (422
 * INSUFFICIENT_FUNDS); in the sandbox, the liquidity-failure amount makes the provider refuse (201,
 * `success: false`, nothing moves, ASSET_TRADE_FAIL). A refused request leaves nothing behind.
 */
function processExecutions(runtime: Pick<TradesRuntime, 'mode'>, openQuotes: OpenQuotes) {
  return async (tx: Tx, loaded: LoadedExecutions, fresh: readonly number[], write: WriteStatement): Promise<BatchOutcome<ExecutionView>[]> => {
    const { items } = loaded;
    const results: QuoteRow[] = [];
    const events: EventToRecord[] = [];
    const outcomes = fresh.map((index): BatchOutcome<ExecutionView> => {
      const item = items[index];
      assert(item, 'a fresh execution is in its batch');
      try {
        const row = executeOne(runtime, loaded, item, loaded.plans[index]);
        loaded.quotes.set(keyOf(row.client_id, row.id), row);
        results.push(row);
        events.push({ context: item.context, type: row.status === 'EXECUTED' ? 'ASSET_TRADE_SUCCESSFUL' : 'ASSET_TRADE_FAIL', data: eventData(row) });
        const view = executionView(row);
        assert(view, 'an attempted execution has a view');
        return { ok: true, result: { statusCode: 201, message: view.success ? 'Trade executed' : 'Trade failed at the liquidity provider', data: view } };
      } catch (error) {
        if (error instanceof AppError) return { ok: false, error };
        throw error;
      }
    });
    if (loaded.ledger) await loaded.ledger.flush(write);
    if (results.length > 0) write.add('trade_quotes_executed', quoteResultsStatement(results), { expectRows: results.length });
    await recordEvents(tx, events, write);
    for (const row of results) openQuotes.forget(row.client_id, row.id);
    return outcomes;
  };
}

/** One execution's outcome: the quote row as the execution leaves it, or the refusal (thrown). */
function executeOne(runtime: Pick<TradesRuntime, 'mode'>, loaded: LoadedExecutions, item: BatchItem<ExecuteRequest>, plan: PlannedExecution | undefined): QuoteRow {
  const { context, input } = item;
  const quote = loaded.quotes.get(keyOf(context.clientId, input.quoteId.toLowerCase()));
  if (!quote) throw quoteNotFound();
  const walletId = input.walletId.toLowerCase();
  if (!isUuid(walletId)) throw walletNotFound();
  if (loaded.walletOwners && loaded.walletOwners.get(keyOf(context.clientId, walletId)) !== quote.customer_id) throw walletNotFound();
  if (quote.status !== 'OPEN') {
    const outcome = quote.status === 'EXECUTED' ? 'was executed' : 'failed at the liquidity provider';
    throw new AppError(
      'QUOTE_ALREADY_EXECUTED',
      `The quote ${outcome} at ${quote.executed_at?.toISOString() ?? 'an earlier time'} (parent transaction ${quote.parent_transaction_id ?? 'unknown'}); a quote executes once. Request a new quote.`,
    );
  }
  if (isQuoteExpired(quote.expires_at, context.now)) throw new AppError('QUOTE_EXPIRED', `The quote expired at ${quote.expires_at.toISOString()}; request a new quote.`);
  const ledger = loaded.ledger;
  assert(plan && ledger, 'an execution that passed its checks was planned');
  const fromAmount = BigInt(quote.from_amount);

  if (runtime.mode === 'sandbox' && isLiquidityFailureAmount(plan.from, fromAmount)) {
    // The provider refuses after the balance check, as a real one would; nothing moves.
    assert(!loaded.assumed, 'a liquidity failure is never assumed');
    const available = ledger.availableOf(context.clientId, walletId, plan.from.code);
    if (available < fromAmount) throw insufficientFunds(plan.from, available, fromAmount);
    return { ...quote, status: 'FAILED', wallet_id: walletId, parent_transaction_id: plan.parentTransactionId, failure_code: liquidityUnavailableCode, executed_at: context.now };
  }

  let paid;
  try {
    paid = ledger.apply(plan.paid);
  } catch (error) {
    // The request names no amount, only the wallet that lacks it: the detail names walletId.
    if (error instanceof AppError && error.code === 'INSUFFICIENT_FUNDS') throw new AppError('INSUFFICIENT_FUNDS', error.message, { details: [insufficientFundsDetail(plan.from)] });
    throw error;
  }
  // Nothing can refuse the received side once the paid side moved (the wallet exists, and it gets
  // more of the to-asset than any fee it pays in it): a refusal here would leave half a trade, so
  // it fails the batch instead.
  let received;
  try {
    received = ledger.apply(plan.received);
  } catch (error) {
    throw new Error(`the received side of a trade was refused after its paid side moved: ${String(error)}`, { cause: error });
  }
  const sourceRecord = paid.legs[0]?.debitTransactionId;
  const targetRecord = received.legs[0]?.creditTransactionId;
  assert(sourceRecord && targetRecord, 'a trade writes a source debit and a target credit record');
  const feeAmount = BigInt(quote.fee_amount);
  const feeRecord = feeAmount > 0n ? (quote.fee_asset === quote.from_asset ? paid.legs[1]?.debitTransactionId : received.legs[1]?.debitTransactionId) : null;
  assert(feeAmount === 0n || feeRecord, 'a trade with a fee writes a fee record');
  return {
    ...quote,
    status: 'EXECUTED',
    wallet_id: walletId,
    parent_transaction_id: plan.parentTransactionId,
    source_transaction_id: sourceRecord,
    target_transaction_id: targetRecord,
    fee_transaction_id: feeRecord ?? null,
    executed_at: context.now,
  };
}

function eventData(row: QuoteRow): Record<string, unknown> {
  return { transactionId: row.parent_transaction_id, quoteId: row.id, walletId: row.wallet_id, customerId: row.customer_id };
}

/**
 * Records the batch's attempted executions on their quotes. Each quote changes only if it is
 * still OPEN and the wallet belongs to its customer; the caller expects one row per execution, so
 * the statement fails otherwise (an assumed batch then runs the checked way).
 */
export function quoteResultsStatement(rows: readonly QuoteRow[]) {
  const column = <T>(pick: (row: QuoteRow) => T) => rows.map(pick);
  return sql`
    UPDATE trade_quotes t SET status = u.status, wallet_id = u.wallet_id, parent_transaction_id = u.parent_transaction_id,
      source_transaction_id = u.source_transaction_id, target_transaction_id = u.target_transaction_id,
      fee_transaction_id = u.fee_transaction_id, failure_code = u.failure_code, executed_at = u.executed_at
    FROM unnest(
      ${column((row) => row.client_id)}::uuid[],
      ${column((row) => row.id)}::uuid[],
      ${column((row) => row.status)}::text[],
      ${column((row) => row.wallet_id)}::uuid[],
      ${column((row) => row.parent_transaction_id)}::uuid[],
      ${column((row) => row.source_transaction_id)}::uuid[],
      ${column((row) => row.target_transaction_id)}::uuid[],
      ${column((row) => row.fee_transaction_id)}::uuid[],
      ${column((row) => row.failure_code)}::text[],
      ${column((row) => row.executed_at)}::timestamptz[]
    ) AS u (client_id, id, status, wallet_id, parent_transaction_id, source_transaction_id, target_transaction_id, fee_transaction_id,
      failure_code, executed_at)
    WHERE t.client_id = u.client_id AND t.id = u.id AND t.status = 'OPEN'
      -- A scalar subquery, not EXISTS: the planner cannot turn it into a join, so each quote is
      -- found by its whole key. As EXISTS, a generic plan made while the table looked small joined
      -- the wallets first and then scanned every quote of the client by client_id alone.
      AND t.customer_id = (SELECT w.customer_id FROM wallets w WHERE w.client_id = u.client_id AND w.id = u.wallet_id)
    RETURNING 1`;
}

// ---- the batchers' options ----------------------------------------------------------------------

/**
 * The batchers' options for the two trade routes (see WriteBatcherOptions). Quotes and executions
 * have a batcher each, so on PostgreSQL each kind has its own lane (connection): a batch of quotes
 * and a batch of executions are written at the same time by two database processes, and their
 * commits overlap. (One batcher for both, carrying the quotes and executions that arrived together
 * in one transaction, kept a single database process busy while the machine idled: about 25 %
 * fewer trades per second on the trades benchmark; docs/benchmarks.md.)
 */
export function quoteWriteBatch(runtime: TradesRuntime, openQuotes: OpenQuotes) {
  return { load: loadQuotes, assume: (_tx: Tx, items: BatchItem<PricedQuoteRequest>[]) => assumeQuotes(items), assumable: quotesAssumable, process: processQuotes(runtime, openQuotes) };
}

export function executionWriteBatch(runtime: TradesRuntime, openQuotes: OpenQuotes) {
  return {
    load: loadExecutions,
    assumable: (items: BatchItem<ExecuteRequest>[]) => executionsAssumable(runtime.mode, openQuotes, items),
    assume: (tx: Tx, items: BatchItem<ExecuteRequest>[]) => assumeExecutions(tx, openQuotes, items),
    process: processExecutions(runtime, openQuotes),
  };
}
