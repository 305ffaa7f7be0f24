import { describe, expect, it } from 'vitest';
import { pollMsOf, scaledInterval } from '../../console/src/poll-interval.js';

// The console's reading interval (docs/console.md): 5 s, or a whole number of milliseconds from
// 1,000 to 60,000 stored in the browser's localStorage under `openbaas.pollMs`; the other
// intervals scale with it.
describe('the console\'s reading interval', () => {
  it('takes a stored whole number of milliseconds from 1,000 to 60,000, and is 5 s for anything else', () => {
    expect(pollMsOf(null)).toBe(5000);
    for (const [stored, expected] of [['1000', 1000], ['2500', 2500], ['60000', 60_000]] as const) expect(pollMsOf(stored)).toBe(expected);
    for (const stored of ['999', '60001', '', ' 2000', '2000.5', '2e3', '0x7d0', 'fast', '-2000', '00002000']) expect(pollMsOf(stored), stored).toBe(5000);
  });

  it('scales the other intervals with it', () => {
    expect(scaledInterval(3000, 5000)).toBe(3000);
    expect(scaledInterval(30_000, 2500)).toBe(15_000);
    expect(scaledInterval(10_000, 1000)).toBe(2000);
  });
});
