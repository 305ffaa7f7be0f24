import { sql, type RawBuilder } from 'kysely';
import type { Tx } from './transaction.js';
import { prepared } from './prepared-statements.js';

/**
 * Several INSERT/UPDATE statements sent to the database as one statement (data-modifying WITH
 * queries), so a write touching several tables costs one round trip instead of one per table.
 * Every part runs against the same snapshot and none sees another's rows, so the parts must be
 * independent: they must not touch the same rows. Foreign keys between parts (an entry pointing
 * at a transfer inserted by another part) are checked at the end of the statement and see all of
 * them. A part added with `countRows` must end with `RETURNING 1`; execute() answers how many
 * rows each such part returned.
 */
export class WriteStatement {
  private readonly parts: { name: string; statement: RawBuilder<unknown>; countRows: boolean }[] = [];
  private readonly checks: ((counts: Record<string, number>) => void)[] = [];
  private executed = false;

  /** Runs after execute() with the row counts, for the parts' own consistency checks. */
  onExecuted(check: (counts: Record<string, number>) => void): void {
    this.checks.push(check);
  }

  add(name: string, statement: RawBuilder<unknown>, options: { countRows?: boolean } = {}): void {
    if (this.executed) throw new Error('WriteStatement already executed');
    if (!/^[a-z_][a-z0-9_]*$/.test(name) || this.parts.some((part) => part.name === name)) throw new Error(`bad or repeated part name ${name}`);
    this.parts.push({ name, statement, countRows: options.countRows ?? false });
  }

  get isEmpty(): boolean {
    return this.parts.length === 0;
  }

  /** The combined statement (for execute(), and for benchmarks that replay the same SQL elsewhere). */
  build(): RawBuilder<Record<string, number>> {
    const counted = this.parts.filter((part) => part.countRows);
    const withClauses = sql.join(
      this.parts.map((part) => sql`${sql.raw(part.name)} AS (${part.statement})`),
      sql`, `,
    );
    const select =
      counted.length === 0
        ? sql`SELECT 1 AS done`
        : sql`SELECT ${sql.join(
            counted.map((part) => sql`(SELECT count(*) FROM ${sql.raw(part.name)})::int AS ${sql.raw(part.name)}`),
            sql`, `,
          )}`;
    return prepared(sql<Record<string, number>>`WITH ${withClauses} ${select}`);
  }

  async execute(tx: Tx): Promise<Record<string, number>> {
    if (this.executed) throw new Error('WriteStatement already executed');
    this.executed = true;
    if (this.parts.length === 0) return {};
    const result = await this.build().execute(tx);
    const row = result.rows[0] ?? {};
    const counts = Object.fromEntries(this.parts.filter((part) => part.countRows).map((part) => [part.name, Number(row[part.name] ?? 0)]));
    for (const check of this.checks) check(counts);
    return counts;
  }
}
