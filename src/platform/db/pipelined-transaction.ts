import pg from 'pg';
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Database } from './schema.js';
import { PreparingClient, queryConfig } from './prepared-statements.js';
import { isDatabaseAnswer, retryingTransaction, type Tx } from './transaction.js';

/**
 * A transaction whose statements go out without waiting for the answers to the ones before
 * them, for the batched write path.
 *
 * Kysely's transactions send one statement at a time: BEGIN, wait, the next statement, wait, and
 * so on, and COMMIT only after the last answer. On PostgreSQL the pool's connections run in
 * node-postgres's pipeline mode (database.ts), which answers queries in the order they were sent
 * however many are on the wire. Here BEGIN leaves together with the statements that follow it,
 * statements that do not depend on each other's answers leave together (issue them without
 * awaiting in between), and COMMIT leaves right behind the last write. A batch of transfers
 * thus costs two round trips instead of five. On PGlite, whose client is not pipelined, the same
 * statements simply run one after the other.
 *
 * Safety rests on PostgreSQL's ordering and on two rules:
 * - no statement answers before BEGIN has answered successfully (each answer waits for BEGIN's),
 *   so nothing that depends on an answer can be sent outside the transaction; only the
 *   statements issued before the first answer could run outside it, and those are reads;
 * - a write sent together with COMMIT that fails turns the COMMIT into a rollback (PostgreSQL
 *   answers ROLLBACK), and its error is thrown; a COMMIT not answered `COMMIT` is an error too.
 */

/**
 * What `work` answers: its result and, optionally, its last statement, compiled and not sent.
 * The transaction sends it and COMMIT right behind it, in that order, in one write. (Were `work`
 * to send it through Kysely unawaited, Kysely's own awaits could let COMMIT overtake it and the
 * statement would run after the commit, outside the transaction.) Every other statement of
 * `work` must have been answered by the time `work` returns.
 */
export interface PipelinedOutcome<T> {
  result: T;
  last?: CompiledQuery | undefined;
}

class PipelinedConnection implements DatabaseConnection {
  /** Settled once BEGIN has answered; every statement's answer waits for it. */
  opened: Promise<unknown> = Promise.resolve();
  /** Sends BEGIN unless it has been sent: called before every statement, so BEGIN goes first. */
  begin: () => void = () => {};

  constructor(readonly client: pg.PoolClient) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    this.begin();
    const result = await this.client.query(compiled.sql, [...compiled.parameters]);
    await this.opened;
    const command = result.command;
    const counted = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return { numAffectedRows: counted ? BigInt(result.rowCount ?? 0) : undefined, rows: (result.rows ?? []) as R[] };
  }

  // eslint-disable-next-line require-yield -- a generator that refuses at once
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not available in a pipelined transaction');
  }
}

/** A Kysely instance over one pool client whose queries are not serialised by Kysely. */
function kyselyOver(connection: DatabaseConnection): Tx {
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: () => Promise.reject(new Error('a pipelined transaction is already open')),
    commitTransaction: () => Promise.reject(new Error('a pipelined transaction commits by itself')),
    rollbackTransaction: () => Promise.reject(new Error('a pipelined transaction rolls back by itself')),
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (instance) => new PostgresIntrospector(instance),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  // The work functions take a Tx: this instance is one (a single connection inside BEGIN), but
  // it does not have Transaction's class. Nothing here calls transaction() or connection() on it.
  return db as unknown as Tx;
}

/** Errors after which nobody knows whether the transaction committed (see `isCommitOutcomeUnknown`). */
const outcomeUnknown = new WeakSet<object>();

/**
 * Whether the transaction that failed with this error may have committed all the same: its COMMIT
 * had been sent and the error is not PostgreSQL's answer (the connection was lost, say). Work
 * failed this way must not be done again as if nothing had happened.
 */
export function isCommitOutcomeUnknown(error: unknown): boolean {
  return typeof error === 'object' && error !== null && outcomeUnknown.has(error);
}

/**
 * The batched statements are prepared once per connection and then only bound and run; PostgreSQL
 * still plans each of the first five runs for its own parameters, and afterwards keeps doing so
 * whenever those plans looked cheaper than the generic one. Its estimates follow the length of
 * the arrays, so on a connection whose first batches held one request each (light load) it
 * planned the whole write statement again for every batch from then on: about 0.65 ms of
 * PostgreSQL's time per batch, on top of 1.4 ms with the plan reused (a one-transfer batch,
 * docs/benchmarks.md). The plan does not depend on the arrays: every part looks rows up by key.
 */
const planCacheMode = 'force_generic_plan';

