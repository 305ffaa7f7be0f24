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

/** A statement written as text (text-statements.ts) as a prepared statement. */
export function preparedText(text: string): string {
  return marker + text;
}

/**
 * When a statement is prepared again, under a new name: after this many runs in the process, then
 * after eight times as many, and so on (64, 512, 4,096, 32,768, 262,144 runs), then never again.
 *
 * PostgreSQL keeps a prepared statement's generic plan for the connection's life, until the
 * statistics of a table it reads change (ANALYZE). A plan made while a table was young stays
 * after it has grown: the trade quotes' update, planned when the table was empty (where reading
 * it whole costs least), read every quote for every batch of executions a quarter of an hour
 * later, on a server whose autovacuum is off. The planner reads a table's size from its file as it
 * plans, statistics or not, so a statement planned again sees the table as it is now; the runs
 * grow eightfold between plans, so a plan is remade while its tables are still near the size it
 * was made for, and a busy statement is planned only six times per connection.
 */
const replanFirst = 64;
const replanFactor = 8;
const replanLast = 262_144;

interface Named {
  /** The name without its generation: the statement's family on every connection (`familyOf`). */
  family: string;
  /** The name of its current generation. */
  name: string;
  runs: number;
  generation: number;
}

/** Characters of the text's hash in a statement's name, after `ob_`. */
const hashChars = 40;
/** A prepared statement's name without its generation (`_1`, `_2`…); base64url may hold `_` itself. */
const familyOf = (name: string) => name.slice(0, 'ob_'.length + hashChars);

/** Statement names by text, so the text is hashed once per process rather than once per use. */
const names = new Map<string, Named>();
/**
 * Distinct prepared texts one process accepts. Past it, statements run unnamed and a warning is
 * written once: some statement marked `prepared()` builds its text from the data, which is a bug.
 */
export const preparedStatementsMax = 500;
let warnedFull = false;

function namedOf(text: string): Named | undefined {
  if (!text.startsWith(marker)) return undefined;
  let named = names.get(text);
  if (named === undefined) {
    if (names.size >= preparedStatementsMax) {
      if (!warnedFull) {
        warnedFull = true;
        process.emitWarning(`more than ${preparedStatementsMax} distinct prepared statements: one marked prepared() varies with its data`, 'OpenBaaSWarning');
      }
      return undefined;
    }
    const family = `ob_${crypto.createHash('sha256').update(text).digest('base64url').slice(0, hashChars)}`;
    named = { family, name: family, runs: 0, generation: 0 };
    names.set(text, named);
  }
  return named;
}

/** The name a statement's text runs under now (undefined: it runs unnamed); does not count as a run. */
export function preparedStatementName(text: string): string | undefined {
  return namedOf(text)?.name;
}

/** The runs after which a statement is prepared again: 64, 512, … (see replanFirst). */
export const replanAfterRuns: readonly number[] = (() => {
  const runs: number[] = [];
  for (let at = replanFirst; at <= replanLast; at *= replanFactor) runs.push(at);
  return runs;
})();

/** The name for one run of the statement (a new generation at each of replanAfterRuns); counts the run. */
function nameForRun(text: string): string | undefined {
  const named = namedOf(text);
  if (!named) return undefined;
  named.runs++;
  if (named.runs === replanAfterRuns[named.generation]) {
    named.generation++;
    named.name = `${named.family}_${named.generation}`;
  }
  return named.name;
}

/**
 * Forgets the names given so far (tests only; test/setup-file.ts calls it before each file): the
 * cap's test fills the table, and the test files that share its process (vitest runs them with
 * isolate: false) must not find it full, nor runs counted by the files before them. Statements
 * already prepared on a connection keep their names, which derive from the text alone.
 */
export function forgetPreparedStatementNames(): void {
  names.clear();
  warnedFull = false;
}

type AnyQuery = (...args: unknown[]) => never;

/**
 * What a named prepared statement's rows look like on one connection, learnt from its first run:
 * the columns PostgreSQL described and node-postgres's parser for each (`fields` empty for a
 * statement that returns no rows).
 */
interface Described {
  fields: unknown[];
  parsers: unknown[] | undefined;
  empty: object | null;
}

/** The parts of node-postgres's Query and Result (pg 8.23) that DescribedQuery works with. */
interface QueryInternals {
  name?: string;
  values?: unknown[];
  _accumulateRows?: unknown;
  _result: { fields: unknown[]; _parsers: unknown[] | undefined; _prebuiltEmptyResultObject: object | null };
  prepare(connection: unknown): void;
  handleRowDescription(message: unknown): void;
  handleCommandComplete(message: unknown, connection: unknown): void;
}
type QueryClass = new (text: string, values: undefined, callback: unknown) => QueryInternals;
const BaseQuery = pg.Query as unknown as QueryClass;
/** node-postgres's connection, as far as its Describe message goes. */
interface Describing {
  describe: (message: unknown) => void;
}
const noDescribe = () => {};

