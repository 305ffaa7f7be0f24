import crypto from 'node:crypto';
import type { Tx } from '../../platform/db/transaction.js';
import { permuteSerial } from '../../platform/serial-permutation.js';
import type { BankNetwork } from './bank-transfers.tables.js';
import { nextTraceSerial } from './bank-transfers.store.js';

// The permutation lives in the platform (account numbers use it too); re-exported for this module's tests.
export { permuteSerial };

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
 * (`serialKey`, platform/serial-permutation.ts) of their range: as unique as the sequence, but a
 * client reading two of its own serials learns nothing of how many payments other clients made in
 * between.
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
