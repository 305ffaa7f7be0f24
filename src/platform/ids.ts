import crypto from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Clock } from './clock.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ids are UUIDv7 taken from the injected clock, so that ordering by id is ordering by creation
 * time even when the sandbox clock runs ahead of the wall clock.
 */
export function newId(clock: Clock): string {
  return idAt(clock.now());
}

export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}

const state = { msecs: -Infinity, seq: 0 };

/**
 * Forgets the last moment an id was made at. Only for test files that share one process (vitest's
 * `isolate: false`): each injects its own clock, and a clock moved years ahead by one file would
 * otherwise date every id of the next files that far ahead.
 */
export function resetIdSequence(): void {
  state.msecs = -Infinity;
  state.seq = 0;
}

/** Random bytes for ids, drawn from the operating system 4 KiB at a time rather than 16 bytes per id. */
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;
function randomBytes16(): Uint8Array {
  if (randomOffset + 16 > randomPool.length) {
    crypto.randomFillSync(randomPool);
    randomOffset = 0;
  }
  const bytes = new Uint8Array(randomPool.buffer, randomPool.byteOffset + randomOffset, 16).slice();
  randomOffset += 16;
  return bytes;
}

/**
 * An id for a record created at `moment` (normally RequestContext.now). Within this process ids
 * are strictly increasing: two ids of the same millisecond take consecutive sequence numbers
 * (RFC 9562 method 1), and a moment earlier than the last one reuses the last millisecond, so
 * ordering by id is creation order even for records made in the same millisecond.
 */
export function idAt(moment: Date): string {
  const msecs = moment.getTime();
  if (msecs > state.msecs) {
    state.msecs = msecs;
    // Start each millisecond at a random point in the lower half, leaving room to count up.
    state.seq = crypto.randomInt(0, 2 ** 30);
  } else {
    state.seq += 1;
    if (state.seq >= 2 ** 31) {
      state.msecs += 1;
      state.seq = 0;
    }
  }
  return uuidv7({ msecs: state.msecs, seq: state.seq, random: randomBytes16() });
}
