import {
  expiryFromYyMm,
  firstSendingOf,
  Iso8583MalformedError,
  networkDataRefOf,
  originalAmountType,
  parseAdditionalAmounts,
  parseMerchantNameLocation,
  parseOriginalDataElements,
  parseReplacementAmounts,
  parseTransmissionDateTime,
  checkLocalDateTimeFields,
  type CardExpiry,
  type IsoMessage,
  type OriginalDataElements,
  type ReplacementAmounts,
} from '../network/index.js';
import { currencyOfNumeric } from './card-transaction-views.js';
import type { FeeRecord, MerchantRecord } from './card-transactions.tables.js';

/** The messages the processor handles (and their repeats): contract §12.3. */
export const handledMtis = ['0100', '0120', '0200', '0220', '0400', '0420'] as const;
export type HandledMti = (typeof handledMtis)[number];

/** Fields every handled message must carry. */
const requiredFields = [2, 3, 4, 7, 11, 37] as const;

/** The currency the sandbox cards hold (contract §12.1: programs are USD). */
export const cardCurrencyNumeric = '840';

/**
 * What the processor reads from one ISO 8583 message, checked once: amounts in minor units, the
 * identifiers messages are correlated by, the merchant, and the OpenBaaS sandbox layout's extras
 * (DE63 position 25 "1": the terminal can take a partial approval).
 */
export interface MessageInfo {
  /** First-sending MTI (a repeat 0101 reads as 0100). */
  mti: HandledMti;
  receivedMti: string;
  processingCode: string;
  /** The card currency amount: DE4 when the transaction is in USD, else DE6 (cardholder billing). */
  amountMinor: bigint;
  /** DE4 as sent, in the transaction currency. */
  transactionMinor: bigint;
  /** DE6 as sent (cardholder billing, the card's currency); null without DE6. */
  billingMinor: bigint | null;
  transactionCurrencyNumeric: string;
  transactionCurrency: string;
  /** Decimals of the transaction currency (ISO 4217: 2 for EUR, 0 for JPY, 3 for BHD). */
  transactionExponent: number;
  surchargeMinor: bigint | null;
  fees: FeeRecord[];
  stan: string;
  rrn: string;
  transmissionDateTime: string;
  transmittedAt: Date;
  /** DE32, 11 digits, left zero padded (as DE90 carries it). */
  acquirerId: string;
  networkDataRef: string | null;
  merchant: MerchantRecord | null;
  mcc: string | null;
  partialApprovalCapable: boolean;
  expiry: CardExpiry | null;
  original: OriginalDataElements | null;
  replacement: ReplacementAmounts | null;
  /**
   * DE95's actual transaction amount in the card's currency: DE95 carries it in the transaction
   * currency (DE49), so a foreign-currency message's is converted at the message's own rate (DE6
   * over DE4), rounded half up. Null without DE95.
   */
  replacementActualMinor: bigint | null;
}

export function isHandledMti(mti: string): mti is HandledMti {
  return (handledMtis as readonly string[]).includes(mti);
}

