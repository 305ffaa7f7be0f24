import { v7 as uuidv7 } from 'uuid';
import type { Clock } from './clock.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ids are UUIDv7 taken from the injected clock, so that ordering by id is ordering by creation
 * time even when the sandbox clock runs ahead of the wall clock.
 */
export function newId(clock: Clock): string {
  return uuidv7({ msecs: clock.now().getTime() });
}

export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}

/** An id for a record created at `moment` (normally RequestContext.now). */
export function idAt(moment: Date): string {
  return uuidv7({ msecs: moment.getTime() });
}