/**
 * A named prepared statement's run that leaves out the Describe message once the connection knows
 * the statement's columns. node-postgres asks PostgreSQL to describe the result of every run,
 * then parses that description and looks up a parser per column again (the card-auth benchmark:
 * about 7 % of the server's busy time, on statements of 30 to 60 columns). A prepared statement's
 * columns cannot change under one name (PostgreSQL refuses a run whose result type changed:
 * "cached plan must not change result type"), and every generation is a name of its own.
 */
class DescribedQuery extends BaseQuery {
  declare name: string;

  constructor(
    name: string,
    config: pg.QueryConfig,
    callback: (error: Error | null, result: unknown) => void,
    /** The connection's described statements: known once this connection has run the statement. */
    private readonly described: Map<string, Described>,
  ) {
    // Given the text alone: node-postgres copies a config object property by property
    // (cloneQueryConfig, about 1 % of the server's busy time in the card-auth benchmark).
    super(config.text, undefined, callback);
    this.name = name;
    this.values = config.values as unknown[] | undefined;
  }

  override prepare(connection: unknown): void {
    const known = this.described.get(this.name);
    if (known === undefined) {
      super.prepare(connection);
      return;
    }
    if (known.fields.length > 0) {
      this._result.fields = known.fields;
      this._result._parsers = known.parsers;
      this._result._prebuiltEmptyResultObject = known.empty;
      this._accumulateRows = true;
    }
    // node-postgres's own Bind and Execute (and its answer to a value it cannot bind), without the Describe.
    const wire = connection as Describing;
    const describe = wire.describe;
    wire.describe = noDescribe;
    try {
      super.prepare(connection);
    } finally {
      wire.describe = describe;
    }
  }

  override handleRowDescription(message: unknown): void {
    super.handleRowDescription(message);
    const result = this._result;
    this.described.set(this.name, { fields: result.fields, parsers: result._parsers, empty: result._prebuiltEmptyResultObject });
  }

  override handleCommandComplete(message: unknown, connection: unknown): void {
    // A statement that returns no rows is described as NoData, which node-postgres ignores.
    if (!this.described.has(this.name) && this._result.fields.length === 0) this.described.set(this.name, { fields: [], parsers: undefined, empty: null });
    super.handleCommandComplete(message, connection);
  }
}

/** How the pool's client sends a statement: under its name when `prepared()` marked it, arrays as literals. */
export function queryConfig(text: string, values: unknown[]): pg.QueryConfig {
  const name = nameForRun(text);
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
  /** The name each prepared statement runs under on this connection, by family (see replanFirst). */
  private readonly generations = new Map<string, string>();
  /** Earlier generations of prepared statements, to deallocate ahead of the next query. */
  private readonly retired: string[] = [];
  /** The columns of the prepared statements run on this connection, by name (DescribedQuery). */
  private readonly described = new Map<string, Described>();

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

  /**
   * Notes that this connection runs `name` now; when it replaces an earlier generation of the same
   * statement that this connection prepared, that one is deallocated ahead of the next query (it
   * is never run again). Only a name PostgreSQL confirmed preparing is deallocated, so the
   * DEALLOCATE cannot fail for want of it (and inside a transaction, a failure would abort it).
   */
  private runsUnder(name: string): void {
    if (!name.startsWith('ob_')) return;
    const family = familyOf(name);
    const previous = this.generations.get(family);
    if (previous === name) return;
    this.generations.set(family, name);
    if (previous !== undefined && this.parsed()[previous] !== undefined) this.retired.push(previous);
  }

  /** node-postgres's record of the statements this connection prepared (name → text). */
  private parsed(): Record<string, string> {
    return (this as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements;
  }

  private sendAhead(): void {
    const simple = (text: string) => (super.query as unknown as (this: pg.Client, text: string) => Promise<unknown>).call(this, text);
    if (this.pendingReset !== undefined) {
      const reset = this.pendingReset;
      this.pendingReset = undefined;
      // A failed reset leaves a plan setting on: slower plans, not wrong answers.
      simple(reset).catch(() => {});
    }
    for (const name of this.retired.splice(0)) {
      // It fails only inside a transaction that already failed; the statement then stays prepared
      // (and recorded as such), unused.
      this.described.delete(name);
      simple(`DEALLOCATE "${name}"`).then(
        () => delete this.parsed()[name],
        () => {},
      );
    }
  }

  override query(...args: unknown[]): never {
    this.coalesceWrites();
    const [text, values, callback] = args;
    const config = typeof text === 'string' && Array.isArray(values) ? queryConfig(text, values) : undefined;
    const name = config ? config.name : typeof text === 'object' && text !== null ? (text as pg.QueryConfig).name : undefined;
    if (name !== undefined) this.runsUnder(name);
    this.sendAhead();
    if (config && name !== undefined && callback === undefined && !(this as { binary?: boolean }).binary) {
      const described = this.described;
      return new Promise((resolve, reject) => {
        const query = new DescribedQuery(name, config, (error, result) => (error ? reject(error) : resolve(result)), described);
        (super.query as unknown as AnyQuery).call(this, query);
      }) as never;
    }
    if (config) return (super.query as unknown as AnyQuery).call(this, config, callback);
    return (super.query as unknown as AnyQuery).apply(this, args);
  }
}