export function readMessage(message: IsoMessage, now: Date): MessageInfo {
  const mti = firstSendingOf(message.isoMti);
  if (!isHandledMti(mti)) {
    throw new Iso8583MalformedError(0, `the sandbox network handles ${handledMtis.join(', ')} and their repeats; got "${message.isoMti}"`);
  }
  const fields = message.fields;
  for (const number of requiredFields) {
    if (fields[String(number)] === undefined) throw new Iso8583MalformedError(number, `is required in a ${mti} message`);
  }
  const field = (number: number): string | undefined => fields[String(number)];
  const transactionMinor = BigInt(field(4) ?? '0');
  const transactionCurrencyNumeric = field(49) ?? cardCurrencyNumeric;
  const billing = field(6);
  const billingMinor = billing === undefined ? null : BigInt(billing);
  if (field(51) !== undefined && field(51) !== cardCurrencyNumeric) {
    throw new Iso8583MalformedError(51, `the cardholder billing currency of a sandbox card is ${cardCurrencyNumeric} (USD)`);
  }
  // The currency first: an unassigned DE49 is the fault, whether DE6 came with it or not.
  const currency = currencyOfNumeric(transactionCurrencyNumeric);
  if (currency === undefined) throw new Iso8583MalformedError(49, `"${transactionCurrencyNumeric}" is not an ISO 4217 currency code`);
  if (transactionCurrencyNumeric !== cardCurrencyNumeric && billingMinor === null) {
    throw new Iso8583MalformedError(6, `is required when the transaction currency (DE49 ${transactionCurrencyNumeric}) is not the card's (${cardCurrencyNumeric})`);
  }
  // In the card's own currency the billing amount is the transaction amount: a DE6 that says
  // otherwise cannot be both billed and held (until 2026-12-05 it was ignored for the hold and
  // echoed in the answer as if billed; found by an audit).
  if (transactionCurrencyNumeric === cardCurrencyNumeric && billingMinor !== null && billingMinor !== transactionMinor) {
    throw new Iso8583MalformedError(6, `must equal DE4 (${transactionMinor}) when the transaction is in the card's currency (DE49 ${transactionCurrencyNumeric}); it is ${billingMinor}`);
  }
  // No rate turns nothing into an amount: a DE6 billing the card for a DE4 of zero is not an
  // amount-0 message (an account verification, answered without a funds check or a hold) nor
  // anything else. Until 2026-12-06 a foreign-currency 0100 with DE4 0 and DE6 1000.00 was approved
  // as a verification while its answer echoed the 1000.00, and its completion then overdrew the
  // wallet by the whole amount (found by a fuzzing audit). The other way round, a small DE4 that
  // converts to less than a cent, is a real message and stays allowed.
  if (transactionMinor === 0n && billingMinor !== null && billingMinor !== 0n) {
    throw new Iso8583MalformedError(6, `must be 0 when the transaction amount (DE4) is 0; it is ${billingMinor}`);
  }
  const amountMinor = transactionCurrencyNumeric === cardCurrencyNumeric ? transactionMinor : (billingMinor ?? 0n);

  const surcharge = field(28);
  const surchargeMinor = surcharge === undefined ? null : (surcharge.startsWith('C') ? -1n : 1n) * BigInt(surcharge.slice(1));
  const additional = field(54) === undefined ? [] : parseAdditionalAmounts(field(54) ?? '');
  // DE54 blocks are fees, except the amount types with other meanings: 01/02 balances, 57 the original amount.
  const fees = additional
    .filter((entry) => !['01', '02', originalAmountType].includes(entry.amountType))
    .map((entry) => {
      const feeCurrency = currencyOfNumeric(entry.currencyNumeric);
      if (feeCurrency === undefined) throw new Iso8583MalformedError(54, `currency "${entry.currencyNumeric}" of amount type ${entry.amountType} is not an ISO 4217 currency code`);
      return { type: entry.amountType, amountMinor: (entry.amountMinor < 0n ? -entry.amountMinor : entry.amountMinor).toString(), currency: feeCurrency.alpha };
    });

  const de43 = field(43);
  const mcc = field(18) ?? null;
  const parsedMerchant = de43 === undefined ? null : parseMerchantNameLocation(de43);
  const merchant = parsedMerchant === null && mcc === null ? null : { name: '', city: '', state: '', country: '', ...parsedMerchant, mcc: mcc ?? '' };

  checkLocalDateTimeFields(field);
  const expiryField = field(14);
  const expiry = expiryField === undefined ? null : expiryFromYyMm(expiryField);
  if (expiryField !== undefined && expiry === null) throw new Iso8583MalformedError(14, 'is not an expiry date YYMM');
  const trackExpiry = track2Expiry(field(35), field(2) ?? '', expiryField);
  const networkData = field(63);
  const replacement = field(95) === undefined ? null : parseReplacementAmounts(field(95) ?? '');
  return {
    mti,
    receivedMti: message.isoMti,
    processingCode: field(3) ?? '000000',
    amountMinor,
    transactionMinor,
    billingMinor,
    transactionCurrencyNumeric,
    transactionCurrency: currency.alpha,
    transactionExponent: currency.exponent,
    surchargeMinor,
    fees,
    stan: field(11) ?? '',
    rrn: field(37) ?? '',
    transmissionDateTime: field(7) ?? '',
    transmittedAt: parseTransmissionDateTime(field(7) ?? '', now),
    acquirerId: (field(32) ?? '').padStart(11, '0'),
    networkDataRef: networkDataRefOf(networkData),
    merchant,
    mcc,
    partialApprovalCapable: networkData !== undefined && networkData.charAt(24) === '1',
    // Without DE14 the card's expiry is checked against track 2's, as a terminal reading the stripe sends it.
    expiry: expiry ?? trackExpiry,
    original: field(90) === undefined ? null : parseOriginalDataElements(field(90) ?? ''),
    replacement,
    replacementActualMinor: replacement === null ? null : atRate(replacement.actualTransactionMinor, transactionMinor, amountMinor),
  };
}