const connections = new WeakMap<pg.PoolClient, { connection: PipelinedConnection; tx: Tx }>();

function bound(client: pg.PoolClient): { connection: PipelinedConnection; tx: Tx } {
  let entry = connections.get(client);
  if (!entry) {
    const connection = new PipelinedConnection(client);
    entry = { connection, tx: kyselyOver(connection) };
    connections.set(client, entry);
  }
  return entry;
}

/**
 * Runs `work` in one pipelined transaction on a connection of its own, and runs it again, a
 * bounded number of times, on a serialization failure or a deadlock (like `withTransaction`).
 * Its prepared statements run with generic plans (see planCacheMode).
 */
export function withPipelinedTransaction<T>(pool: pg.Pool, work: (tx: Tx) => Promise<PipelinedOutcome<T>>): Promise<T> {
  return retryingTransaction(() => attempt(pool, work));
}

async function attempt<T>(pool: pg.Pool, work: (tx: Tx) => Promise<PipelinedOutcome<T>>): Promise<T> {
  const client = await pool.connect();
  const { connection, tx } = bound(client);
  let begin: Promise<unknown> | undefined;
  let last: Promise<unknown> | undefined;
  let broken: unknown;
  let commitSent = false;
  let commit: Promise<pg.QueryResult> | undefined;
  try {
    connection.begin = () => {
      if (begin) return;
      // Generic plans for this transaction's prepared statements: see planCacheMode.
      begin = client.query(`BEGIN; ${setPlanCacheMode}`);
      connection.opened = begin;
      // Observed here as well, so a failed BEGIN is never an unhandled rejection.
      begin.catch(() => {});
    };
    const outcome = await work(tx);
    if (!begin) {
      // `work` sent nothing: the whole transaction is its last statement, sent as one.
      if (!outcome.last) return outcome.result;
      commitSent = true;
      await sendAsTransaction(client, outcome.last);
      return outcome.result;
    }
    if (outcome.last) {
      last = client.query(outcome.last.sql, [...outcome.last.parameters]);
      last.catch(() => {});
    }
    commit = client.query('COMMIT');
    commitSent = true;
    commit.catch(() => {});
    await begin;
    if (last) await last;
    const committed = await commit;
    if (committed.command !== 'COMMIT') throw new Error(`the transaction did not commit (PostgreSQL answered ${committed.command})`);
    return outcome.result;
  } catch (error) {
    // Whatever was still on the wire answers first. Once COMMIT went out, its answer ends the
    // transaction whatever it is (ROLLBACK when a statement before it failed), so nothing follows
    // it; only a COMMIT the connection failed to answer leaves the connection broken. Until
    // 2026-12-06 a ROLLBACK followed it anyway, and PostgreSQL logged "there is no transaction in
    // progress" (found by an audit: an execution's idempotency record clashing with another
    // process's). Before COMMIT went out, the transaction is rolled back. A transaction sent as
    // one has ended either way.
    if (last) await last.catch(() => {});
    if (commit) {
      try {
        await commit;
      } catch (commitError) {
        if (!isDatabaseAnswer(commitError)) broken = commitError;
      }
    } else if (begin) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError;
      }
    }
    if (commitSent && !isDatabaseAnswer(error) && typeof error === 'object' && error !== null) outcomeUnknown.add(error);
    throw error;
  } finally {
    connection.opened = Promise.resolve();
    connection.begin = () => {};
    client.release(broken instanceof Error ? broken : undefined);
  }
}

const setPlanCacheMode = `SET LOCAL plan_cache_mode = ${planCacheMode}`;
/** The same for a connection whose next statements are transactions of their own (no transaction block to be LOCAL to). */
const setSessionPlanCacheMode = `SET plan_cache_mode = ${planCacheMode}`;
const resetPlanCacheMode = 'RESET plan_cache_mode';

/**
 * Sends one statement as a whole transaction, with node-postgres's public API only: in pipeline
 * mode every query goes out as Parse/Bind/Describe/Execute followed by its own Sync, and
 * PostgreSQL runs the messages up to a Sync as one implicit transaction, committed at the Sync (or
 * rolled back there if the statement failed). The connection is out of any transaction afterwards,
 * so statements sent this way can follow each other on one connection without waiting: one that
 * fails does not touch the next. Extended mode even without parameters (a simple query would do
 * as well for one statement, but the prepared statement is only reused in extended mode).
 */
function sendStatement(client: pg.ClientBase, compiled: CompiledQuery): Promise<unknown> {
  return client.query({ ...queryConfig(compiled.sql, [...compiled.parameters]), queryMode: 'extended' } as pg.QueryConfig);
}

