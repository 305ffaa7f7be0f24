/**
 * The inside of the composite fields the sandbox processor reads: DE7 (transmission time), DE43
 * (merchant name and location), DE54 (additional amounts), DE90 (original data elements) and
 * DE95 (replacement amounts), in the OpenBaaS sandbox network layout (contract §12 decision 5).
 * Readers throw Iso8583MalformedError naming the field; writers assert (their input is ours).
 */
import { assert } from '../../../platform/assert.js';
import { Iso8583MalformedError } from './iso8583.js';

function digits(value: bigint | number | string, width: number): string {
  const text = String(value);
  assert(/^\d+$/.test(text) && text.length <= width, `"${text}" does not fit in ${width} digits`);
  return text.padStart(width, '0');
}

// ---- DE7: transmission date and time, MMDDhhmmss in UTC ----

export function transmissionDateTime(moment: Date): string {
  return (
    digits(moment.getUTCMonth() + 1, 2) +
    digits(moment.getUTCDate(), 2) +
    digits(moment.getUTCHours(), 2) +
    digits(moment.getUTCMinutes(), 2) +
    digits(moment.getUTCSeconds(), 2)
  );
}

/**
 * Reads DE7 into a date. The field carries no year: the year is the one (of now − 1, now, now +
 * 1) that puts the moment nearest to `now` (contract §12.4 "year inferred").
 */
export function parseTransmissionDateTime(value: string, now: Date): Date {
  if (!/^\d{10}$/.test(value)) throw new Iso8583MalformedError(7, 'must be 10 digits MMDDhhmmss');
  const [month, day, hour, minute, second] = [0, 2, 4, 6, 8].map((start) => Number(value.slice(start, start + 2))) as [number, number, number, number, number];
  if (hour > 23 || minute > 59 || second > 59) throw new Iso8583MalformedError(7, `"${value}" is not a time of day`);
  let best: Date | null = null;
  for (const year of [now.getUTCFullYear() - 1, now.getUTCFullYear(), now.getUTCFullYear() + 1]) {
    const candidate = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
    // Date.UTC rolls 02-30 over into March; such a candidate is not this date.
    if (candidate.getUTCMonth() !== month - 1 || candidate.getUTCDate() !== day) continue;
    if (best === null || Math.abs(candidate.getTime() - now.getTime()) < Math.abs(best.getTime() - now.getTime())) best = candidate;
  }
  if (best === null) throw new Iso8583MalformedError(7, `"${value}" is not a calendar date`);
  return best;
}

/** Whether MMDD is a day of some year (02-29 is: a leap year's). */
function isMonthDay(value: string): boolean {
  const month = Number(value.slice(0, 2));
  const day = Number(value.slice(2, 4));
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(2000, month, 0)).getUTCDate();
}

/** Whether hhmmss is a time of day. */
function isTimeOfDay(value: string): boolean {
  return Number(value.slice(0, 2)) <= 23 && Number(value.slice(2, 4)) <= 59 && Number(value.slice(4, 6)) <= 59;
}

/**
 * DE12 (local time hhmmss), DE13 (local date MMDD) and DE15 (settlement date MMDD), when sent, must
 * be a time of day and days of the year: the codec checks only that they are digits. Until
 * 2026-12-07 `256199` and `1399` were taken (found by an audit); the processor does not otherwise
 * read them.
 */
export function checkLocalDateTimeFields(field: (number: number) => string | undefined): void {
  const time = field(12);
  if (time !== undefined && !isTimeOfDay(time)) throw new Iso8583MalformedError(12, `"${time}" is not a time of day hhmmss`);
  for (const number of [13, 15]) {
    const date = field(number);
    if (date !== undefined && !isMonthDay(date)) throw new Iso8583MalformedError(number, `"${date}" is not a date MMDD`);
  }
}

// ---- DE43: card acceptor name/location, 40 characters ----

