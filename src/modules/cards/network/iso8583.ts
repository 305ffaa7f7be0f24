/**
 * The ISO 8583:1987 codec of the sandbox card network, driven by one field table.
 *
 * Two forms of the same message:
 * - JSON: `{ isoMti, fields: { "2": "…", "3": "…" } }`, every value a string exactly as it
 *   travels (numeric fields zero padded to their fixed length, binary fields as hex). This is the
 *   `raw` block of the COOP_AUTH_* events and the `iso` block of the sandbox responses.
 * - Wire: ASCII text, MTI (4) + primary bitmap (16 hex characters) + secondary bitmap (16 hex,
 *   only when a field above 64 is present) + each field in ascending order, variable fields
 *   preceded by their length as 2 (LLVAR) or 3 (LLLVAR) ASCII digits. This mirrors moov-io's
 *   `spec87ascii` packing (research §1.2, §1.8).
 *
 * Every check failure names the offending field number: 0 is the MTI (and the message as a
 * whole), 1 the bitmap, as moov-io numbers them. That is the `ISO8583_MALFORMED` error.
 */
import { AppError } from '../../../platform/http/errors.js';
import { assert } from '../../../platform/assert.js';
import { maskPan } from './pan.js';

/**
 * n: digits. an: letters, digits and space (fixed `an` fields are space padded in practice).
 * ans: any printable ASCII character. b: binary, carried as hex characters (two per byte).
 * z: track 2 data (digits and the `=` or `D` separator). x+n: `C` (credit) or `D` (debit)
 * followed by digits.
 */
export type FieldType = 'n' | 'an' | 'ans' | 'b' | 'z' | 'x+n';

export type LengthPrefix = 'FIXED' | 'LLVAR' | 'LLLVAR';

export interface FieldDefinition {
  readonly number: number;
  readonly name: string;
  readonly type: FieldType;
  readonly prefix: LengthPrefix;
  /**
   * In ISO notation: the fixed length or the maximum, in characters; in bytes for `b` (twice as
   * many hex characters); in digits after the sign for `x+n` (one more character).
   */
  readonly length: number;
  /** Smallest length of a variable field (default 0: an empty LLVAR such as DE32 `00` is legal). */
  readonly minLength?: number;
}

const field = (
  number: number,
  name: string,
  type: FieldType,
  prefix: LengthPrefix,
  length: number,
  minLength?: number,
): FieldDefinition => (minLength === undefined ? { number, name, type, prefix, length } : { number, name, type, prefix, length, minLength });

/** The OpenBaaS sandbox network layout: the 1987 fields the sandbox reads or writes, each declared once. */
const fieldTable: readonly FieldDefinition[] = [
  field(2, 'Primary account number', 'n', 'LLVAR', 19, 8),
  field(3, 'Processing code', 'n', 'FIXED', 6),
  field(4, 'Amount, transaction', 'n', 'FIXED', 12),
  field(6, 'Amount, cardholder billing', 'n', 'FIXED', 12),
  field(7, 'Transmission date and time (MMDDhhmmss, UTC)', 'n', 'FIXED', 10),
  field(11, 'Systems trace audit number', 'n', 'FIXED', 6),
  field(12, 'Local transaction time (hhmmss)', 'n', 'FIXED', 6),
  field(13, 'Local transaction date (MMDD)', 'n', 'FIXED', 4),
  field(14, 'Expiration date (YYMM)', 'n', 'FIXED', 4),
  field(15, 'Settlement date (MMDD)', 'n', 'FIXED', 4),
  field(18, 'Merchant type (MCC)', 'n', 'FIXED', 4),
  field(22, 'Point of service entry mode', 'n', 'FIXED', 3),
  field(23, 'Card sequence number', 'n', 'FIXED', 3),
  field(25, 'Point of service condition code', 'n', 'FIXED', 2),
  field(26, 'Point of service PIN capture code', 'n', 'FIXED', 2),
  field(28, 'Amount, transaction fee', 'x+n', 'FIXED', 8),
  field(32, 'Acquiring institution identification code', 'n', 'LLVAR', 11),
  field(33, 'Forwarding institution identification code', 'n', 'LLVAR', 11),
  field(35, 'Track 2 data', 'z', 'LLVAR', 37),
  field(37, 'Retrieval reference number', 'an', 'FIXED', 12),
  field(38, 'Authorization identification response', 'an', 'FIXED', 6),
  field(39, 'Response code', 'an', 'FIXED', 2),
  field(41, 'Card acceptor terminal identification', 'ans', 'FIXED', 8),
  field(42, 'Card acceptor identification code', 'ans', 'FIXED', 15),
  field(43, 'Card acceptor name/location', 'ans', 'FIXED', 40),
  field(48, 'Additional data, private', 'ans', 'LLLVAR', 999),
  field(49, 'Currency code, transaction (ISO 4217 numeric)', 'n', 'FIXED', 3),
  field(51, 'Currency code, cardholder billing (ISO 4217 numeric)', 'n', 'FIXED', 3),
  field(52, 'Personal identification number data', 'b', 'FIXED', 8),
  field(54, 'Additional amounts', 'an', 'LLLVAR', 120),
  // ICC (EMV) data travels as text in the ASCII layout, as in moov-io's spec87ascii.
  field(55, 'Integrated circuit card system related data', 'ans', 'LLLVAR', 999),
  field(56, 'Reserved (ISO)', 'ans', 'LLLVAR', 999),
  field(60, 'Reserved (national)', 'ans', 'LLLVAR', 999),
  field(61, 'Reserved (private)', 'ans', 'LLLVAR', 999),
  field(62, 'Reserved (private)', 'ans', 'LLLVAR', 999),
  field(63, 'Network data (OpenBaaS layout: network 1–3, zeros 4–8, lifecycle reference 9–24)', 'ans', 'LLLVAR', 999),
  field(90, 'Original data elements', 'n', 'FIXED', 42),
  field(95, 'Replacement amounts', 'an', 'FIXED', 42),
  field(102, 'Account identification 1', 'ans', 'LLVAR', 28),
];

