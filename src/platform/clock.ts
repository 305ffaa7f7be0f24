/**
 * Every time-dependent decision reads time from a Clock, never from `Date.now()` directly,
 * so tests and the sandbox can move time forward without sleeping.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(),
};

/** A clock that only moves when told to. Used by tests and, later, the sandbox virtual clock. */
export class ManualClock implements Clock {
  private currentMs: number;

  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    this.currentMs = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.currentMs);
  }

  advance(milliseconds: number): void {
    if (milliseconds < 0) throw new Error('a clock never moves backwards');
    this.currentMs += milliseconds;
  }

  set(to: Date | string): void {
    const targetMs = new Date(to).getTime();
    if (targetMs < this.currentMs) throw new Error('a clock never moves backwards');
    this.currentMs = targetMs;
  }
}
