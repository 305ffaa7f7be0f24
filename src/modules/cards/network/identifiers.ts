/**
 * The identifiers a sandbox acquirer and issuer put in ISO 8583 messages: STAN (DE11), RRN (DE37),
 * authorization code (DE38) and the lifecycle reference carried in DE63 (`networkDataRef`).
 * Randomness is injected so that a seeded scenario replays exactly.
 */
import { assert } from '../../../platform/assert.js';
import { secureRandomInt, type RandomInt } from './pan.js';

/** STANs run 000001 … 999999 and wrap to 000001; 000000 is never used (it reads as "no STAN"). */
export const stanMax = 999_999;

export function isStan(value: string): boolean {
  return /^\d{6}$/.test(value) && value !== '000000';
}

/** The STAN after `previous` (null: the first STAN of a terminal). */
export function nextStan(previous: string | null): string {
  if (previous === null) return '000001';
  assert(isStan(previous), `not a STAN: "${previous}"`);
  const next = Number(previous) + 1;
  return String(next > stanMax ? 1 : next).padStart(6, '0');
}

/**
 * Per-terminal rolling STANs in memory: each terminal id has its own counter, as a terminal
 * numbers its own messages. A persistent allocator would keep the last value per terminal in
 * the database and call `nextStan` inside the same transaction.
 */
export class StanSequence {
  private readonly lastByTerminal = new Map<string, string>();

  next(terminalId: string): string {
    const stan = nextStan(this.lastByTerminal.get(terminalId) ?? null);
    this.lastByTerminal.set(terminalId, stan);
    return stan;
  }
}

/** Day of the year (1–366) of `moment` in UTC. */
export function dayOfYearUtc(moment: Date): number {
  const startOfYear = Date.UTC(moment.getUTCFullYear(), 0, 1);
  const startOfDay = Date.UTC(moment.getUTCFullYear(), moment.getUTCMonth(), moment.getUTCDate());
  return (startOfDay - startOfYear) / 86_400_000 + 1;
}

/**
 * A retrieval reference number in the common "YDDDHHnnnnnn" convention: last digit of the year,
 * Julian day (001–366), hour, then a six-digit sequence (usually the STAN), all in UTC.
 * Example: 2025-03-15 12:00 with STAN 000123 gives 507412000123.
 */
export function retrievalReferenceNumber(moment: Date, sequence: string): string {
  assert(/^\d{6}$/.test(sequence), `an RRN sequence is six digits; got "${sequence}"`);
  const year = String(moment.getUTCFullYear() % 10);
  const day = String(dayOfYearUtc(moment)).padStart(3, '0');
  const hour = String(moment.getUTCHours()).padStart(2, '0');
  return `${year}${day}${hour}${sequence}`;
}

export function isRetrievalReferenceNumber(value: string): boolean {
  return /^[0-9A-Za-z]{12}$/.test(value);
}

const upperAlphanumerics = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function randomString(length: number, alphabet: string, randomInt: RandomInt): string {
  let result = '';
  for (let index = 0; index < length; index++) {
    const position = randomInt(alphabet.length);
    assert(Number.isInteger(position) && position >= 0 && position < alphabet.length, 'randomInt returned a value out of range');
    result += alphabet.charAt(position);
  }
  return result;
}

/** A six-character authorization code (DE38) of capital letters and digits, never "000000". */
export function authorizationCode(randomInt: RandomInt = secureRandomInt): string {
  for (;;) {
    const code = randomString(6, upperAlphanumerics, randomInt);
    if (code !== '000000') return code;
  }
}

/** Six capital letters or digits, never `000000` (docs/cards-network.md: networks read it as no approval code). */
export function isAuthorizationCode(value: string): boolean {
  return /^[0-9A-Z]{6}$/.test(value) && value !== '000000';
}

export const networkDataRefLength = 16;

/** A 16-character lifecycle reference for DE63 positions 9–24: capital letters and digits. */
export function newNetworkDataRef(randomInt: RandomInt = secureRandomInt): string {
  for (;;) {
    const reference = randomString(networkDataRefLength, upperAlphanumerics, randomInt);
    if (networkDataRefIsUsable(reference)) return reference;
  }
}

/** A reference is usable unless it is blank or all zeros (contract §12.4). */
function networkDataRefIsUsable(reference: string): boolean {
  return !/^[ 0]*$/.test(reference);
}

export type CardNetwork = 'VISA' | 'MASTERCARD';

const networkCodes: Readonly<Record<CardNetwork, string>> = { VISA: 'VIS', MASTERCARD: 'MCD' };

/**
 * DE63 in the OpenBaaS sandbox layout (contract §12.5): positions 1–3 the network (`VIS`, `MCD`),
 * 4–8 zeros, 9–24 the lifecycle reference, 25 onwards optional network data.
 */
export function formatNetworkData(network: CardNetwork, reference: string, trailer = ''): string {
  assert(reference.length === networkDataRefLength, `a network data reference is ${networkDataRefLength} characters`);
  return `${networkCodes[network]}00000${reference}${trailer}`;
}

/**
 * The `networkDataRef` of a DE63 value: positions 9–24, or null when DE63 is shorter than 24
 * characters or the slice is blank or all zeros (contract §12.4).
 */
export function networkDataRefOf(networkData: string | undefined): string | null {
  if (networkData === undefined || networkData.length < 8 + networkDataRefLength) return null;
  const reference = networkData.slice(8, 8 + networkDataRefLength);
  return networkDataRefIsUsable(reference) ? reference : null;
}
