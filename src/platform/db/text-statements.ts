import { CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type QueryResult } from 'kysely';
import { preparedText } from './prepared-statements.js';
import type { Database } from './schema.js';

/**
 * Statements written as SQL text with numbered parameters, for the few that run for every request
 * of a hot path and whose shape varies (the card processor's reads: docs/cards.md). Kysely builds
 * and compiles a query from its operation tree on every call; writing the card's lock and lookup
 * (four subqueries), made for every message, as text took the server's CPU per card message from
 * 673 to 545 µs (docs/benchmarks.md, card-auth). Text costs a few string concatenations; its
 * tables and columns are not type-checked, which is why only such statements are written this
 * way, each next to a test that runs it.
 */

/** The parameters of a statement being written: `add` gives the placeholder of the next one. */
export class StatementParameters {
  readonly values: unknown[] = [];

  /** Adds a value; answers its placeholder (`$1`, `$2`, …). A bound function: `const p = parameters.add`. */
  readonly add = (value: unknown): string => {
    this.values.push(value);
    return `$${this.values.length}`;
  };

  /** Placeholders for a list of values, comma-separated (for IN lists of a known length). */
  list(values: readonly unknown[]): string {
    return values.map(this.add).join(', ');
  }
}

/** A statement ready to run: its text and its parameters, as Kysely's compiler would give them. */
export class TextStatement<R> {
  constructor(
    readonly sql: string,
    readonly parameters: unknown[],
  ) {}

  compile(): CompiledQuery<R> {
    return CompiledQuery.raw(this.sql, this.parameters);
  }

  /** Runs it in a transaction, or on the pool. */
  execute(db: Pick<Kysely<Database>, 'executeQuery'>): Promise<QueryResult<R>> {
    return db.executeQuery(this.compile());
  }
}

/** A prepared statement written as text: `write` adds the parameters it needs and gives the text. */
export function preparedTextStatement<R>(write: (parameters: StatementParameters) => string): TextStatement<R> {
  const parameters = new StatementParameters();
  const text = write(parameters);
  return new TextStatement<R>(preparedText(text), parameters.values);
}

/**
 * A Kysely instance that only compiles (it has no connection): the queries of `compiledOnce` are
 * built on it.
 */
export const compileOnly = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/**
 * A prepared statement whose text does not depend on its arguments, written with Kysely's query
 * builder (typed tables and columns) but built and compiled once: the first call builds it with
 * a marker in place of each argument, the compiled parameters tell which argument goes where (the
 * others, the query's own constants, are kept as they are), and every call then gives the text
 * with its own arguments in that order. `build` must pass its arguments to the query as values
 * only (parameters), never look at them or build text from them.
 */
export function compiledOnce<A extends string[], R>(build: (...args: A) => { compile(): CompiledQuery<R> }): (...args: A) => TextStatement<R> {
  let shape: { sql: string; parameters: ({ argument: number } | { constant: unknown })[] } | undefined;
  return (...args: A) => {
    if (shape === undefined) {
      const markers = args.map((_, index) => `\u0000argument ${index}\u0000`);
      const compiled = build(...(markers as A)).compile();
      if (compiled.sql.includes('\u0000')) throw new Error('compiledOnce: an argument was written into the text');
      const parameters = compiled.parameters.map((value) => {
        const argument = typeof value === 'string' ? markers.indexOf(value) : -1;
        return argument >= 0 ? { argument } : { constant: value };
      });
      shape = { sql: preparedText(compiled.sql), parameters };
    }
    return new TextStatement<R>(
      shape.sql,
      shape.parameters.map((parameter) => ('argument' in parameter ? args[parameter.argument] : parameter.constant)),
    );
  };
}
