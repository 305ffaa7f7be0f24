import crypto from 'node:crypto';
import type { Tx } from '../../platform/db/transaction.js';
import type { BankNetwork } from './bank-transfers.tables.js';
import { nextTraceSerial } from './bank-transfers.store.js';

/**
 * The identifier a payment carries on its rail, in that rail's own form, so it can be traced with
 * the other bank:
 *
 * - ACH: a 15-digit trace number, the first 8 digits of the originating bank's routing number and
 *   a 7-digit serial.
 * - FEDWIRE: an IMAD (input message accountability data): the date (YYYYMMDD), an 8-character
 *   input source (the first four letters of the bank's BIC and "SBX1") and a 6-digit serial.
 * - SWIFT and UNSPECIFIED: a UETR, the unique end-to-end transaction reference of SWIFT gpi (a
 *   random UUID, version 4).
 *
 * The serials come from one sequence for all clients, passed through a keyed permutation
 * (`serialKey`) of their range: as unique as the sequence, but a client reading two of its own
 * serials learns nothing of how many payments other clients made in between.
 */
export async function endToEndIdFor(tx: Tx, network: BankNetwork, originRoutingNumber: string, originBic: string, now: Date, serialKey: Buffer): Promise<string> {
  if (network === 'ACH') {
    const serial = permuteSerial((await nextTraceSerial(tx)) % 10_000_000n, 10_000_000, serialKey);
    return `${originRoutingNumber.slice(0, 8)}${serial.toString().padStart(7, '0')}`;
  }
  if (network === 'FEDWIRE') {
    const serial = permuteSerial((await nextTraceSerial(tx)) % 1_000_000n, 1_000_000, serialKey);
    const date = now.toISOString().slice(0, 10).replaceAll('-', '');
    return `${date}${originBic.slice(0, 4)}SBX1${serial.toString().padStart(6, '0')}`;
  }
  return crypto.randomUUID();
}

/**
 * A keyed permutation of 0 … size−1 (size at most 2^24): a balanced four-round Feistel network over
 * the smallest even number of bits that holds `size`, each round keyed by HMAC-SHA-256, walked
 * again while the result falls outside the range ("cycle walking", which keeps it a permutation
 * of the range). Distinct inputs give distinct outputs, so serials stay unique.
 */
export function permuteSerial(value: bigint, size: number, key: Buffer): number {
  let halfBits = 1;
  while (2 ** (2 * halfBits) < size) halfBits += 1;
  const halfMask = (1 << halfBits) - 1;
  let current = Number(value);
  do {
    let left = current >>> halfBits;
    let right = current & halfMask;
    for (let round = 0; round < 4; round += 1) {
      const mac = crypto.createHmac('sha256', key).update(`${size}:${round}:${right}`).digest();
      [left, right] = [right, (left ^ mac.readUInt32BE(0)) & halfMask];
    }
    current = left * 2 ** halfBits + right;
  } while (current >= size);
  return current;
}
