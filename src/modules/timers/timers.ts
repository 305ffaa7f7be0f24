import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { isDatabaseAnswer, isRetryableDatabaseError, withTransaction, type Tx } from '../../platform/db/transaction.js';
import { tryClientFenceSql, withClientTransaction } from '../../platform/db/client-fence.js';
import type { RequestContext } from '../../platform/http/context.js';
import { WriteStatement, type RowsKind } from '../../platform/db/write-statement.js';
import './timers.tables.js';

/**
 * The one timer mechanism of the program. A module that needs something to happen later (a bank
 * payment settles, a KYC link expires, a card hold expires, a quote lapses...) does two things:
 *
 * 1. defines a `TimerKind`: a name and `run(tx, context, subjectId)`, the work to do when the
 *    timer comes due, inside the transaction that also deletes the timer (so it runs once);
 * 2. calls `scheduleTimer(tx, ...)` in the transaction that creates the subject, with the due
 *    time by the client's clock (`context.now` plus the delay), and `cancelTimer` when the subject
 *    is finished some other way first.
 *
 * The kind is then added to the list in src/modules/timer-kinds.ts, which the timer worker and
 * the sandbox clock's advance call both run.
 */
export interface TimerKind {
  /** Lower case, dots and dashes: `bank-transfer.settle`. Stored with every timer of the kind. */
  kind: string;
  /**
   * Does what the timer is for. Runs inside the transaction that deletes the timer; `context.now`
   * is the moment by the client's clock (on an advance: the due time, or the client's time before
   * the advance when that is later). Must tolerate a subject that is already finished or gone.
   * The timer row is deleted before `run`, so `run` may schedule the subject's next timer of the
   * same kind (a recurring timer: daily interest). A kind whose timers are moved (scheduleTimer
   * on a subject that has one) must also find the subject's own due time and, when that is later
   * than `context.now`, schedule itself again at it instead of doing the work: a move is skipped
   * while a runner holds the timer (scheduleTimer says why), so the run may come at the old time.
   */
  run(tx: Tx, context: RequestContext, subjectId: string): Promise<void>;
}

export interface DueTimer {
  clientId: string;
  kind: string;
  subjectId: string;
  dueAt: Date;
}

export interface FailedTimer extends DueTimer {
  error: string;
}

/**
 * Creates the timer, or moves its due time when the subject already has one of this kind. With
 * `write`, the timer joins the caller's combined statement as a row of `timers_due` (the timers
 * of the statements a transaction group merges are written by one part) instead of being sent now.
 * A timer a runner has claimed (its row locked) is not moved: the runner runs it at its old time
 * and its kind finds the subject's later due time and schedules it again (TimerKind.run). Waiting
 * for the claim would deadlock, as cancelTimer says: the caller holds the subject, which the
 * runner waits for while it holds the timer (possible until 2026-12-06 when an increment moved a
 * card hold's expiry while a runner had just claimed it).
 */
export async function scheduleTimer(
  tx: Tx,
  timer: { clientId: string; kind: string; subjectId: string; dueAt: Date; now: Date },
  write?: WriteStatement,
): Promise<void> {
  await writeTimerRows(tx, write, timersDue, timer);
}

/**
 * Creates the timer, or moves it earlier when the subject already has one of this kind due later;
 * one due earlier is left as it is (with its failures and retry time). For a timer that several
 * things share (a client's daily interest, due at the next midnight of any of its lines).
 */
export async function scheduleTimerNoLaterThan(tx: Tx, timer: { clientId: string; kind: string; subjectId: string; dueAt: Date; now: Date }): Promise<void> {
  await sql`
    INSERT INTO timers (client_id, kind, subject_id, due_at, created_at)
    VALUES (${timer.clientId}, ${timer.kind}, ${timer.subjectId}, ${timer.dueAt}, ${timer.now})
    ON CONFLICT (client_id, kind, subject_id) DO UPDATE SET due_at = EXCLUDED.due_at
    WHERE timers.due_at > EXCLUDED.due_at`.execute(tx);
}

/**
 * Removes the subject's timer of this kind, if any (the subject was finished some other way).
 * `write` as for scheduleTimer. A timer a runner has claimed (its row locked) is left to it: the
 * runner deletes it and its kind finds the subject finished (every kind must tolerate that).
 * Waiting for it deadlocked: the runner holds the timer and waits for the subject, which the
 * caller holds (until 2026-12-06 an audit saw 21 such deadlocks between card completions and
 * hold expiries in three clock advances on PostgreSQL; each was retried).
 */
export async function cancelTimer(tx: Tx, clientId: string, kind: string, subjectId: string, write?: WriteStatement): Promise<void> {
  await writeTimerRows(tx, write, timersCancelled, { clientId, kind, subjectId });
}

