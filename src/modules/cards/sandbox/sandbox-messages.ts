/**
 * The sandbox acquirer: builds the ISO 8583 messages the convenience endpoints of contract §12.5
 * send to the processor, in the OpenBaaS sandbox network layout. Pure functions, no database.
 */
import crypto from 'node:crypto';
import { validationError } from '../../../platform/http/errors.js';
import {
  expiryYyMm,
  formatMerchantNameLocation,
  formatNetworkData,
  formatOriginalDataElements,
  formatReplacementAmounts,
  newNetworkDataRef,
  retrievalReferenceNumber,
  transmissionDateTime,
  type CardExpiry,
  type CardNetwork,
  type IsoMessage,
} from '../network/index.js';
import type { MerchantRecord } from '../processor/card-transactions.tables.js';

/** The acquirer the sandbox network plays (DE32), its terminal (DE41) and merchant id (DE42). */
export const sandboxAcquirerId = '123456';
const sandboxTerminalId = 'TERM0001';
const sandboxMerchantId = 'OPENBAASMERCH01';

export const defaultSandboxMerchant: MerchantRecord = { name: 'OPENBAAS TEST MERCHANT', mcc: '5999', city: 'SAN FRANCISCO', state: 'CA', country: 'US' };

/** Transaction currencies a sandbox authorization may name; the sandbox bills them to the USD card 1:1. */
export const sandboxCurrencies: Readonly<Record<string, string>> = { USD: '840', EUR: '978', GBP: '826', CAD: '124' };

/** Largest amount DE4 can carry: 12 digits of minor units. */
const amountMinorMax = 999_999_999_999n;
const tooLarge = 'is larger than an ISO 8583 amount (DE4, 12 digits of cents) can carry';

/**
 * A card amount of a sandbox request (a JSON number in major units, specification) in minor units:
 * positive, at most two decimals, within DE4. The schema already refused anything but a number.
 */
export function amountMinorOf(amount: number, field = 'amount'): bigint {
  const text = String(amount);
  if (!Number.isFinite(amount) || amount <= 0) throw validationError(field, 'must be a positive number of major units, for example 25.5');
  // Before the digits are read: a number this large is written with an exponent ("1e+21").
  if (amount > Number(amountMinorMax) / 100) throw validationError(field, tooLarge);
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (match === null) throw validationError(field, 'must have at most 2 decimals (major units, for example 25.5)');
  const minor = BigInt(match[1] ?? '0') * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  if (minor > amountMinorMax) throw validationError(field, tooLarge);
  return minor;
}

export function newStan(): string {
  return String(crypto.randomInt(1, 1_000_000)).padStart(6, '0');
}

const amountField = (minor: bigint) => minor.toString().padStart(12, '0');

export interface CardOfMessage {
  pan: string;
  expiry: CardExpiry;
  network: CardNetwork;
}

export interface MessageOptions {
  mti: string;
  processingCode: string;
  amountMinor: bigint;
  currencyNumeric?: string;
  merchant?: MerchantRecord | undefined;
  posEntryMode?: string | undefined;
  networkDataRef: string;
  partialApprovalCapable?: boolean;
  stan?: string;
  rrn?: string;
  original?: { mti: string; stan: string; transmissionDateTime: string; acquirerId: string } | undefined;
  replacementActualMinor?: bigint | undefined;
}

/** One message of the sandbox acquirer, every field as it travels. */
export function buildSandboxMessage(card: CardOfMessage, now: Date, options: MessageOptions): IsoMessage {
  const stan = options.stan ?? newStan();
  const merchant = options.merchant ?? defaultSandboxMerchant;
  const currencyNumeric = options.currencyNumeric ?? '840';
  const fields: Record<string, string> = {
    '2': card.pan,
    '3': options.processingCode,
    '4': amountField(options.amountMinor),
    ...(currencyNumeric === '840' ? {} : { '6': amountField(options.amountMinor) }),
    '7': transmissionDateTime(now),
    '11': stan,
    '14': expiryYyMm(card.expiry),
    '18': merchant.mcc,
    '22': options.posEntryMode ?? '071',
    '25': '00',
    '32': sandboxAcquirerId,
    '37': options.rrn ?? retrievalReferenceNumber(now, stan),
    '41': sandboxTerminalId,
    '42': sandboxMerchantId,
    '43': formatMerchantNameLocation(merchant),
    '49': currencyNumeric,
    ...(currencyNumeric === '840' ? {} : { '51': '840' }),
    // Position 25 of DE63 in the OpenBaaS sandbox layout: "1" when the terminal takes partial approvals.
    '63': formatNetworkData(card.network, options.networkDataRef, options.partialApprovalCapable === false ? '0' : '1'),
  };
  if (options.original) {
    fields['90'] = formatOriginalDataElements({ ...options.original, acquirerId: options.original.acquirerId });
  }
  if (options.replacementActualMinor !== undefined) fields['95'] = formatReplacementAmounts({ actualTransactionMinor: options.replacementActualMinor });
  return { isoMti: options.mti, fields };
}

export { newNetworkDataRef };