for (const definition of fieldTable) {
  assert(definition.number >= 2 && definition.number <= 128 && definition.number !== 65, `field ${definition.number} cannot be declared`);
  assert(definition.prefix === 'FIXED' || (definition.type !== 'b' && definition.type !== 'x+n'), `field ${definition.number}: b and x+n fields are fixed`);
  assert(definition.length <= (definition.prefix === 'LLVAR' ? 99 : 999), `field ${definition.number}: the length does not fit its prefix`);
}

export const fieldDefinitions: ReadonlyMap<number, FieldDefinition> = new Map(fieldTable.map((definition) => [definition.number, definition]));

/** Fields the contract (§12.4) removes from the `raw` block of events; DE2 is masked instead. */
export const fieldsRemovedFromEvents: readonly number[] = [14, 35, 36, 45, 52, 55];

/** Longest packed message the codec reads: far above any legal sandbox message, bounded anyway. */
export const packedLengthMax = 8192;

export interface IsoMessage {
  isoMti: string;
  /** Field number (as a decimal string) → value, in ascending field order. */
  fields: Record<string, string>;
}

/** An ISO 8583 message that breaks the sandbox layout; `fieldNumber` is the offending field. */
export class Iso8583MalformedError extends AppError {
  override name = 'Iso8583MalformedError';
  readonly fieldNumber: number;
  readonly reason: string;

  constructor(fieldNumber: number, reason: string) {
    super('ISO8583_MALFORMED', `ISO 8583 field ${fieldNumber}: ${reason}`, { details: [{ field: String(fieldNumber), message: reason }] });
    this.fieldNumber = fieldNumber;
    this.reason = reason;
  }
}

export type IsoMessageCheck = { ok: true; message: IsoMessage } | { ok: false; fieldNumber: number; reason: string };

/** Characters a value of `definition` takes in the ASCII layout (fixed) or may take at most (variable). */
export function characterLength(definition: FieldDefinition): number {
  if (definition.type === 'b') return definition.length * 2;
  if (definition.type === 'x+n') return definition.length + 1;
  return definition.length;
}

const characterPatterns: Readonly<Record<FieldType, { pattern: RegExp; description: string }>> = {
  n: { pattern: /^[0-9]*$/, description: 'digits only' },
  an: { pattern: /^[0-9A-Za-z ]*$/, description: 'letters, digits and spaces only' },
  ans: { pattern: /^[\x20-\x7e]*$/, description: 'printable ASCII characters only' },
  b: { pattern: /^[0-9A-Fa-f]*$/, description: 'hex digits only (binary data, two characters per byte)' },
  z: { pattern: /^[0-9=D]*$/, description: 'track 2 characters only (digits and the = or D separator)' },
  'x+n': { pattern: /^[CD][0-9]*$/, description: 'C or D followed by digits' },
};

/** Why `value` is not a valid value of field `fieldNumber`, or null when it is. */
export function fieldValueProblem(fieldNumber: number, value: string): string | null {
  const definition = fieldDefinitions.get(fieldNumber);
  if (definition === undefined) return 'not a field of the OpenBaaS sandbox network layout';
  const expected = characterLength(definition);
  if (definition.prefix === 'FIXED') {
    if (value.length !== expected) return `must be exactly ${expected} characters; got ${value.length}`;
  } else {
    const minimum = definition.minLength ?? 0;
    if (value.length > expected) return `must be at most ${expected} characters; got ${value.length}`;
    if (value.length < minimum) return `must be at least ${minimum} characters; got ${value.length}`;
  }
  const { pattern, description } = characterPatterns[definition.type];
  if (!pattern.test(value)) return `${definition.type} field: ${description}`;
  return null;
}

