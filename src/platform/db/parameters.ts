import { sql, type RawBuilder } from 'kysely';

/**
 * Query parameters the way the hot statements need them: array literals written by us rather than
 * by node-postgres, and lists of JSON documents as one JSON array. The pool's client
 * (prepared-statements.ts) applies `withArrayLiterals` to every query.
 */

const plainElement = /^[A-Za-z0-9_.:+-]+$/;

/** True when the text can stand unquoted in an array literal: letters, digits and _ . : + - only, and not NULL. */
function isPlain(text: string): boolean {
  return plainElement.test(text) && (text.length !== 4 || text.toUpperCase() !== 'NULL');
}

/** The batched statements carry the same few moments many times over (one per request, on every row it writes). */
const isoTexts = new Map<number, string>();
function isoText(moment: Date): string | undefined {
  const time = moment.getTime();
  if (Number.isNaN(time)) return undefined;
  let text = isoTexts.get(time);
  if (text === undefined) {
    if (isoTexts.size >= 4096) isoTexts.clear();
    text = moment.toISOString();
    isoTexts.set(time, text);
  }
  return text;
}

/**
 * A PostgreSQL array literal for the common parameter values (strings, numbers, bigints,
 * booleans, dates, nulls, nested arrays), or undefined for anything else (node-postgres then
 * serialises the array itself). node-postgres quotes and escapes every element with two regular
 * expressions and formats dates by hand; the batched statements send thousands of ids, amounts
 * and timestamps per transaction, and most of them need no quoting at all. Dates are sent in
 * UTC (every timestamp column here is timestamptz).
 */
export function arrayLiteral(values: readonly unknown[]): string | undefined {
  let literal = '{';
  for (let index = 0; index < values.length; index++) {
    if (index > 0) literal += ',';
    const value = values[index];
    let text: string;
    if (value === null || value === undefined) {
      literal += 'NULL';
      continue;
    } else if (typeof value === 'string') {
      text = value;
    } else if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
      text = String(value);
    } else if (value instanceof Date) {
      const iso = isoText(value);
      if (iso === undefined) return undefined;
      literal += iso;
      continue;
    } else if (Array.isArray(value)) {
      const nested = arrayLiteral(value);
      if (nested === undefined) return undefined;
      literal += nested;
      continue;
    } else {
      return undefined;
    }
    literal += isPlain(text) ? text : `"${text.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${literal}}`;
}

/**
 * An array of JSON documents as one parameter: `${jsonArray(values)}` in SQL is a jsonb[] with the
 * documents in order. One JSON.stringify of the whole list is much cheaper than quoting every
 * document as an element of an array literal.
 */
export function jsonArray(values: readonly unknown[]): RawBuilder<unknown> {
  return sql`ARRAY(SELECT document FROM jsonb_array_elements(${JSON.stringify(values)}::jsonb) WITH ORDINALITY AS d (document, position) ORDER BY position)`;
}

/** The parameters with every array that arrayLiteral can write replaced by its literal (a copy when any is). */
export function withArrayLiterals(values: unknown[]): unknown[] {
  let copy: unknown[] | undefined;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (!Array.isArray(value)) continue;
    const literal = arrayLiteral(value);
    if (literal === undefined) continue;
    copy ??= [...values];
    copy[index] = literal;
  }
  return copy ?? values;
}