/** One timer row into `write`, or sent at once as a statement of its own. */
async function writeTimerRows<R>(tx: Tx, write: WriteStatement | undefined, kind: RowsKind<R>, row: R): Promise<void> {
  const target = write ?? new WriteStatement();
  target.addRows(kind, [row]);
  if (!write) await target.execute(tx);
}

/**
 * The locations of the timers with these keys that no other transaction holds, taken FOR UPDATE
 * (a runner's claim is skipped: cancelTimer and scheduleTimer say why). Each timer found by its
 * whole key: a scalar subquery is one index lookup per key, where a join's generic plan, made while
 * the table looked small, could read all of it.
 */
function unclaimedTimers(clientIds: readonly string[], kinds: readonly string[], subjectIds: readonly string[]) {
  return sql`ARRAY(
    SELECT (SELECT t.ctid FROM timers t WHERE t.client_id = k.client_id AND t.kind = k.kind AND t.subject_id = k.subject_id FOR UPDATE SKIP LOCKED)
    FROM unnest(${clientIds}::uuid[], ${kinds}::text[], ${subjectIds}::uuid[]) AS k (client_id, kind, subject_id))`;
}

/**
 * Timers created or moved, as rows of a combined statement (as scheduleTimer does them one by one).
 * Two parts on one snapshot, on disjoint rows: `timers_moved` updates the timers that exist and no
 * other transaction holds (each found by its whole key and taken with SKIP LOCKED, as
 * `timers_cancelled` does); `timers_due` inserts those that do not exist (the ON CONFLICT is for
 * one another transaction created meanwhile). One that exists and is held is left as it is.
 */
const timersDue: RowsKind<{ clientId: string; kind: string; subjectId: string; dueAt: Date; now: Date }> = {
  name: 'timers_due',
  parts: (rows) => {
    const clientIds = rows.map((row) => row.clientId);
    const kinds = rows.map((row) => row.kind);
    const subjectIds = rows.map((row) => row.subjectId);
    const dueAts = rows.map((row) => row.dueAt);
    return [
      {
        name: 'timers_moved',
        statement: sql`
          UPDATE timers t SET due_at = w.due_at, failed_attempts = 0, retry_at = NULL, last_error = NULL
          FROM unnest(${clientIds}::uuid[], ${kinds}::text[], ${subjectIds}::uuid[], ${dueAts}::timestamptz[]) AS w (client_id, kind, subject_id, due_at)
          WHERE t.ctid = ANY (${unclaimedTimers(clientIds, kinds, subjectIds)})
            AND t.client_id = w.client_id AND t.kind = w.kind AND t.subject_id = w.subject_id`,
      },
      {
        name: 'timers_due',
        statement: sql`
          INSERT INTO timers (client_id, kind, subject_id, due_at, created_at)
          SELECT w.client_id, w.kind, w.subject_id, w.due_at, w.created_at
          FROM unnest(${clientIds}::uuid[], ${kinds}::text[], ${subjectIds}::uuid[], ${dueAts}::timestamptz[], ${rows.map((row) => row.now)}::timestamptz[])
            AS w (client_id, kind, subject_id, due_at, created_at)
          WHERE (SELECT 1 FROM timers e WHERE e.client_id = w.client_id AND e.kind = w.kind AND e.subject_id = w.subject_id) IS NULL
          ON CONFLICT (client_id, kind, subject_id) DO UPDATE SET due_at = EXCLUDED.due_at, failed_attempts = 0, retry_at = NULL, last_error = NULL`,
      },
    ];
  },
};

/** Timers removed, as rows of a combined statement (as cancelTimer does them one by one). */
const timersCancelled: RowsKind<{ clientId: string; kind: string; subjectId: string }> = {
  name: 'timers_cancelled',
  parts: (rows) => [
    {
      name: 'timers_cancelled',
      statement: sql`
        DELETE FROM timers
        WHERE ctid = ANY (${unclaimedTimers(
          rows.map((row) => row.clientId),
          rows.map((row) => row.kind),
          rows.map((row) => row.subjectId),
        )})`,
    },
  ],
};

/** A delay before a failed timer is tried again: 1 s, 2 s, 4 s ... at most an hour. */
export function retryDelayMs(failedAttempts: number): number {
  return Math.min(3_600_000, 1000 * 2 ** Math.min(failedAttempts, 20));
}

interface ClaimedRow {
  client_id: string;
  kind: string;
  subject_id: string;
  due_at: Date;
  offset_ms: string;
}

function toDue(row: ClaimedRow): DueTimer {
  return { clientId: row.client_id, kind: row.kind, subjectId: row.subject_id, dueAt: row.due_at };
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 2000);
}

