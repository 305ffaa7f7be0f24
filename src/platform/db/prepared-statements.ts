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

/**
 * Forgets the names given so far (tests only): the cap's test fills the table, and the test files
 * that share its process (vitest runs them with isolate: false) must not find it full. Statements
 * already prepared on a connection keep their names, which derive from the text alone.
 */
export function forgetPreparedStatementNames(): void {
  names.clear();
  warnedFull = false;
}

type AnyQuery = (...args: unknown[]) => never;

/** How the pool's client sends a statement: under its name when `prepared()` marked it, arrays as literals. */
export function queryConfig(text: string, values: unknown[]): pg.QueryConfig {
  const name = preparedStatementName(text);
  const serialised = withArrayLiterals(values);
  return name === undefined ? { text, values: serialised } : { name, text, values: serialised };
}

/**
 * The pool's client: statements marked by `prepared()` become named prepared statements, and
 * array parameters are serialised by `withArrayLiterals` (parameters.ts). In pipeline mode the
 * statements issued in one burst (one turn of the event loop, promise continuations included)
 * leave in one write to the socket: node-postgres writes each statement as it is issued, and
 * every write wakes the database process.
 */
export class PreparingClient extends pg.Client {
  private corked = false;
  /** A statement undoing a session setting its last holder left on: sent ahead of the next query. */
  private pendingReset: string | undefined;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // A connection lost while the client is lent out (the pool listens only to idle clients) is
    // an 'error' event with no listener, which would end the process. The queries in flight fail
    // with the same error, and a broken client is not given out again: nothing more to do here.
    this.on('error', () => {});
  }

  private coalesceWrites(): void {
    const stream = this.pipeline && !this.corked ? this.connection?.stream : undefined;
    // PGlite's in-process stream has nothing to cork: every message reaches it without a syscall.
    if (!stream || typeof stream.cork !== 'function') return;
    this.corked = true;
    stream.cork();
    // A tick queued from a microtask runs once the microtask queue is empty: after the awaits
    // that lead to the burst's other statements.
    queueMicrotask(() =>
      process.nextTick(() => {
        this.corked = false;
        stream.uncork();
      }),
    );
  }

  /**
   * Leaves `statement` (a RESET) to go out ahead of this connection's next query, in the same
   * write: a holder that changed a session setting gives the connection back at once and its next
   * user, whoever it is, gets the default back before its own statement runs.
   */
  deferReset(statement: string): void {
    this.pendingReset = statement;
  }

  /** Cancels a deferred reset, for a holder that wants the setting on again; true when one was pending. */
  takeBackReset(): boolean {
    const pending = this.pendingReset !== undefined;
    this.pendingReset = undefined;
    return pending;
  }

  override query(...args: unknown[]): never {
    this.coalesceWrites();
    if (this.pendingReset !== undefined) {
      const reset = this.pendingReset;
      this.pendingReset = undefined;
      // A failed reset leaves a plan setting on: slower plans, not wrong answers.
      ((super.query as unknown as (text: string) => Promise<unknown>).call(this, reset)).catch(() => {});
    }
    const [text, values, callback] = args;
    if (typeof text === 'string' && Array.isArray(values)) {
      return (super.query as unknown as AnyQuery).call(this, queryConfig(text, values), callback);
    }
    return (super.query as unknown as AnyQuery).apply(this, args);
  }
}
