import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import { AssertionError } from '../../platform/assert.js';
import type { Tx } from '../../platform/db/transaction.js';
import { crossMidPrice, formatPrice, parsePrice, PriceChangedHooks, priceSymbols, sandboxDefaultPrice, type PriceChange } from './prices.js';
import { ratio } from './ratio.js';

describe('sandbox default prices', () => {
  it('seeds the four prices of the contract, exactly', () => {
    expect(priceSymbols).toEqual(['BTC-USD', 'ETH-USD', 'USDC-USD', 'USDT-USD']);
    expect(sandboxDefaultPrice('BTC-USD')).toEqual({ units: 6000000n, scale: 2 });
    expect(sandboxDefaultPrice('ETH-USD')).toEqual({ units: 300000n, scale: 2 });
    expect(sandboxDefaultPrice('USDC-USD')).toEqual({ units: 100n, scale: 2 });
    expect(sandboxDefaultPrice('BTC-USDC')).toBeUndefined();
  });
});

describe('parsing and showing a price', () => {
  it('keeps the decimals given (at least two, at most eight)', () => {
    expect(formatPrice(parsePrice('60000'))).toBe('60000.00');
    expect(formatPrice(parsePrice('0.9995'))).toBe('0.9995');
    expect(formatPrice(parsePrice('0.99950000'))).toBe('0.9995');
    expect(formatPrice(parsePrice('123.45678901'))).toBe('123.45678901');
  });

  it('refuses a ninth decimal, zero, a sign and a JSON number with 400 INVALID_AMOUNT on the field', () => {
    for (const value of ['1.000000001', '0', '-5', '1e3', 60000]) {
      let caught: unknown;
      try {
        parsePrice(value);
      } catch (error) {
        caught = error;
      }
      expect(caught, String(value)).toBeInstanceOf(AppError);
      expect((caught as AppError).code).toBe('INVALID_AMOUNT');
      expect((caught as AppError).details?.[0]?.field).toBe('price');
    }
  });
});

describe('mid price of a pair', () => {
  it('reads USD pairs directly and crosses the others through USD, exactly', () => {
    const prices: Record<string, string> = { 'BTC-USD': '60000.00', 'USDC-USD': '0.9999' };
    const priceOf = (symbol: string) => (prices[symbol] === undefined ? undefined : parsePrice(prices[symbol]));
    expect(crossMidPrice('BTC', 'USD', priceOf)).toEqual(ratio(60000n, 1n));
    // 60000 / 0.9999 = 600000000 / 9999, kept as a fraction.
    expect(crossMidPrice('BTC', 'USDC', priceOf)).toEqual(ratio(600000000n, 9999n));
    expect(crossMidPrice('ETH', 'USD', priceOf)).toBeUndefined();
  });
});

describe('price-changed hooks', () => {
  const change: PriceChange = {
    clientId: 'client',
    symbol: 'BTC-USD',
    previousPrice: { units: 6000000n, scale: 2 },
    price: { units: 5000000n, scale: 2 },
    changedAt: new Date(0),
    traceId: 'trace',
  };
  const tx = {} as Tx;

  it('runs every hook in registration order with the same transaction', async () => {
    const hooks = new PriceChangedHooks();
    const calls: string[] = [];
    hooks.register('credit-lines', async (given, seen) => {
      expect(given).toBe(tx);
      calls.push(`credit-lines ${seen.symbol}`);
    });
    hooks.register('audit', async () => {
      calls.push('audit');
    });
    await hooks.runAll(tx, change);
    expect(calls).toEqual(['credit-lines BTC-USD', 'audit']);
    expect(hooks.names()).toEqual(['credit-lines', 'audit']);
  });

  it('stops at the first failing hook, so the transaction rolls back', async () => {
    const hooks = new PriceChangedHooks();
    const calls: string[] = [];
    hooks.register('first', async () => {
      throw new Error('boom');
    });
    hooks.register('second', async () => {
      calls.push('second');
    });
    await expect(hooks.runAll(tx, change)).rejects.toThrow('boom');
    expect(calls).toEqual([]);
  });

  it('refuses a name registered twice', () => {
    const hooks = new PriceChangedHooks();
    hooks.register('credit-lines', async () => {});
    expect(() => hooks.register('credit-lines', async () => {})).toThrow(AssertionError);
  });
});
