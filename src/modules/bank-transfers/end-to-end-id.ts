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
 */
export async function endToEndIdFor(tx: Tx, network: BankNetwork, originRoutingNumber: string, originBic: string, now: Date): Promise<string> {
  if (network === 'ACH') {
    const serial = (await nextTraceSerial(tx)) % 10_000_000n;
    return `${originRoutingNumber.slice(0, 8)}${serial.toString().padStart(7, '0')}`;
  }
  if (network === 'FEDWIRE') {
    const serial = (await nextTraceSerial(tx)) % 1_000_000n;
    const date = now.toISOString().slice(0, 10).replaceAll('-', '');
    return `${date}${originBic.slice(0, 4)}SBX1${serial.toString().padStart(6, '0')}`;
  }
  return crypto.randomUUID();
}
