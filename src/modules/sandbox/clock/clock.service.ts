import { sql } from 'kysely';
import { advanceStarted, advanceWaitMs, clientNow, noteClockOffset, readClockOffset } from '../../../platform/client-clock.js';
import type { Deps } from '../../../platform/deps.js';
import { withTransaction, type Tx } from '../../../platform/db/transaction.js';
import { AppError } from '../../../platform/http/errors.js';
import { idempotencyRecordExists } from '../../../platform/http/idempotency.js';
import { nextTimer, runClientTimersUntil, type DueTimer, type FailedTimer, type TimerKind } from '../../timers/index.js';

/** The most one advance may move a clock: 400 days. */
export const advanceSecondsMax = 400 * 86_400;
/**
 * The furthest a client's clock may run ahead of the wall clock: 100 years (of 365.25 days). Every
 * date the client's work writes then stays far inside what PostgreSQL and JavaScript can hold;
 * without a limit a client could move its clock past the year 9999, where its dates could no
 * longer be stored. migrations/0041 checks the same limit in the database. Card expiries are
 * narrower (a two-digit year): past 2095 a card cannot be issued (422 CARD_EXPIRY_OUT_OF_RANGE).
 */
export const clockOffsetMaxSeconds = 36_525 * 86_400;
/** How long an advance's claim on the client's timers lasts without renewal (it renews after every timer). */
export const advanceLeaseMs = 60_000;

export interface ClockView {
  now: string;
  offsetSeconds: number;
  nextTimerDueAt: string | null;
  pendingTimers: number;
}

export async function clockView(deps: Deps, clientId: string): Promise<ClockView> {
  const offsetMs = await readClockOffset(deps.db, clientId);
  noteClockOffset(deps, clientId, offsetMs);
  const next = await nextTimer(deps.db, clientId);
  return {
    now: clientNow(deps.clock, offsetMs).toISOString(),
    offsetSeconds: offsetMs / 1000,
    nextTimerDueAt: next ? next.dueAt.toISOString() : null,
    pendingTimers: next?.count ?? 0,
  };
}

export interface TimerRunView {
  kind: string;
  id: string;
  dueAt: string;
}

export interface AdvanceView {
  now: string;
  offsetSeconds: number;
  ran: TimerRunView[];
  failed: Array<TimerRunView & { error: string }>;
}

export interface AdvanceRequest {
  clientId: string;
  traceId: string;
  seconds: number;
  idempotencyKey: string | undefined;
}

/** The outcome of taking the client's advance lease. */
type LeaseOutcome =
  | { taken: true; previousOffsetMs: number; offsetMs: number; wallMs: number }
  | { taken: false; replay: true }
  | { taken: false; replay: false; heldByThisKey: boolean };

/**
 * Moves the client's clock forward and takes its advance lease, in one transaction. Refused while
 * another advance of the client holds an unexpired lease. With an Idempotency-Key whose response
 * is already stored nothing changes (the caller replays it). An expired lease still naming the
 * request's key was left by the same request in a process that died after moving the clock: the
 * retry takes the lease without moving the clock again and runs what is left (until 2026-12-05
 * it moved the clock a second time; found by an audit).
 */
async function takeLease(deps: Deps, request: AdvanceRequest): Promise<LeaseOutcome> {
  return withTransaction(deps.db, async (tx) => {
    const lease = await sql<{ key: string | null; lease_until: Date | null }>`
      SELECT clock_advance_key AS key, clock_advance_lease_until AS lease_until FROM clients WHERE id = ${request.clientId} FOR UPDATE`.execute(tx);
    // The key's answer is looked for once the client's row is locked: the advance that answers
    // stores it in the transaction that gives the lease back (a write to this row), so a repeat
    // that waited here for that transaction finds the answer committed. Until 2026-12-07 it looked
    // first: a repeat sent to another process at the same moment could find no answer, then the
    // lease free, and move the clock a second time; its own answer then replayed the first one and
    // never gave the lease back, so every advance of the client answered 409 SANDBOX_CLOCK_BUSY
    // until the lease expired a minute later (found by an audit). Taken after this check, the
    // lease is given back by the answer's own transaction: no answer under the key can be stored
    // before it, so runWrite never replays one instead.
    if (request.idempotencyKey !== undefined && (await idempotencyRecordExists(tx, request.clientId, request.idempotencyKey))) {
      return { taken: false, replay: true } as const;
    }
    const wall = deps.clock.now();
    const held = lease.rows[0];
    const resumed =
      request.idempotencyKey !== undefined && held?.key === request.idempotencyKey && held.lease_until !== null && held.lease_until.getTime() < wall.getTime();
    const moveMs = resumed ? 0 : request.seconds * 1000;
    const result = await sql<{ offset: string }>`
      UPDATE clients
      SET clock_offset_ms = clock_offset_ms + ${moveMs},
          clock_advance_lease_until = ${new Date(wall.getTime() + advanceLeaseMs)},
          clock_advance_key = ${request.idempotencyKey ?? null}
      WHERE id = ${request.clientId}
        AND (clock_advance_lease_until IS NULL OR clock_advance_lease_until < ${wall})
        AND clock_offset_ms + ${moveMs} <= ${clockOffsetMaxSeconds * 1000}
      RETURNING clock_offset_ms::text AS offset`.execute(tx);
    const row = result.rows[0];
    if (row) {
      const offsetMs = Number(row.offset);
      return { taken: true, previousOffsetMs: offsetMs - request.seconds * 1000, offsetMs, wallMs: wall.getTime() } as const;
    }
    const holder = await sql<{ key: string | null; offset: string }>`
      SELECT clock_advance_key AS key, clock_offset_ms::text AS offset FROM clients WHERE id = ${request.clientId}`.execute(tx);
    const offsetMs = Number(holder.rows[0]?.offset ?? 0);
    if (offsetMs + request.seconds * 1000 > clockOffsetMaxSeconds * 1000) {
      const left = Math.floor((clockOffsetMaxSeconds * 1000 - offsetMs) / 1000);
      throw new AppError('SANDBOX_CLOCK_LIMIT', `seconds: the clock may run at most ${clockOffsetMaxSeconds} s (100 years) ahead of the wall clock; it is ${offsetMs / 1000} s ahead, so at most ${left} s more. The clock never moves back; restoring a snapshot taken earlier (POST /v1/sandbox/snapshots/:snapshotId/restore) puts back its offset from the wall clock.`, {
        details: [{ field: 'seconds', message: `at most ${left} more` }],
      });
    }
    const heldByThisKey = request.idempotencyKey !== undefined && holder.rows[0]?.key === request.idempotencyKey;
    return { taken: false, replay: false, heldByThisKey } as const;
  });
}

