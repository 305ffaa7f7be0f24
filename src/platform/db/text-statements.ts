import { CompiledQuery, type QueryResult } from 'kysely';
import type { Tx } from './transaction.js';

/**
 * Statements written as SQL text with numbered parameters, for the few that run for every request
 * of a hot path and whose shape varies (the card processor's reads: docs/cards.md). Kysely builds
 * and compiles a query from its operation tree on every call; for the card's lock and lookup (four
 * subqueries), made for every message, that was about a fifth of the server's CPU per card message
 * (docs/benchmarks.md, card-auth). Text costs a few string concatenations; its tables and columns
 * are not type-checked, which is why only such statements are written this way, each next to a
 * test that runs it.
 */

/** The parameters of a statement being written: `add` gives the placeholder of the next one. */
export class StatementParameters {
  readonly values: unknown[] = [];

  /** Adds a value; answers its placeholder (`$1`, `$2`, …). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Placeholders for a list of values, comma-separated (for IN lists of a known length). */
  list(values: readonly unknown[]): string {
    return values.map((value) => this.add(value)).join(', ');
  }
}

/** A statement ready to run: its text and its parameters, as Kysely's compiler would give them. */
export class TextStatement<R> {
  constructor(
    readonly sql: string,
    readonly parameters: readonly unknown[],
  ) {}

  compile(): CompiledQuery<R> {
    return CompiledQuery.raw(this.sql, [...this.parameters]);
  }

  execute(tx: Tx): Promise<QueryResult<R>> {
    return tx.executeQuery(this.compile());
  }
}
