import { describe, expect, it } from 'vitest';
import { plainTextProblem, withoutRefusedCharacters } from './text.js';

/** The 66 Unicode noncharacters: U+FDD0 to U+FDEF, and the last two code points of each of the 17 planes. */
const noncharacters = [
  ...Array.from({ length: 0x20 }, (_, index) => 0xfdd0 + index),
  ...Array.from({ length: 17 }, (_, plane) => [plane * 0x10000 + 0xfffe, plane * 0x10000 + 0xffff]).flat(),
];
const codePointName = (codePoint: number) => `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;

describe('plainTextProblem', () => {
  it('refuses every noncharacter, named by its code point, and none of its neighbours or the private-use characters', () => {
    expect(noncharacters).toHaveLength(66);
    for (const codePoint of noncharacters) {
      const problem = plainTextProblem(`Ada${String.fromCodePoint(codePoint)}Lovelace`) ?? '(accepted)';
      expect(problem, codePointName(codePoint)).toContain(`(${codePointName(codePoint)})`);
      expect(problem).toContain('Unicode noncharacters (U+FDD0 to U+FDEF, and U+FFFE and U+FFFF in every plane)');
    }
    // The characters beside the noncharacters, and private use (the BMP area, planes 15 and 16),
    // which Japanese and Hong Kong names use for characters Unicode does not encode.
    for (const codePoint of [0xfdcf, 0xfdf0, 0xfffd, 0x1fffd, 0x20000, 0xe000, 0xf8ff, 0xf0000, 0xffffd, 0x100000, 0x10fffd]) {
      expect(plainTextProblem(`Ada${String.fromCodePoint(codePoint)}Lovelace`), codePointName(codePoint)).toBeUndefined();
    }
    expect(withoutRefusedCharacters('scan\uffff\u{10fffe}.pdf')).toBe('scan.pdf');
  });
});