/**
 * A single statement as its own transaction on a connection taken for it: between the setting of
 * planCacheMode for the connection and its reset, the three sent in one write without waiting in
 * between. Resolves once the statement has committed and the setting is back.
 */
async function sendAsTransaction(client: pg.ClientBase, compiled: CompiledQuery): Promise<void> {
  const setting = client.query(setSessionPlanCacheMode);
  const statement = sendStatement(client, compiled);
  const reset = client.query(resetPlanCacheMode);
  for (const pending of [setting, statement, reset]) pending.catch(() => {});
  await setting;
  try {
    await statement;
  } finally {
    await reset;
  }
}

const laneSendsOnlyLast = 'a transaction on a lane sends nothing but its last statement';
const readsNothing: DatabaseConnection = {
  executeQuery: () => Promise.reject(new Error(laneSendsOnlyLast)),
  // eslint-disable-next-line require-yield -- a generator that refuses at once
  async *streamQuery() {
    throw new Error(laneSendsOnlyLast);
  },
};

/**
 * One pool connection on which whole transactions follow each other without waiting for one
 * another (each statement behind its own Sync, see `sendStatement`): the database starts the next as soon as it has committed the
 * one before, instead of waiting for this process to answer the client and send another. It holds
 * its connection while any of its transactions is in flight and gives it back to the pool when
 * none is.
 *
 * `work` may not send anything (its tx refuses): it builds the transaction's only statement and
 * returns it as `last`. Transactions on a lane are not retried; a failure is PostgreSQL's answer
 * (the transaction rolled back) unless isCommitOutcomeUnknown says otherwise.
 */
export class TransactionLane {
  /** The connection in use and how many of its transactions are in flight. */
  private current: { client: Promise<pg.PoolClient>; running: number; broken?: Error } | undefined;
  private readonly tx: Tx;

  constructor(private readonly pool: pg.Pool) {
    this.tx = kyselyOver(readsNothing);
  }

  /** Transactions sent and not answered yet. */
  get inFlight(): number {
    return this.current?.running ?? 0;
  }

  async run<T>(work: (tx: Tx) => Promise<PipelinedOutcome<T>>): Promise<T> {
    const lane = (this.current ??= { client: this.connect(), running: 0 });
    lane.running++;
    let sent = false;
    try {
      const outcome = await work(this.tx);
      if (!outcome.last) return outcome.result;
      const client = await lane.client;
      sent = true;
      await sendStatement(client, outcome.last);
      return outcome.result;
    } catch (error) {
      if (sent && !isDatabaseAnswer(error) && typeof error === 'object' && error !== null) {
        outcomeUnknown.add(error);
        // The connection goes back broken (the pool closes it), and no new transaction is sent
        // on it; those already behind fail with the same error.
        lane.broken ??= error instanceof Error ? error : new Error('the connection was lost');
        if (this.current === lane) this.current = undefined;
      }
      throw error;
    } finally {
      lane.running--;
      if (lane.running === 0) {
        if (this.current === lane) this.current = undefined;
        lane.client.then(
          (client) => giveBack(client, lane.broken),
          () => {},
        );
      }
    }
  }

  /**
   * Takes a connection for the lane and sets planCacheMode on it for as long as the lane holds it
   * (every statement on a lane is a transaction of its own, so there is no transaction block for
   * SET LOCAL). The setting goes out ahead of the first statement, unanswered yet: PostgreSQL runs
   * them in order. A connection a lane gave back still has it on unless its next user ran.
   */
  private async connect(): Promise<pg.PoolClient> {
    const client = await this.pool.connect();
    if (client instanceof PreparingClient && client.takeBackReset()) return client;
    client.query(setSessionPlanCacheMode).catch(() => {
      // A failed SET leaves the default plan mode: slower plans, not wrong answers.
    });
    return client;
  }
}

/**
 * Gives a lane's connection back to the pool as it came: at once, with the reset of the plan
 * setting left to go out ahead of its next user's first statement (PreparingClient), so the lane
 * holds no connection longer than its transactions.
 */
function giveBack(client: pg.PoolClient, broken: Error | undefined): void {
  if (broken) {
    client.release(broken);
    return;
  }
  if (client instanceof PreparingClient) {
    client.deferReset(resetPlanCacheMode);
    client.release();
    return;
  }
  client.query(resetPlanCacheMode).then(
    () => client.release(),
    (error: unknown) => client.release(error instanceof Error ? error : new Error('the plan setting could not be reset')),
  );
}