async function renewLease(deps: Deps, tx: Tx, clientId: string): Promise<void> {
  await sql`UPDATE clients SET clock_advance_lease_until = ${new Date(deps.clock.now().getTime() + advanceLeaseMs)} WHERE id = ${clientId}`.execute(tx);
}

/** Gives the lease back (in the transaction that records the answer, or on the way out of a failure). */
export async function releaseLease(db: Deps['db'] | Tx, clientId: string): Promise<void> {
  await sql`UPDATE clients SET clock_advance_lease_until = NULL, clock_advance_key = NULL WHERE id = ${clientId}`.execute(db);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const runView = (timer: DueTimer): TimerRunView => ({ kind: timer.kind, id: timer.subjectId, dueAt: timer.dueAt.toISOString() });

export type AdvanceOutcome =
  | { replay: true }
  | { replay: false; offsetMs: number; ran: TimerRunView[]; failed: Array<TimerRunView & { error: string }> };

/**
 * The advance (CONTRACT §13): moves the client's clock forward by `seconds` and runs, before it
 * answers, every timer of the client that came due by the new time, in due-time order, each in
 * its own transaction with its events, then its `followers` (the sandbox chains' due blocks).
 * Other clients' clocks do not move.
 *
 * While it runs it holds the client's advance lease (`clients.clock_advance_lease_until`): the
 * timer worker leaves the client's timers to it, and a second advance of the same client waits
 * for it (up to 30 s, then 409 SANDBOX_CLOCK_BUSY); a repeat of the same request (same
 * Idempotency-Key) while it runs gets 409 IDEMPOTENCY_REQUEST_IN_PROGRESS. If the process dies
 * meanwhile the lease expires after a minute and the worker takes over the timers. The caller
 * records the answer and gives the lease back in one transaction (`releaseLease`).
 */
/**
 * What else follows a client's clock without timers (the sandbox block worker): run for the
 * client after its timers, before the advance answers.
 */
export type ClockFollower = (clientId: string) => Promise<unknown>;

export async function advanceClock(deps: Deps, kinds: readonly TimerKind[], request: AdvanceRequest, followers: readonly ClockFollower[] = []): Promise<AdvanceOutcome> {
  const waitUntil = performance.now() + advanceWaitMs;
  let lease: LeaseOutcome;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    lease = await takeLease(deps, request);
    if (lease.taken || lease.replay) break;
    if (lease.heldByThisKey) {
      throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly.');
    }
    if (performance.now() >= waitUntil) {
      throw new AppError('SANDBOX_CLOCK_BUSY', 'Another advance of this client\'s clock is still running its timers; retry when it has answered.');
    }
    await sleep(pause);
  }
  if (!lease.taken) return { replay: true };
  noteClockOffset(deps, request.clientId, lease.offsetMs);
  const advanceEnded = advanceStarted(deps, request.clientId);
  try {
    const { ran, failed } = await runClientTimersUntil(deps.db, kinds, {
      clientId: request.clientId,
      until: new Date(lease.wallMs + lease.offsetMs),
      floor: new Date(lease.wallMs + lease.previousOffsetMs),
      traceId: request.traceId,
      wallNow: () => deps.clock.now(),
      renew: (tx) => renewLease(deps, tx, request.clientId),
    });
    for (const follow of followers) await follow(request.clientId);
    return { replay: false, offsetMs: lease.offsetMs, ran: ran.map(runView), failed: failed.map((timer: FailedTimer) => ({ ...runView(timer), error: timer.error })) };
  } catch (error) {
    // The clock stays where it moved; the timers not run yet are the worker's once the lease is gone.
    await releaseLease(deps.db, request.clientId).catch(() => undefined);
    throw error;
  } finally {
    advanceEnded();
  }
}
