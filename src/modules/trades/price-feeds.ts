import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { ReadBatcher } from '../../platform/db/read-batcher.js';
import type { Tx } from '../../platform/db/transaction.js';
import { AppError } from '../../platform/http/errors.js';
import { assert } from '../../platform/assert.js';
import { defaultAssetPairs } from './asset-pairs.js';
import {
  crossMidPrice,
  formatPrice,
  isPriceSymbol,
  parsePrice,
  priceSymbols,
  sandboxDefaultPrice,
  type MidPriceQuery,
  type Price,
  type PriceChangedHooks,
  type PriceProvider,
  type PriceRecord,
  type SandboxPriceProvider,
} from './prices.js';
import type { Ratio } from './ratio.js';
import './trades.tables.js';

/** The seeded price of a symbol the code lists; a missing one is a bug in the seeded table. */
function seededPrice(symbol: string): Price {
  const price = sandboxDefaultPrice(symbol);
  assert(price, `no seeded price for ${symbol}`);
  return price;
}

/**
 * The sandbox price feed, kept in the database per client: a client's price of a symbol is the one
 * it set last (a row of sandbox_prices), or the seeded one when it never set it. Reads use the pool
 * (a quote asks for its price before its transaction opens); `setPrice` writes in the caller's
 * transaction and runs the price-changed hooks there.
 */
export class DatabasePriceProvider implements SandboxPriceProvider {
  /**
   * Quotes arriving together read their clients' prices in one query (a quote under load would
   * otherwise spend a round trip of its own on them). A read still starts after its request
   * arrived, so a quote never prices with a price older than the last change committed before it.
   */
  private readonly reads: ReadBatcher<string, Map<string, PriceRecord>>;

  constructor(
    private readonly db: Db,
    private readonly hooks: PriceChangedHooks,
    readConcurrency = 1,
  ) {
    this.reads = new ReadBatcher({ fetch: (clientIds: string[]) => this.changedPricesOf(clientIds), sizeMax: 256, concurrency: readConcurrency });
  }

  async midPrice(query: MidPriceQuery): Promise<Ratio | undefined> {
    const pair = defaultAssetPairs.find((candidate) => candidate.symbol === query.symbol);
    if (!pair) return undefined;
    const changed = await this.reads.load(query.clientId);
    return crossMidPrice(pair.baseAsset, pair.quoteAsset, (symbol) => (isPriceSymbol(symbol) ? (changed.get(symbol)?.price ?? seededPrice(symbol)) : undefined));
  }

  async listPrices(clientId: string): Promise<PriceRecord[]> {
    const [changed, clientCreatedAt] = await Promise.all([this.reads.load(clientId), this.clientCreatedAt(clientId)]);
    // A seeded price has held since the client was created.
    return priceSymbols.map((symbol) => changed.get(symbol) ?? { symbol, price: seededPrice(symbol), updatedAt: clientCreatedAt });
  }

  async setPrice(tx: Tx, change: { clientId: string; symbol: string; price: Price; at: Date; traceId: string }): Promise<PriceRecord> {
    assert(isPriceSymbol(change.symbol), `not a price symbol: ${change.symbol}`);
    // Lock the client's row of the symbol (created with the seeded price when it has none), so two
    // changes of one price run one after the other and each hook sees the price it replaced.
    await tx
      .insertInto('sandbox_prices')
      .values({ client_id: change.clientId, symbol: change.symbol, price: formatPrice(seededPrice(change.symbol)), updated_at: change.at })
      .onConflict((conflict) => conflict.columns(['client_id', 'symbol']).doNothing())
      .execute();
    const previous = await tx
      .selectFrom('sandbox_prices')
      .select(sql<string>`price::text`.as('price'))
      .where('client_id', '=', change.clientId)
      .where('symbol', '=', change.symbol)
      .forUpdate()
      .executeTakeFirstOrThrow();
    await tx
      .updateTable('sandbox_prices')
      .set({ price: formatPrice(change.price), updated_at: change.at })
      .where('client_id', '=', change.clientId)
      .where('symbol', '=', change.symbol)
      .execute();
    await this.hooks.runAll(tx, {
      clientId: change.clientId,
      symbol: change.symbol,
      previousPrice: parsePrice(previous.price),
      price: change.price,
      changedAt: change.at,
      traceId: change.traceId,
    });
    return { symbol: change.symbol, price: change.price, updatedAt: change.at };
  }

  /** The prices each client set, one map per client id given (in order), in one query. */
  private async changedPricesOf(clientIds: readonly string[]): Promise<Map<string, PriceRecord>[]> {
    const rows = await this.db
      .selectFrom('sandbox_prices')
      .select(['client_id', 'symbol', sql<string>`price::text`.as('price'), 'updated_at'])
      .where('client_id', '=', sql<string>`ANY(${[...new Set(clientIds)]}::uuid[])`)
      .execute();
    const byClient = new Map<string, Map<string, PriceRecord>>();
    for (const row of rows) {
      let prices = byClient.get(row.client_id);
      if (!prices) byClient.set(row.client_id, (prices = new Map<string, PriceRecord>()));
      prices.set(row.symbol, { symbol: row.symbol, price: parsePrice(row.price), updatedAt: row.updated_at });
    }
    return clientIds.map((clientId) => byClient.get(clientId) ?? new Map<string, PriceRecord>());
  }

  private async clientCreatedAt(clientId: string): Promise<Date> {
    const result = await sql<{ created_at: Date }>`SELECT created_at FROM clients WHERE id = ${clientId}`.execute(this.db);
    const createdAt = result.rows[0]?.created_at;
    assert(createdAt, `client ${clientId} has no row`);
    return createdAt;
  }
}

/**
 * A client's current sandbox price of a symbol, read inside the caller's transaction (credit lines
 * value their collateral with it in the same transaction as the change they make): the price it
 * set last, or the seeded one. A concurrent price change that has not committed is not seen; it
 * recomputes the lines it affects itself when it commits.
 */
export async function storedSandboxPrice(db: Db | Tx, clientId: string, symbol: string): Promise<Price> {
  assert(isPriceSymbol(symbol), `not a price symbol: ${symbol}`);
  const row = await db
    .selectFrom('sandbox_prices')
    .select(sql<string>`price::text`.as('price'))
    .where('client_id', '=', clientId)
    .where('symbol', '=', symbol)
    .executeTakeFirst();
  return row ? parsePrice(row.price) : seededPrice(symbol);
}

/**
 * Production's price feed: none is connected yet (OpenBaaS ships no market-data integration), so
 * every quote answers 503 PRICE_FEED_UNAVAILABLE instead of pricing a trade with made-up prices.
 * An operator who connects a feed implements PriceProvider and wires it in src/modules/routes.ts.
 */
export const unconnectedPriceFeed: PriceProvider = {
  midPrice: () =>
    Promise.reject(
      new AppError('PRICE_FEED_UNAVAILABLE', 'No price feed is connected in production mode, so trade quotes cannot be priced. The sandbox prices quotes with its own feed.'),
    ),
};