/** Records a failed run on the timer (in a transaction of its own: the run's was rolled back). */
async function recordFailure(db: Db, timer: DueTimer, wallNow: Date, error: unknown): Promise<void> {
  await withClientTransaction(db, timer.clientId, async (tx) => {
    const row = await tx
      .selectFrom('timers')
      .select('failed_attempts')
      .where('client_id', '=', timer.clientId)
      .where('kind', '=', timer.kind)
      .where('subject_id', '=', timer.subjectId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return;
    await tx
      .updateTable('timers')
      .set({
        failed_attempts: row.failed_attempts + 1,
        retry_at: new Date(wallNow.getTime() + retryDelayMs(row.failed_attempts)),
        last_error: messageOf(error),
      })
      .where('client_id', '=', timer.clientId)
      .where('kind', '=', timer.kind)
      .where('subject_id', '=', timer.subjectId)
      .execute();
  });
}

function kindsByName(kinds: readonly TimerKind[]): Map<string, TimerKind> {
  return new Map(kinds.map((kind) => [kind.kind, kind]));
}

async function runClaimed(tx: Tx, handler: TimerKind, timer: DueTimer, context: RequestContext): Promise<void> {
  // Deleted first, so a kind that recurs (daily interest) can schedule its next run from `run`; a
  // run that throws rolls the deletion back with everything else.
  await cancelTimer(tx, timer.clientId, timer.kind, timer.subjectId);
  await handler.run(tx, context, timer.subjectId);
}

export interface RunDueTimersOptions {
  /** At most this many timers in one call (the worker calls again on its next tick). */
  limit?: number;
  /** A trace id for the events of each timer run (one per run). */
  newTraceId: () => string;
}

export const dueTimersPerRunMax = 500;

/**
 * The timer worker: runs every timer of the given kinds that is due by its client's clock (the
 * injected clock plus the client's offset), earliest first, each in its own transaction. A timer
 * is claimed with FOR UPDATE SKIP LOCKED and deleted in the transaction that runs it, so several
 * workers (and processes) share the work and none runs a timer twice. Clients whose clock is
 * being advanced are left to the advance, which runs their timers in order. A run that fails is
 * rolled back and the timer tried again later (`retry_at`); the failures are thrown together at
 * the end, after the other timers ran, so the worker logs them.
 */
export async function runDueTimers(db: Db, clock: Clock, kinds: readonly TimerKind[], options: RunDueTimersOptions): Promise<DueTimer[]> {
  const handlers = kindsByName(kinds);
  const names = [...handlers.keys()];
  const limit = options.limit ?? dueTimersPerRunMax;
  const ran: DueTimer[] = [];
  const failed: FailedTimer[] = [];
  // Clients whose data a sandbox reset or restore is replacing: their timers wait for the next call.
  const fenced: string[] = [];
  while (ran.length + failed.length < limit && names.length > 0) {
    const wallNow = clock.now();
    let claimed: DueTimer | 'fenced' | undefined;
    try {
      claimed = await withTransaction(db, async (tx) => {
        // The timer's row first (the client is not known before), then the client's fence
        // (client-fence.ts) without waiting: a wait there, holding the timer's row, would deadlock
        // with a restore that holds the fence and comes to delete the client's timers.
        const result = await sql<ClaimedRow & { fenced: boolean }>`
          WITH claimed AS MATERIALIZED (
            SELECT t.client_id, t.kind, t.subject_id, t.due_at, c.clock_offset_ms::text AS offset_ms
            FROM timers t JOIN clients c ON c.id = t.client_id
            WHERE t.kind = ANY(${names}::text[])
              AND t.due_at <= ${wallNow}::timestamptz + (SELECT max(clock_offset_ms) FROM clients) * interval '1 millisecond'
              AND t.due_at <= ${wallNow}::timestamptz + c.clock_offset_ms * interval '1 millisecond'
              AND (t.retry_at IS NULL OR t.retry_at <= ${wallNow})
              AND (c.clock_advance_lease_until IS NULL OR c.clock_advance_lease_until < ${wallNow})
              AND NOT (t.client_id = ANY(${fenced}::uuid[]))
            ORDER BY t.due_at
            LIMIT 1
            FOR UPDATE OF t SKIP LOCKED)
          SELECT claimed.*, ${tryClientFenceSql(sql`claimed.client_id`)} AS fenced FROM claimed`.execute(tx);
        const row = result.rows[0];
        if (!row) return undefined;
        if (!row.fenced) {
          fenced.push(row.client_id);
          return 'fenced' as const;
        }
        const timer = toDue(row);
        const handler = handlers.get(timer.kind);
        if (!handler) return undefined;
        const clientNow = new Date(wallNow.getTime() + Number(row.offset_ms));
        const now = clientNow < timer.dueAt ? timer.dueAt : clientNow;
        try {
          await runClaimed(tx, handler, timer, { clientId: timer.clientId, traceId: options.newTraceId(), now });
        } catch (error) {
          throw asRunError(timer, error);
        }
        return timer;
      });
    } catch (error) {
      if (!(error instanceof TimerRunError)) throw error;
      await recordFailure(db, error.timer, wallNow, error.cause);
      failed.push({ ...error.timer, error: messageOf(error.cause) });
      continue;
    }
    if (!claimed) break;
    if (claimed !== 'fenced') ran.push(claimed);
  }
  if (failed.length > 0) {
    const list = failed.map((timer) => `${timer.kind} ${timer.subjectId}: ${timer.error}`).join('; ');
    throw new Error(`${failed.length} timer run(s) failed and will be tried again (${list}); ${ran.length} ran`);
  }
  return ran;
}

/**
 * A failure of the timer's own work becomes a TimerRunError (recorded on the timer, tried again
 * later); a serialization failure or deadlock stays as it is, so withTransaction runs the whole
 * claim again, and so does a lost connection, which is nobody's timer's fault.
 */
function asRunError(timer: DueTimer, error: unknown): unknown {
  if (isRetryableDatabaseError(error) || isConnectionError(error)) return error;
  return new TimerRunError(timer, error);
}

function isConnectionError(error: unknown): boolean {
  if (isDatabaseAnswer(error)) return /^(57P0|08)/.test(String((error as { code: string }).code));
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(ECONN|EPIPE|ETIMEDOUT)/.test(code);
}

/** A timer's own work failed (as opposed to the claim): recorded on the timer, tried again later. */
export class TimerRunError extends Error {
  constructor(
    readonly timer: DueTimer,
    override readonly cause: unknown,
  ) {
    super(`timer ${timer.kind} ${timer.subjectId} failed: ${messageOf(cause)}`);
  }
}

export interface ClientTimerRun {
  ran: DueTimer[];
  failed: FailedTimer[];
}

/**
 * Runs one client's timers due at or before `until` (by its clock), in due-time order, each in its
 * own transaction: the sandbox clock's advance. The claim waits for a timer another worker is
 * running (FOR UPDATE without SKIP LOCKED), so when this returns every timer due by `until` has
 * run or failed. `floor` is the client's time before the advance: a timer that was already overdue
 * runs at that time rather than in the past. `renew` runs in each timer's transaction (the
 * caller extends its lease there).
 */
export async function runClientTimersUntil(
  db: Db,
  kinds: readonly TimerKind[],
  run: { clientId: string; until: Date; floor: Date; traceId: string; wallNow: () => Date; renew: (tx: Tx) => Promise<void> },
): Promise<ClientTimerRun> {
  const handlers = kindsByName(kinds);
  const names = [...handlers.keys()];
  const ran: DueTimer[] = [];
  const failed: FailedTimer[] = [];
  for (;;) {
    const skipped = failed.map((timer) => `${timer.kind}/${timer.subjectId}`);
    let outcome: DueTimer | 'none';
    try {
      outcome = await withClientTransaction(db, run.clientId, async (tx) => {
        const result = await sql<ClaimedRow>`
          SELECT client_id, kind, subject_id, due_at, '0' AS offset_ms
          FROM timers
          WHERE client_id = ${run.clientId}
            AND due_at <= ${run.until}
            AND kind = ANY(${names}::text[])
            AND NOT ((kind || '/' || subject_id::text) = ANY(${skipped}::text[]))
          ORDER BY due_at, kind, subject_id
          LIMIT 1
          FOR UPDATE`.execute(tx);
        const row = result.rows[0];
        if (!row) return 'none' as const;
        const timer = toDue(row);
        const handler = handlers.get(timer.kind);
        if (!handler) return 'none' as const;
        const now = timer.dueAt < run.floor ? run.floor : timer.dueAt;
        try {
          await runClaimed(tx, handler, timer, { clientId: run.clientId, traceId: run.traceId, now });
        } catch (error) {
          throw asRunError(timer, error);
        }
        await run.renew(tx);
        return timer;
      });
    } catch (error) {
      if (!(error instanceof TimerRunError)) throw error;
      await recordFailure(db, error.timer, run.wallNow(), error.cause);
      failed.push({ ...error.timer, error: messageOf(error.cause) });
      continue;
    }
    if (outcome === 'none') break;
    ran.push(outcome);
  }
  return { ran, failed };
}

/** The client's next pending timer (by due time), for the clock's read route. */
export async function nextTimer(db: Db | Tx, clientId: string): Promise<{ dueAt: Date; count: number } | undefined> {
  const row = await db
    .selectFrom('timers')
    .select((eb) => [eb.fn.min('due_at').as('due_at'), eb.fn.countAll<string>().as('count')])
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (!row || row.due_at === null || Number(row.count) === 0) return undefined;
  return { dueAt: row.due_at, count: Number(row.count) };
}

