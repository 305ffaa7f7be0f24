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

/**
 * The last sequence number given in each recent millisecond (insertion order, oldest first). Ids
 * are stamped with their own moment, never another's: each client's clock is its own (the sandbox
 * clock), so a process-wide "latest moment" would date one client's ids by another's clock, and
 * ids made after a restart would sort below those made before it.
 */
const lastSeqByMsecs = new Map<number, number>();
const remembered = 8192;

/**
 * Forgets the sequence numbers given so far. Only for test files that share one process (vitest's
 * `isolate: false`), so that each starts as a fresh process would.
 */
export function resetIdSequence(): void {
  lastSeqByMsecs.clear();
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
 * An id for a record created at `moment` (normally RequestContext.now), whose UUIDv7 time is that
 * moment. Ids of one millisecond take consecutive sequence numbers (RFC 9562 method 1), so ordering
 * by id is creation order for the records of one clock, even those made in the same millisecond;
 * the first id of a millisecond starts at a random point in the lower half of the sequence. The
 * last sequence of the 8,192 most recent milliseconds is remembered (a millisecond forgotten and
 * used again starts afresh: its ids stay unique, by their random bits, but may sort before the
 * earlier ones of that millisecond).
 */
export function idAt(moment: Date): string {
  let msecs = moment.getTime();
  const last = lastSeqByMsecs.get(msecs);
  let seq = last === undefined ? crypto.randomInt(0, 2 ** 30) : last + 1;
  if (seq >= 2 ** 31) {
    // 2^31 ids in one millisecond: the sequence runs over into the next one.
    lastSeqByMsecs.set(msecs, seq);
    msecs += 1;
    seq = (lastSeqByMsecs.get(msecs) ?? -1) + 1;
  }
  if (last === undefined && lastSeqByMsecs.size >= remembered) {
    const oldest = lastSeqByMsecs.keys().next();
    if (oldest.done !== true) lastSeqByMsecs.delete(oldest.value);
  }
  lastSeqByMsecs.set(msecs, seq);
  return uuidv7({ msecs, seq, random: randomBytes16() });
}
