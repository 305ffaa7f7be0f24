import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { AppError } from '../../../platform/http/errors.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import { formatPrice, isPriceSymbol, parsePrice, priceSymbols, type PriceRecord, type SandboxPriceProvider } from '../prices.js';

const tags = ['Sandbox'];

const PriceSchema = Type.Object(
  {
    symbol: Type.String({ description: 'an asset against USD', examples: ['BTC-USD'] }),
    price: Type.String({ description: 'mid price of one unit in USD, a decimal string', examples: ['60000.00'] }),
    updatedAt: Type.String({ format: 'date-time', description: 'when the client set it (for a seeded price: when the client was created)' }),
  },
  { title: 'SandboxPrice' },
);

const PriceBody = Type.Object(
  {
    price: Type.String({ minLength: 1, maxLength: 40, description: 'the new mid price in USD: a positive decimal string, at most 8 decimals (a JSON number is refused)', examples: ['65000.00'] }),
  },
  { additionalProperties: false, title: 'SandboxPriceRequest', examples: [{ price: '65000.00' }] },
);

const priceView = (record: PriceRecord) => ({ symbol: record.symbol, price: formatPrice(record.price), updatedAt: record.updatedAt.toISOString() });

/** The sandbox price feed's controls (CONTRACT §12.8); registered only in sandbox mode. */
export function registerSandboxPriceRoutes(app: App, deps: Deps, prices: SandboxPriceProvider): void {
  app.get(
    '/v1/sandbox/prices',
    {
      schema: {
        operationId: 'sandbox.listPrices',
        tags,
        summary: 'List the mid prices of the sandbox price feed (sandbox)',
        description: 'The calling client\'s mid price of every priced asset against USD: the one it set, or the seeded one. Quotes of other pairs cross these prices through USD.',
        response: { 200: Envelope(Type.Array(PriceSchema)) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      return { message: 'Prices retrieved', data: (await prices.listPrices(clientId)).map(priceView), traceId: String(request.id) };
    },
  );

  app.put(
    '/v1/sandbox/prices/:symbol',
    {
      schema: {
        operationId: 'sandbox.setPrice',
        tags,
        summary: 'Set a mid price of the sandbox price feed (sandbox)',
        description:
          `Sets the calling client's mid price of one symbol (${priceSymbols.join(', ')}); the next quote uses it. One transaction with ` +
          'everything the change causes (the registered price-changed hooks). Unknown symbol: 404. Honours Idempotency-Key.',
        params: Type.Object({ symbol: Text.short({ examples: ['BTC-USD'] }) }),
        body: PriceBody,
        response: { 200: Envelope(PriceSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => {
        const { symbol } = request.params;
        if (!isPriceSymbol(symbol)) {
          throw new AppError('NOT_FOUND', `No price symbol ${symbol}; the sandbox prices ${priceSymbols.join(', ')}`, {
            details: [{ field: 'symbol', message: `one of ${priceSymbols.join(', ')}` }],
          });
        }
        const price = parsePrice(request.body.price);
        const record = await prices.setPrice(tx, { clientId: context.clientId, symbol, price, at: context.now, traceId: context.traceId });
        return { message: `Price of ${symbol} set`, data: priceView(record) };
      }),
  );
}