export interface MerchantNameLocation {
  /** Positions 1–23: name (and street). */
  name: string;
  /** Positions 24–36. */
  city: string;
  /** Positions 37–38. */
  state: string;
  /** Positions 39–40. */
  country: string;
}

const de43Widths = { name: 23, city: 13, state: 2, country: 2 } as const;

/** Writes DE43: each part upper-cased, cut to its width and space padded. */
export function formatMerchantNameLocation(merchant: MerchantNameLocation): string {
  const part = (text: string, width: number): string => text.toUpperCase().replace(/[^\x20-\x7e]/g, ' ').slice(0, width).padEnd(width, ' ');
  return (
    part(merchant.name, de43Widths.name) +
    part(merchant.city, de43Widths.city) +
    part(merchant.state, de43Widths.state) +
    part(merchant.country, de43Widths.country)
  );
}

export function parseMerchantNameLocation(value: string): MerchantNameLocation {
  if (value.length !== 40) throw new Iso8583MalformedError(43, 'must be exactly 40 characters');
  return {
    name: value.slice(0, 23).trim(),
    city: value.slice(23, 36).trim(),
    state: value.slice(36, 38).trim(),
    country: value.slice(38, 40).trim(),
  };
}

// ---- DE54: additional amounts, 1–6 blocks of 20 characters ----

/** Amount type of the originally requested amount in a partial approval (contract §12 decision 5). */
export const originalAmountType = '57';

export interface AdditionalAmount {
  /** 2 digits: account type (00 unspecified). */
  accountType: string;
  /** 2 characters: amount type (57 original amount, 02 available balance, …). */
  amountType: string;
  /** ISO 4217 numeric, 3 digits. */
  currencyNumeric: string;
  /** Minor units; negative for a `D` (debit) block. */
  amountMinor: bigint;
}

export function formatAdditionalAmounts(amounts: readonly AdditionalAmount[]): string {
  assert(amounts.length >= 1 && amounts.length <= 6, 'DE54 holds 1 to 6 amounts');
  return amounts
    .map((amount) => {
      assert(/^\d{2}$/.test(amount.accountType) && /^[0-9A-Za-z]{2}$/.test(amount.amountType) && /^\d{3}$/.test(amount.currencyNumeric), 'malformed DE54 block');
      const sign = amount.amountMinor < 0n ? 'D' : 'C';
      const magnitude = amount.amountMinor < 0n ? -amount.amountMinor : amount.amountMinor;
      return `${amount.accountType}${amount.amountType}${amount.currencyNumeric}${sign}${digits(magnitude, 12)}`;
    })
    .join('');
}

export function parseAdditionalAmounts(value: string): AdditionalAmount[] {
  if (value.length === 0 || value.length % 20 !== 0 || value.length > 120) {
    throw new Iso8583MalformedError(54, 'must be 1 to 6 blocks of 20 characters');
  }
  const amounts: AdditionalAmount[] = [];
  for (let start = 0; start < value.length; start += 20) {
    const block = value.slice(start, start + 20);
    const match = /^(\d{2})([0-9A-Za-z]{2})(\d{3})([CD])(\d{12})$/.exec(block);
    if (match === null) throw new Iso8583MalformedError(54, `block ${start / 20 + 1} is not account type 2, amount type 2, currency 3, C/D, amount 12`);
    const [, accountType = '', amountType = '', currencyNumeric = '', sign, amount = ''] = match;
    const magnitude = BigInt(amount);
    amounts.push({ accountType, amountType, currencyNumeric, amountMinor: sign === 'D' ? -magnitude : magnitude });
  }
  return amounts;
}

// ---- DE90: original data elements, 42 digits ----

export interface OriginalDataElements {
  /** MTI of the original message. */
  mti: string;
  /** STAN of the original (000000 when the acquirer could not keep it). */
  stan: string;
  /** DE7 of the original (0000000000 when unknown). */
  transmissionDateTime: string;
  /** Acquiring institution id, 11 digits, left zero padded. */
  acquirerId: string;
  /** Forwarding institution id, 11 digits, left zero padded. */
  forwardingId: string;
}

