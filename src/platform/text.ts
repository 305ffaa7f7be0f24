import { validationError } from './http/errors.js';

/**
 * The characters free text of the API may not hold, whatever its script, and how an error
 * message names the ones it found. Names, addresses, memos, notes and reasons share the rule:
 * control characters (general category Cc: C0 U+0000 to U+001F with the line breaks and the tab,
 * DEL, C1 U+0080 to U+009F), format characters (Cf: bidi controls such as U+202E, zero-width
 * characters, U+FEFF), the line and paragraph separators U+2028 and U+2029, and the Unicode
 * noncharacters (U+FDD0 to U+FDEF and the last two code points of every plane, U+FFFE and U+FFFF,
 * U+1FFFE and U+1FFFF, …, U+10FFFE and U+10FFFF). They are invisible, can make a text read
 * differently from what it holds (a name reversed by U+202E), break a rail's fixed-width records,
 * or, for the noncharacters, are set aside by Unicode for a program's own use and never stand for
 * a letter (until 2026-12-06 they were accepted; found by an audit). Letters of every script,
 * accented ones included, are allowed, and so are private-use characters (U+E000 to U+F8FF and
 * planes 15 and 16 outside their last two code points), which Japanese and Hong Kong names use
 * for characters Unicode does not encode.
 */
const refusedCharacter = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}]/u;
const refusedCharacters = new RegExp(refusedCharacter.source, 'gu');

const refusedCharactersDescription =
  'control characters (U+0000 to U+001F, U+007F to U+009F), line breaks, invisible formatting characters (Unicode category Cf, such as U+202E or U+200B) and Unicode noncharacters (U+FDD0 to U+FDEF, and U+FFFE and U+FFFF in every plane)';

/**
 * Characters that cannot be read in a message (controls, format characters, separators other than
 * the space, noncharacters) are named by code point.
 */
const unprintableCharacter = /^[\p{Cc}\p{Cf}\p{Z}\p{Noncharacter_Code_Point}]$/u;
const charactersShownMax = 10;

function describeCharacter(character: string): string {
  if (character === ' ') return 'space';
  const codePoint = character.codePointAt(0) ?? 0;
  if (unprintableCharacter.test(character)) return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  return JSON.stringify(character);
}

/** The characters, each once, as an error message shows them: invisible ones by code point, at most ten then an ellipsis. */
export function describeCharacters(characters: readonly string[]): string {
  const shown = characters.slice(0, charactersShownMax).map(describeCharacter).join(', ');
  return `${shown}${characters.length > charactersShownMax ? ', …' : ''}`;
}

/**
 * The error message for a text holding refused characters, or undefined when it holds none. One
 * regular-expression test when the text is clean (an internal transfer's note is checked on that
 * path); the characters are listed only for the message.
 */
export function refusedCharactersProblem(text: string): string | undefined {
  if (!refusedCharacter.test(text)) return undefined;
  const offending = [...new Set([...text].filter((character) => refusedCharacter.test(character)))];
  return `contains characters that are not allowed (${describeCharacters(offending)}); ${refusedCharactersDescription} are refused`;
}

/** The text without the refused characters, for a value kept for people rather than refused (an uploaded file's name). */
export function withoutRefusedCharacters(text: string): string {
  return text.replace(refusedCharacters, '');
}

/**
 * Characters that show as nothing although Unicode files them as letters or symbols (the Hangul
 * fillers U+115F, U+1160, U+3164 and U+FFA0, the braille blank U+2800), and combining marks, which
 * show only on a character before them.
 */
const blankLooking = /^[\s\u115F\u1160\u3164\uFFA0\u2800\p{M}]*$/u;

/**
 * Whether a text shows nothing: empty, white space, blank-looking letters or symbols, or combining
 * marks with nothing to combine with (an audit had a first name of one U+3164 taken as filled in).
 */
export function isBlank(text: string): boolean {
  return blankLooking.test(text);
}

/**
 * What a text that shows nothing but is not white space is told (combining marks with nothing to
 * combine with, fillers): until 2026-12-05 it was told it was empty or white space (found by an audit).
 */
const invisibleMessage = 'must show something: it holds only characters that show nothing (combining marks, fillers)';

/**
 * The rule's message for a text, or undefined when it passes: refused characters, then, with
 * `notBlank`, a text that shows nothing (isBlank).
 */
export function plainTextProblem(text: string, options: { notBlank?: boolean } = {}): string | undefined {
  const problem = refusedCharactersProblem(text);
  if (problem !== undefined) return problem;
  if (options.notBlank !== true || !isBlank(text)) return undefined;
  return /^\s*$/u.test(text) ? 'must not be empty or only white space' : invisibleMessage;
}

/** 400 VALIDATION_ERROR naming `field` when `text` fails plainTextProblem; nothing for an absent or null text. */
export function assertPlainText(text: string | null | undefined, field: string, options: { notBlank?: boolean } = {}): void {
  if (text == null) return;
  const problem = plainTextProblem(text, options);
  if (problem !== undefined) throw validationError(field, problem);
}
