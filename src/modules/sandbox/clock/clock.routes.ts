import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { advanceStarted } from '../../../platform/client-clock.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope } from '../../../platform/http/envelope.js';
import { answerRefusal, idempotencyKeyOf, runWrite } from '../../../platform/http/idempotency.js';
import { AppError } from '../../../platform/http/errors.js';
import type { TimerKind } from '../../timers/index.js';
import { advanceClock, advanceSecondsMax, clockView, releaseLease, type ClockFollower } from './clock.service.js';

const tags = ['Sandbox'];
const timestamp = (description: string) => Type.String({ format: 'date-time', description });

const ClockSchema = Type.Object({
  now: timestamp('the client\'s current time: the wall clock plus offsetSeconds'),
  offsetSeconds: Type.Number({ minimum: 0, description: 'how far the client\'s clock runs ahead of the wall clock' }),
  nextTimerDueAt: Type.Union([timestamp('when the earliest pending timer comes due'), Type.Null()]),
  pendingTimers: Type.Integer({ minimum: 0, description: 'timers waiting (bank settlements, KYC link expiries, ...)' }),
});

const TimerRunSchema = Type.Object({
  kind: Type.String({ description: 'the timer kind, for example bank-transfer.settle or kyc-link.expire' }),
  id: Type.String({ description: 'the id of its subject (a bank transaction, an onboarding, ...)' }),
  dueAt: timestamp('when it came due by the client\'s clock'),
});

const AdvanceSchema = Type.Object({
  now: timestamp('the client\'s time after the advance'),
  offsetSeconds: Type.Number({ minimum: 0 }),
  ran: Type.Array(TimerRunSchema, { description: 'the timers that came due and ran, in the order they ran (due time)' }),
  failed: Type.Array(Type.Object({ ...TimerRunSchema.properties, error: Type.String() }), {
    description: 'timers whose work failed (a bug): rolled back, kept, and tried again by the timer worker; normally empty',
  }),
});

const AdvanceBody = Type.Object(
  {
    seconds: Type.Integer({ minimum: 1, maximum: advanceSecondsMax, description: `how far to move the clock forward, in whole seconds (1 to ${advanceSecondsMax}, 400 days)` }),
  },
  { additionalProperties: false, examples: [{ seconds: 120 }] },
);

/**
 * The per-client virtual clock of the sandbox (CONTRACT §13). Registered only in sandbox mode;
 * production has no virtual clock.
 */
export function registerSandboxClockRoutes(app: App, deps: Deps, kinds: readonly TimerKind[], followers: readonly ClockFollower[] = []): void {
  app.get(
    '/v1/sandbox/clock',
    {
      schema: {
        operationId: 'sandbox.getClock',
        tags,
        summary: 'Read the client\'s clock (sandbox)',
        description: 'The calling client\'s time, how far it runs ahead of the wall clock, and its next pending timer.',
        response: { 200: Envelope(ClockSchema) },
      },
    },
    async (request) => {
      const auth = authOf(request);
      return { message: 'Clock', data: await clockView(deps, auth.clientId), traceId: String(request.id) };
    },
  );

  app.post(
    '/v1/sandbox/clock/advance',
    {
      schema: {
        operationId: 'sandbox.advanceClock',
        tags,
        summary: 'Move the client\'s clock forward (sandbox)',
        description:
          'Moves the calling client\'s clock forward by `seconds` (never back) and, before answering, runs every timer of the client that came due, ' +
          'in due-time order, each in its own transaction and with its events: pending bank deposits and withdrawals settle or come back, KYC links expire, ' +
          'and so on. Each runs at its due time (or at the client\'s time before the advance, when it was already overdue). `ran` lists them. ' +
          'With the sandbox block worker on (OPENBAAS_SANDBOX_BLOCK_SECONDS), the blocks the advance covers are mined before it answers too, each dated at its own time. ' +
          'Other clients\' clocks do not move. A second advance of the same client waits for the first, and so does every other write of the client sent to the same process ' +
          '(it then acts at the new time, after the timers; 409 SANDBOX_CLOCK_BUSY after 30 s); reads answer at once.',
        body: AdvanceBody,
        response: { 200: Envelope(AdvanceSchema) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      // The client's writes wait until the lease is given back below, not only until the timers
      // ran: a reset or restore let in between would find the lease still held (409
      // SANDBOX_STATE_BUSY). The service keeps its own mark for callers without this route.
      const advanceEnded = advanceStarted(deps, auth.clientId);
      try {
        let outcome: Awaited<ReturnType<typeof advanceClock>>;
        try {
          outcome = await advanceClock(deps, kinds, {
            clientId: auth.clientId,
            traceId: String(request.id),
            seconds: request.body.seconds,
            idempotencyKey: idempotencyKeyOf(request),
          }, followers);
        } catch (error) {
          // A refusal of the request itself is the answer to its key, as on every write (a retry
          // replays it; another body under the key is 422); a busy clock is not (retry later).
          if (error instanceof AppError && error.code === 'SANDBOX_CLOCK_LIMIT') return await answerRefusal(request, reply, deps, error);
          throw error;
        }
        // runWrite replays a stored answer, or records this one with the lease's release in one transaction.
        try {
          return await runWrite(request, reply, deps, async (tx, context) => {
            if (outcome.replay) throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly.');
            await releaseLease(tx, context.clientId);
            const data = { now: context.now.toISOString(), offsetSeconds: outcome.offsetMs / 1000, ran: outcome.ran, failed: outcome.failed };
            return { message: `Clock moved forward ${request.body.seconds} s; ${outcome.ran.length} timer(s) ran`, data };
            // The clock as this advance left it: the offset the request arrived with is the old one,
            // and the one this process noted when it took the lease lasts only AUTH_CACHE_TTL_MS
            // (until 2026-12-02 an advance whose timers ran longer answered the time before it).
          }, outcome.replay ? {} : { clockOffsetMs: outcome.offsetMs });
        } catch (error) {
          if (!outcome.replay) await releaseLease(deps.db, auth.clientId).catch(() => undefined);
          throw error;
        }
      } finally {
        advanceEnded();
      }
    },
  );
}
