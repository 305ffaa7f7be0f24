import crypto from 'node:crypto';
import pg from 'pg';
import { sql, type RawBuilder } from 'kysely';

/**
 * Named prepared statements for the hot write path.
 *
 * PostgreSQL parses, analyses and plans an unnamed statement every time it runs; for the large
 * batched statements of the ledger that was about a quarter of the database's CPU per transfer.
 * A statement wrapped in `prepared()` starts with a marker comment; the pool's client class below
 * sends such statements under a name derived from their text, so each connection parses and
 * plans them once and afterwards only binds and executes them.
 *
 * Only statements whose text does not depend on the data belong here (values travel as
 * parameters, arrays as one parameter each): every distinct text is kept by every connection for
 * its lifetime. The marker must start the text, which is why `prepared()` wraps whole statements.
 */
const marker = '/* prepared */ ';

export function prepared<T>(statement: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(marker)}${statement}`;
}

/** Statement names by text, so the text is hashed once per process rather than once per use. */
const names = new Map<string, string>();
/** Distinct prepared texts one process accepts; past it, statements run unnamed (and a bug shows in the log). */
export const preparedStatementsMax = 500;

export function preparedStatementName(text: string): string | undefined {
  if (!text.startsWith(marker)) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= preparedStatementsMax) return undefined;
    name = `ob_${crypto.createHash('sha256').update(text).digest('base64url').slice(0, 40)}`;
    names.set(text, name);
  }
  return name;
}

type AnyQuery = (...args: unknown[]) => never;

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

function withArrayLiterals(values: unknown[]): unknown[] {
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

/**
 * The pool's client: statements marked by `prepared()` become named prepared statements, and
 * array parameters are serialised by `arrayLiteral`.
 */
export class PreparingClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    if (typeof text === 'string' && Array.isArray(values)) {
      const name = preparedStatementName(text);
      const config: pg.QueryConfig = name === undefined ? { text, values: withArrayLiterals(values) } : { name, text, values: withArrayLiterals(values) };
      return (super.query as unknown as AnyQuery).call(this, config, callback);
    }
    return (super.query as unknown as AnyQuery).apply(this, args);
  }
}
