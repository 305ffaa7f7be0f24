import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Tx } from './transaction.js';
import { prepared } from './prepared-statements.js';

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
  private readonly parts: { name: string; statement: RawBuilder<unknown>; expectRows: number | undefined }[] = [];
  private executed = false;

  add(name: string, statement: RawBuilder<unknown>, options: { expectRows?: number } = {}): void {
    if (this.executed) throw new Error('WriteStatement already executed');
    if (!/^[a-z_][a-z0-9_]*$/.test(name) || this.parts.some((part) => part.name === name)) throw new Error(`bad or repeated part name ${name}`);
    this.parts.push({ name, statement, expectRows: options.expectRows });
  }

  /** The combined statement (for execute(), and for benchmarks that replay the same SQL elsewhere). */
  build(): RawBuilder<unknown> {
    const counted = this.parts.flatMap(({ name, expectRows }) => (expectRows === undefined ? [] : [{ name, expectRows }]));
    const withClauses = sql.join(
      this.parts.map((part) => sql`${sql.raw(part.name)} AS (${part.statement})`),
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
