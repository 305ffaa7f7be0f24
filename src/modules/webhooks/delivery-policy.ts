import type { Config } from '../../platform/config.js';
import type { PostOutcome } from './webhook-http.js';
import type { DeliveryStatus } from './webhooks.tables.js';

/** Kept in the delivery log: the start of the receiver's answer and of the error text. */
export const responseBodyKeptChars = 1000;
export const errorKeptChars = 1000;

/** The body of a delivery: the same bytes on every attempt, so the signature input is stable. */
export function deliveryBody(event: { id: string; type: string; createdAt: string; data: Record<string, unknown> }): string {
  return JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, data: event.data });
}

/** The last automatic attempt: the first one plus one per retry delay (a manual retry sets its own). */
export function lastAttemptOf(config: Pick<Config, 'webhookRetryScheduleMs'>, finalAttempt: number | null): number {
  return finalAttempt ?? config.webhookRetryScheduleMs.length + 1;
}

/**
 * The delay before the retry that follows failed attempt `attemptNumber` (1-based), with jitter:
 * moved randomly by up to the configured percentage either way, so that many deliveries that
 * failed together do not all come back at the same instant.
 */
export function retryDelayMs(
  config: Pick<Config, 'webhookRetryScheduleMs' | 'webhookRetryJitterPercent'>,
  attemptNumber: number,
  random: () => number = Math.random,
): number {
  const schedule = config.webhookRetryScheduleMs;
  const base = schedule[Math.min(attemptNumber - 1, schedule.length - 1)] ?? 0;
  const spread = (config.webhookRetryJitterPercent / 100) * (random() * 2 - 1);
  return Math.max(0, Math.round(base * (1 + spread)));
}

export interface NextState {
  status: DeliveryStatus;
  nextAttemptAt: Date;
  completedAt: Date | null;
}

/** What happens to a delivery after attempt `attemptNumber` ended with `outcome`. */
export function nextStateAfter(
  config: Pick<Config, 'webhookRetryScheduleMs' | 'webhookRetryJitterPercent'>,
  outcome: Pick<PostOutcome, 'ok'>,
  attemptNumber: number,
  finalAttempt: number | null,
  now: Date,
): NextState {
  if (outcome.ok) return { status: 'DELIVERED', nextAttemptAt: now, completedAt: now };
  if (attemptNumber >= lastAttemptOf(config, finalAttempt)) return { status: 'FAILED', nextAttemptAt: now, completedAt: now };
  const delayMs = retryDelayMs(config, attemptNumber - attemptsBeforeSchedule(config, finalAttempt));
  return { status: 'PENDING', nextAttemptAt: new Date(now.getTime() + delayMs), completedAt: null };
}

/**
 * The final attempt of a delivery given the whole schedule again after `attemptCount` attempts
 * (a replay of an endpoint's missed events): its next attempt is then number one of a new run.
 */
export function finalAttemptOfNewSchedule(config: Pick<Config, 'webhookRetryScheduleMs'>, attemptCount: number): number {
  return attemptCount + config.webhookRetryScheduleMs.length + 1;
}

/**
 * Attempts made before the current schedule began: none for an ordinary delivery; for one given a
 * new schedule by a replay, those made before it, so its retries wait ~5 s, ~5 min, ... again.
 */
function attemptsBeforeSchedule(config: Pick<Config, 'webhookRetryScheduleMs'>, finalAttempt: number | null): number {
  if (finalAttempt === null) return 0;
  return Math.max(0, finalAttempt - (config.webhookRetryScheduleMs.length + 1));
}

/**
 * Shortens a receiver's text for the log, and makes it storable: PostgreSQL text cannot hold NUL,
 * and a cut may split a surrogate pair.
 */
export function truncate(text: string | null, maxChars: number): string | null {
  if (text === null) return null;
  const short = text.length > maxChars ? text.slice(0, maxChars) : text;
  return short.replaceAll('\u0000', '\uFFFD').toWellFormed();
}