export function formatOriginalDataElements(original: {
  mti: string;
  stan?: string;
  transmissionDateTime?: string;
  acquirerId?: string;
  forwardingId?: string;
}): string {
  return (
    digits(original.mti, 4) +
    digits(original.stan ?? '0', 6) +
    digits(original.transmissionDateTime ?? '0', 10) +
    digits(original.acquirerId ?? '0', 11) +
    digits(original.forwardingId ?? '0', 11)
  );
}

export function parseOriginalDataElements(value: string): OriginalDataElements {
  if (!/^\d{42}$/.test(value)) throw new Iso8583MalformedError(90, 'must be 42 digits');
  const mti = value.slice(0, 4);
  if (mti.charAt(0) !== '0' || mti === '0000') throw new Iso8583MalformedError(90, `the original MTI "${mti}" is not an ISO 8583:1987 MTI`);
  // The original's DE7, or zeros when the acquirer does not have it (until 2026-12-07 any ten
  // digits were taken, 9999999999 too; found by an audit).
  const sent = value.slice(10, 20);
  if (sent !== '0000000000' && (!isMonthDay(sent.slice(0, 4)) || !isTimeOfDay(sent.slice(4)))) {
    throw new Iso8583MalformedError(90, `the original transmission date and time "${sent}" is not a date and time MMDDhhmmss (or zeros)`);
  }
  return {
    mti,
    stan: value.slice(4, 10),
    transmissionDateTime: value.slice(10, 20),
    acquirerId: value.slice(20, 31),
    forwardingId: value.slice(31, 42),
  };
}

// ---- DE95: replacement amounts, 42 characters ----

export interface ReplacementAmounts {
  /** Actual (final) transaction amount, minor units. */
  actualTransactionMinor: bigint;
  /** Actual settlement amount, minor units. */
  actualSettlementMinor: bigint;
  /** Actual transaction fee, minor units; negative for a `C` (credit) fee. */
  transactionFeeMinor: bigint;
  /** Actual settlement fee, minor units; negative for a `C` (credit) fee. */
  settlementFeeMinor: bigint;
}

function formatFee(feeMinor: bigint): string {
  return (feeMinor < 0n ? 'C' : 'D') + digits(feeMinor < 0n ? -feeMinor : feeMinor, 8);
}

/** DE95 in the 1987 layout: actual transaction 12, actual settlement 12, two fees x+n8 (9 each). */
export function formatReplacementAmounts(amounts: { actualTransactionMinor: bigint; actualSettlementMinor?: bigint; transactionFeeMinor?: bigint; settlementFeeMinor?: bigint }): string {
  return (
    digits(amounts.actualTransactionMinor, 12) +
    digits(amounts.actualSettlementMinor ?? amounts.actualTransactionMinor, 12) +
    formatFee(amounts.transactionFeeMinor ?? 0n) +
    formatFee(amounts.settlementFeeMinor ?? 0n)
  );
}

/** Reads DE95. A fee may also come as 9 plain digits (no sign), which some acquirers send. */
export function parseReplacementAmounts(value: string): ReplacementAmounts {
  const match = /^(\d{12})(\d{12})([CD]\d{8}|\d{9})([CD]\d{8}|\d{9})$/.exec(value);
  if (match === null) throw new Iso8583MalformedError(95, 'must be actual transaction amount 12, actual settlement amount 12, transaction fee 9, settlement fee 9');
  const [, transaction = '', settlement = '', transactionFee = '', settlementFee = ''] = match;
  const fee = (text: string): bigint => (text.startsWith('C') ? -BigInt(text.slice(1)) : BigInt(text.replace(/^D/, '')));
  return {
    actualTransactionMinor: BigInt(transaction),
    actualSettlementMinor: BigInt(settlement),
    transactionFeeMinor: fee(transactionFee),
    settlementFeeMinor: fee(settlementFee),
  };
}