/**
 * DE35 (track 2: the card number, a separator `=` or `D`, then the expiry YYMM and the rest) must
 * name the card DE2 names, and the expiry DE14 gives when both carry one; its expiry (a date YYMM)
 * is the one checked when DE14 is absent. Until 2026-12-04 it was
 * not read at all, so a message whose track 2 held another card was approved on DE2's (found by
 * an audit).
 */
function track2Expiry(track2: string | undefined, pan: string, expiry: string | undefined): CardExpiry | null {
  if (track2 === undefined) return null;
  const match = /^(\d{1,19})[=D](\d{4})?/.exec(track2);
  if (match === null) throw new Iso8583MalformedError(35, 'must start with the card number, then "=" or "D"');
  const [, trackPan = '', trackExpiry] = match;
  if (trackPan !== pan) throw new Iso8583MalformedError(35, 'names another card number than DE2');
  if (trackExpiry === undefined) return null;
  const parsed = expiryFromYyMm(trackExpiry);
  if (parsed === null) throw new Iso8583MalformedError(35, 'holds an expiry that is not a date YYMM');
  if (expiry !== undefined && trackExpiry !== expiry) throw new Iso8583MalformedError(35, 'holds another expiry than DE14');
  return parsed;
}

/**
 * An amount in another currency at the rate of the message that carries it (`toMinor` for
 * `fromMinor`: DE6 for DE4 from the transaction currency to the card's, DE4 for DE6 the other
 * way), rounded half up. Until 2026-12-03 DE95's actual amount was taken as the card's whatever
 * DE49 said, so a partial reversal of a foreign-currency message kept the wrong part (found by an
 * audit). A message of 0 has no rate: the amount is taken as it is.
 */
export function atRate(amountMinor: bigint, fromMinor: bigint, toMinor: bigint): bigint {
  if (fromMinor === toMinor || fromMinor === 0n) return amountMinor;
  return (amountMinor * toMinor * 2n + fromMinor) / (2n * fromMinor);
}

/** The two digits of the transaction type in DE3 (00 goods and services, 01 cash, 20 refund, 30/31 balance inquiry). */
export function transactionTypeOf(info: MessageInfo): string {
  return info.processingCode.slice(0, 2);
}

/**
 * The transaction types (DE3 positions 1–2) the processor handles: 00 goods and services, 01 cash,
 * 09 purchase with cash back, 20 refund, 30 and 31 balance inquiry (research §1.2). A request
 * (0100, 0200) of any other type (a funds transfer, an original credit, a payment, …) is declined
 * with 12 rather than taken for a purchase.
 */
export const handledTransactionTypes: ReadonlySet<string> = new Set(['00', '01', '09', '20', '30', '31']);

/**
 * Sandbox magic amounts (contract §12.5): DE4 of exactly 990.NN in its currency's major units
 * answers NN for these codes; 990.10 is a partial approval of half. Null for any other amount, and
 * in a currency of fewer than two decimals (990.NN cannot be said in it). Until 2026-12-04 DE4 was
 * read as minor units whatever the currency, so an ordinary ¥99,051 purchase was declined 51 and
 * BHD 99.051 too (found by an audit).
 */
export const magicResponseCodes = ['05', '10', '13', '14', '51', '54', '55', '57', '61', '62', '65', '91', '94', '96'] as const;

export function magicResponseCodeOf(info: MessageInfo): string | null {
  if (info.transactionExponent < 2) return null;
  const scale = 10n ** BigInt(info.transactionExponent - 2);
  if (info.transactionMinor % scale !== 0n) return null;
  const cents = info.transactionMinor / scale;
  const magicBase = 99_000n;
  if (cents < magicBase || cents > magicBase + 99n) return null;
  const code = String(cents - magicBase).padStart(2, '0');
  return (magicResponseCodes as readonly string[]).includes(code) ? code : null;
}
