/** The localStorage entry that sets the console's reading interval (`pollMs` in hooks.ts) for one browser. */
export const pollMsStorageKey = 'openbaas.pollMs';

/** The default reading interval, in milliseconds. */
export const defaultPollMs = 5000;

/**
 * The reading interval a stored setting asks for: a whole number of milliseconds from 1,000 to
 * 60,000 written in decimal digits; anything else (or nothing) is the default 5,000.
 */
export function pollMsOf(stored: string | null): number {
  const value = stored !== null && /^[0-9]{4,5}$/.test(stored) ? Number(stored) : Number.NaN;
  return value >= 1000 && value <= 60_000 ? value : defaultPollMs;
}

/** An interval that is `defaultMs` at the default reading interval, scaled to `pollMs`. */
export function scaledInterval(defaultMs: number, pollMs: number): number {
  return Math.round((defaultMs * pollMs) / defaultPollMs);
}
