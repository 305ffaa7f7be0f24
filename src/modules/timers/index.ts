/**
 * The timer mechanism: durable timers due by each client's clock, run exactly once by the timer
 * worker or, in the sandbox, by the clock's advance call. See timers.ts for how a module
 * registers a kind. Other modules import only from here.
 */
export {
  scheduleTimer,
  scheduleTimerNoLaterThan,
  cancelTimer,
  runDueTimers,
  runClientTimersUntil,
  nextTimer,
  retryDelayMs,
  dueTimersPerRunMax,
  type TimerKind,
  type DueTimer,
  type FailedTimer,
  type ClientTimerRun,
} from './timers.js';
