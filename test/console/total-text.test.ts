import { describe, expect, it } from 'vitest';
import { totalText } from '../../console/src/count-text.js';

describe('the console\'s count of a list (totalText)', () => {
  it('writes the number with its thousands separated, and "more than" where the list stopped counting', () => {
    expect(totalText({ totalResults: 7, totalResultsExact: true })).toBe('7');
    expect(totalText({ totalResults: 9999, totalResultsExact: true })).toBe('9,999');
    expect(totalText({ totalResults: 10000, totalResultsExact: true })).toBe('10,000');
    expect(totalText({ totalResults: 10000, totalResultsExact: false })).toBe('more than 10,000');
  });
});
