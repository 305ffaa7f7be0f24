import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Tx } from './transaction.js';
import { prepared } from './prepared-statements.js';

/**
 * A kind of rows a part writes, set-based: its statement writes any number of rows with a text that
 * does not depend on their number (arrays or a JSON document as parameters), so the rows that
 * several writers add for one kind can be written by one part (`WriteStatement.merge`): the
 * database then prepares the table's constraints, starts the part and fires its statement
 * triggers once for all of them.
 */
export interface RowsKind<R> {
  /** The part's name in the combined statement; one kind per name. */
  readonly name: string;
  /**
   * The part, or parts (a later one may read an earlier one by its name, as a webhook delivery
   * reads its events), writing `rows`. A part with `expectRows` must end with `RETURNING 1`.
   */
  parts(rows: readonly R[]): Part[];
  /**
   * For the rows of several writers written together: rows naming the same database row combined
   * into one (a part cannot change one row twice). Absent: the writers' rows never share one.
   */
  merge?(rows: readonly R[]): R[];
}

interface Part {
  name: string;
  statement: RawBuilder<unknown>;
  expectRows?: number | undefined;
}

type RowsPart = { kind: RowsKind<unknown>; rows: unknown[] };

/**
 * Several INSERT/UPDATE statements sent to the database as one statement (data-modifying WITH
 * queries), so a write touching several tables costs one round trip instead of one per table.
 * Every part runs against the same snapshot and none sees another's rows, so the parts must be
 * independent: they must not touch the same rows. Foreign keys between parts (an entry pointing
 * at a transfer inserted by another part) are checked at the end of the statement and see all of
 * them. A part added with `expectRows` must end with `RETURNING 1`: the statement itself checks
 * that the part returned exactly that many rows, and fails (so the transaction cannot commit)
 * when it did not. The check is made by the database because the pipelined write path sends
 * COMMIT before this statement's answer arrives (migration 0010).
 */
export class WriteStatement {
  private readonly parts: (Part | RowsPart)[] = [];
  private executed = false;

  add(name: string, statement: RawBuilder<unknown>, options: { expectRows?: number } = {}): void {
    this.checkNew(name);
    this.parts.push({ name, statement, expectRows: options.expectRows });
  }

  /** Adds rows of `kind`: to the kind's part if it has one already, else as a new part. */
  addRows<R>(kind: RowsKind<R>, rows: readonly R[]): void {
    if (this.executed) throw new Error('WriteStatement already executed');
    if (rows.length === 0) return;
    const existing = this.parts.find((part): part is RowsPart => 'kind' in part && part.kind === kind);
    if (existing) {
      existing.rows.push(...rows);
      return;
    }
    this.checkNew(kind.name);
    this.parts.push({ kind, rows: [...rows] });
  }

  /** A new part's name: a plain SQL identifier, not yet in the statement. */
  private checkNew(name: string): void {
    if (this.executed) throw new Error('WriteStatement already executed');
    if (!/^[a-z_][a-z0-9_]*$/.test(name) || this.parts.some((part) => ('kind' in part ? part.kind.name : part.name) === name)) throw new Error(`bad or repeated part name ${name}`);
  }

  /** True when every part is rows of a kind, so the statement can be merged with others (`merge`). */
  get mergeable(): boolean {
    return this.parts.every((part) => 'kind' in part);
  }

  /**
   * One statement writing what all of `statements` would (each mergeable, none executed): the rows
   * of each kind in one part, in the statements' order, combined by the kind's `merge`. Its parts
   * come in the order of their kinds' names, so the same kinds give the same text (one prepared
   * statement) whatever order the writers added them in.
   */
  static merge(statements: readonly WriteStatement[]): WriteStatement {
    const byKind = new Map<RowsKind<unknown>, unknown[]>();
    for (const statement of statements) {
      if (statement.executed || !statement.mergeable) throw new Error('only mergeable statements not yet executed merge');
      statement.executed = true;
      for (const part of statement.parts as RowsPart[]) {
        const rows = byKind.get(part.kind);
        if (rows) rows.push(...part.rows);
        else byKind.set(part.kind, [...part.rows]);
      }
    }
    const merged = new WriteStatement();
    for (const [kind, rows] of [...byKind].sort(([a], [b]) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      merged.addRows(kind, kind.merge ? kind.merge(rows) : rows);
    }
    return merged;
  }

  /** The combined statement (for execute(), and for benchmarks that replay the same SQL elsewhere). */
  build(): RawBuilder<unknown> {
    const parts = this.parts.flatMap((part) => ('kind' in part ? part.kind.parts(part.rows) : [part]));
    const counted = parts.flatMap(({ name, expectRows }) => (expectRows === undefined ? [] : [{ name, expectRows }]));
    const withClauses = sql.join(
      parts.map((part) => sql`${sql.raw(part.name)} AS (${part.statement})`),
      sql`, `,
    );
    // The expected counts travel as parameters, so the text (and the prepared statement) does not
    // change with them.
    const select =
      counted.length === 0
        ? sql`SELECT 1 AS done`
        : sql`SELECT ${sql.join(
            counted.map(
              ({ name, expectRows }) =>
                sql`openbaas_check((SELECT count(*) FROM ${sql.raw(name)}) = ${expectRows}::int, ${`${name}: expected ${expectRows} rows`}::text) AS ${sql.raw(name)}`,
            ),
            sql`, `,
          )}`;
    return prepared(sql`WITH ${withClauses} ${select}`);
  }

  /**
   * The statement, compiled, for a caller that sends it itself (the pipelined transaction sends it
   * with COMMIT right behind); undefined when nothing was added.
   */
  compile(tx: Tx): CompiledQuery | undefined {
    if (this.executed) throw new Error('WriteStatement already executed');
    this.executed = true;
    return this.parts.length === 0 ? undefined : this.build().compile(tx);
  }

  /** Sends the statement; it fails if a part did not return the rows it was expected to. */
  async execute(tx: Tx): Promise<void> {
    const compiled = this.compile(tx);
    if (compiled) await tx.executeQuery(compiled);
  }
}
