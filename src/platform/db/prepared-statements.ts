import crypto from 'node:crypto';
import pg from 'pg';
import { sql, type RawBuilder } from 'kysely';
import { withArrayLiterals } from './parameters.js';

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
/**
 * Distinct prepared texts one process accepts. Past it, statements run unnamed and a warning is
 * written once: some statement marked `prepared()` builds its text from the data, which is a bug.
 */
export const preparedStatementsMax = 500;
let warnedFull = false;

export function preparedStatementName(text: string): string | undefined {
  if (!text.startsWith(marker)) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= preparedStatementsMax) {
      if (!warnedFull) {
        warnedFull = true;
        process.emitWarning(`more than ${preparedStatementsMax} distinct prepared statements: one marked prepared() varies with its data`, 'OpenBaaSWarning');
      }
      return undefined;
    }
    name = `ob_${crypto.createHash('sha256').update(text).digest('base64url').slice(0, 40)}`;
    names.set(text, name);
  }
  return name;
}

type AnyQuery = (...args: unknown[]) => never;

/**
 * The pool's client: statements marked by `prepared()` become named prepared statements, and
 * array parameters are serialised by `withArrayLiterals` (parameters.ts).
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
