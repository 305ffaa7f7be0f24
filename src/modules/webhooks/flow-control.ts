import type { PostOutcome } from './webhook-http.js';

/**
 * Per-endpoint flow control of one delivery worker, as the larger webhook senders do it: each
 * subscription gets its own number of requests in flight, which grows while the endpoint answers
 * quickly and is halved when it shows strain, and a pause when it asks for one.
 *
 * - Start: `initial` requests in flight (WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION).
 * - Growth (additive): every 2xx answered within `growLatencyMs` adds 1/limit, so the limit grows
 *   by about one per round trip of a full window, up to `max` (WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION_MAX).
 * - Decrease (multiplicative): a timeout, a refused or reset connection, a 5xx or a 429 halves it
 *   (at least 1), once per `decreaseSpacingMs`, so the failures of one window count once.
 *   Other 4xx answers change nothing: the endpoint is responsive, the delivery was refused.
 * - Pause: a 429 or 503 with Retry-After stops new requests to that subscription until then, and
 *   the delivery's next attempt is not sooner; both at most `pauseMaxMs` (a longer Retry-After
 *   counts as that long).
 *
 * The state lives in the worker's memory: a restarted worker starts again from `initial`, and
 * several workers each keep their own view (the claim still caps the requests in flight of a
 * subscription across all workers by the claimer's limit).
 */

export interface FlowControlSettings {
  initial: number;
  max: number;
  growLatencyMs: number;
  decreaseSpacingMs: number;
  pauseMaxMs: number;
}

interface EndpointState {
  limit: number;
  lastDecreaseMs: number;
  pausedUntilMs: number;
}

const strained = (outcome: PostOutcome) => outcome.httpStatus === null || outcome.httpStatus === 429 || outcome.httpStatus >= 500;

export class EndpointFlowControl {
  private readonly endpoints = new Map<string, EndpointState>();

  constructor(private readonly settings: FlowControlSettings) {}

  private stateOf(subscriptionId: string): EndpointState {
    let state = this.endpoints.get(subscriptionId);
    if (!state) {
      state = { limit: this.settings.initial, lastDecreaseMs: Number.NEGATIVE_INFINITY, pausedUntilMs: 0 };
      this.endpoints.set(subscriptionId, state);
    }
    return state;
  }

  /** Requests in flight the subscription may have now (0 while paused). */
  limitOf(subscriptionId: string, nowMs: number): number {
    const state = this.endpoints.get(subscriptionId);
    if (!state) return this.settings.initial;
    return state.pausedUntilMs > nowMs ? 0 : Math.floor(state.limit);
  }

  /**
   * The limits that differ from `initial`, for the claim (subscriptions not listed get `initial`).
   * Endpoints back at `initial` and not paused are forgotten, so the lists stay short.
   */
  claimLimits(nowMs: number): { subscriptionIds: string[]; limits: number[] } {
    const subscriptionIds: string[] = [];
    const limits: number[] = [];
    for (const [subscriptionId, state] of this.endpoints) {
      const limit = this.limitOf(subscriptionId, nowMs);
      if (limit === this.settings.initial && state.pausedUntilMs <= nowMs && state.limit === this.settings.initial) {
        this.endpoints.delete(subscriptionId);
        continue;
      }
      subscriptionIds.push(subscriptionId);
      limits.push(limit);
    }
    return { subscriptionIds, limits };
  }

  /** Learns from one answer (or failure) of the endpoint; returns the pause it asked for, if any, in milliseconds. */
  observe(subscriptionId: string, outcome: PostOutcome, nowMs: number): number | undefined {
    const state = this.stateOf(subscriptionId);
    const { max, growLatencyMs, decreaseSpacingMs, pauseMaxMs } = this.settings;
    if (outcome.ok) {
      if (outcome.latencyMs <= growLatencyMs) state.limit = Math.min(max, state.limit + 1 / Math.max(1, state.limit));
      return undefined;
    }
    if (strained(outcome) && nowMs - state.lastDecreaseMs >= decreaseSpacingMs) {
      state.limit = Math.max(1, state.limit / 2);
      state.lastDecreaseMs = nowMs;
    }
    if ((outcome.httpStatus === 429 || outcome.httpStatus === 503) && outcome.retryAfterMs !== undefined) {
      const pauseMs = Math.min(pauseMaxMs, outcome.retryAfterMs);
      state.pausedUntilMs = Math.max(state.pausedUntilMs, nowMs + pauseMs);
      return pauseMs;
    }
    return undefined;
  }
}