function fail(fieldNumber: number, reason: string): never {
  throw new Iso8583MalformedError(fieldNumber, reason);
}

function checkMti(mti: unknown): string {
  if (typeof mti !== 'string') return fail(0, 'the MTI must be a string of 4 digits');
  if (!/^\d{4}$/.test(mti)) return fail(0, `the MTI must be 4 digits; got "${truncateForMessage(mti)}"`);
  if (mti.charAt(0) !== '0') return fail(0, `the layout is ISO 8583:1987 (MTI version digit 0); got "${mti}"`);
  return mti;
}

function truncateForMessage(text: string): string {
  return text.length > 24 ? `${text.slice(0, 24)}…` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The hex bitmap(s) announcing `fieldNumbers`: 16 characters, or 32 when a field above 64 is present. */
export function bitmapOf(fieldNumbers: Iterable<number>): string {
  const bits = new Array<boolean>(129).fill(false);
  let secondary = false;
  for (const number of fieldNumbers) {
    assert(Number.isInteger(number) && number >= 2 && number <= 128 && number !== 65, `field ${number} cannot appear in a bitmap`);
    bits[number] = true;
    if (number > 64) secondary = true;
  }
  bits[1] = secondary;
  const bitCount = secondary ? 128 : 64;
  let hex = '';
  for (let nibbleStart = 1; nibbleStart <= bitCount; nibbleStart += 4) {
    let nibble = 0;
    for (let offset = 0; offset < 4; offset++) if (bits[nibbleStart + offset] === true) nibble |= 8 >> offset;
    hex += nibble.toString(16).toUpperCase();
  }
  return hex;
}

/** The field numbers (2–128) a hex bitmap of 16 or 32 characters announces; bit 1 is left out. */
export function fieldNumbersOf(bitmapHex: string): number[] {
  assert(/^[0-9A-Fa-f]{16}([0-9A-Fa-f]{16})?$/.test(bitmapHex), 'a bitmap is 16 or 32 hex characters');
  const numbers: number[] = [];
  for (let index = 0; index < bitmapHex.length; index++) {
    const nibble = Number.parseInt(bitmapHex.charAt(index), 16);
    for (let offset = 0; offset < 4; offset++) {
      const number = index * 4 + offset + 1;
      if (number !== 1 && (nibble & (8 >> offset)) !== 0) numbers.push(number);
    }
  }
  return numbers;
}

/**
 * Validates the JSON form and returns a copy with the fields in ascending order. A `"1"` entry
 * (the bitmap, as moov-io's JSON may carry it) is accepted only when it equals the bitmap the
 * fields imply, and is left out of the result. Throws Iso8583MalformedError.
 */
export function parseIsoMessage(input: unknown): IsoMessage {
  if (!isPlainObject(input)) return fail(0, 'the message must be an object { isoMti, fields }');
  for (const key of Object.keys(input)) {
    if (key !== 'isoMti' && key !== 'fields') return fail(0, `unknown property "${truncateForMessage(key)}" (expected isoMti and fields)`);
  }
  const isoMti = checkMti(input.isoMti);
  const rawFields = input.fields;
  if (!isPlainObject(rawFields)) return fail(1, 'fields must be an object of field number → string value');
  return { isoMti, fields: checkFields(rawFields) };
}

function checkFields(rawFields: Record<string, unknown>): Record<string, string> {
  const entries: Array<[number, string]> = [];
  let announcedBitmap: string | undefined;
  for (const [key, value] of Object.entries(rawFields)) {
    if (!/^[1-9][0-9]{0,2}$/.test(key) || Number(key) > 128) return fail(1, `"${truncateForMessage(key)}" is not a field number (1–128)`);
    const number = Number(key);
    if (typeof value !== 'string') return fail(number, 'the value must be a string');
    if (number === 1) {
      announcedBitmap = value;
      continue;
    }
    const problem = fieldValueProblem(number, value);
    if (problem !== null) return fail(number, problem);
    entries.push([number, value]);
  }
  entries.sort((left, right) => left[0] - right[0]);
  if (announcedBitmap !== undefined && announcedBitmap.toUpperCase() !== bitmapOf(entries.map(([number]) => number))) {
    return fail(1, 'the bitmap does not match the fields present');
  }
  const fields: Record<string, string> = {};
  for (const [number, value] of entries) fields[String(number)] = value;
  return fields;
}

/** parseIsoMessage without the throw: the offending field number and the reason, or the message. */
export function checkIsoMessage(input: unknown): IsoMessageCheck {
  try {
    return { ok: true, message: parseIsoMessage(input) };
  } catch (error) {
    if (error instanceof Iso8583MalformedError) return { ok: false, fieldNumber: error.fieldNumber, reason: error.reason };
    throw error;
  }
}

/** The wire form of a message (validated first; throws Iso8583MalformedError). */
export function packIsoMessage(message: IsoMessage): string {
  const valid = parseIsoMessage(message);
  const numbers = Object.keys(valid.fields).map(Number);
  let packed = valid.isoMti + bitmapOf(numbers);
  for (const number of numbers) {
    const value = valid.fields[String(number)] ?? '';
    const definition = fieldDefinitions.get(number);
    assert(definition !== undefined, `field ${number} passed validation without a definition`);
    if (definition.prefix === 'LLVAR') packed += String(value.length).padStart(2, '0');
    if (definition.prefix === 'LLLVAR') packed += String(value.length).padStart(3, '0');
    packed += value;
  }
  return packed;
}

/** Reads the wire form. Throws Iso8583MalformedError naming the field where reading failed. */
export function unpackIsoMessage(packed: string): IsoMessage {
  if (typeof packed !== 'string') return fail(0, 'the packed message must be a string');
  if (packed.length > packedLengthMax) return fail(0, `the packed message is longer than ${packedLengthMax} characters`);
  if (packed.length < 4) return fail(0, 'the message ends inside the MTI');
  const isoMti = checkMti(packed.slice(0, 4));
  let position = 4;

  const readBitmap = (): string => {
    const bitmap = packed.slice(position, position + 16);
    if (bitmap.length < 16) return fail(1, 'the message ends inside the bitmap');
    if (!/^[0-9A-Fa-f]{16}$/.test(bitmap)) return fail(1, 'a bitmap is 16 hex characters');
    position += 16;
    return bitmap;
  };
  let bitmap = readBitmap();
  if ((Number.parseInt(bitmap.charAt(0), 16) & 8) !== 0) {
    const secondary = readBitmap();
    if (/^0+$/.test(secondary)) return fail(1, 'bit 1 announces a secondary bitmap, but it is empty');
    bitmap += secondary;
  }

  const fields: Record<string, string> = {};
  let lastField = 1;
  for (const number of fieldNumbersOf(bitmap)) {
    const definition = fieldDefinitions.get(number);
    if (definition === undefined) return fail(number, 'not a field of the OpenBaaS sandbox network layout');
    let length = characterLength(definition);
    if (definition.prefix !== 'FIXED') {
      const prefixLength = definition.prefix === 'LLVAR' ? 2 : 3;
      const prefix = packed.slice(position, position + prefixLength);
      if (!new RegExp(`^[0-9]{${prefixLength}}$`).test(prefix)) return fail(number, `the length prefix must be ${prefixLength} digits`);
      position += prefixLength;
      length = Number(prefix);
      if (length > characterLength(definition)) return fail(number, `must be at most ${characterLength(definition)} characters; the prefix says ${length}`);
    }
    const value = packed.slice(position, position + length);
    if (value.length < length) return fail(number, 'the message ends inside this field');
    position += length;
    const problem = fieldValueProblem(number, value);
    if (problem !== null) return fail(number, problem);
    fields[String(number)] = value;
    lastField = number;
  }
  if (position !== packed.length) {
    return fail(1, `${packed.length - position} characters follow field ${lastField}, the last one the bitmap announces`);
  }
  return { isoMti, fields };
}

/**
 * The moov-io style keyed JSON used by `POST /v1/sandbox/iso8583` (contract §12.5): the MTI under
 * "0", fields under their numbers, an optional bitmap under "1".
 */
export function parseKeyedIsoMessage(input: unknown): IsoMessage {
  if (!isPlainObject(input)) return fail(0, 'the message must be an object keyed by field number');
  const { '0': isoMti, ...rest } = input;
  return { isoMti: checkMti(isoMti), fields: checkFields(rest) };
}

export function toKeyedIsoMessage(message: IsoMessage): Record<string, string> {
  return { '0': message.isoMti, ...message.fields };
}

/**
 * The `raw` block an event may carry (contract §12.4): DE2 masked to its first 6 and last 4
 * digits, DE14, 35, 36, 45, 52 and 55 removed. The result is for reading, not for packing: a
 * masked DE2 is no longer a valid field value.
 */
export function redactForEvent(message: IsoMessage): IsoMessage {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.fields)) {
    const number = Number(key);
    if (fieldsRemovedFromEvents.includes(number)) continue;
    fields[key] = number === 2 ? maskPan(value) : value;
  }
  return { isoMti: message.isoMti, fields };
}
