/**
 * DE39 response codes used by the sandbox network (research §1.3, contract §12.3–12.5), with the
 * `declineReason` name a card transaction record carries. The contract names only one reason
 * (`LTV_PURCHASE_RESTRICTED`); the others are OpenBaaS names chosen here, one per code, plus a few
 * that refine a shared code (57 has several causes).
 */

export type ResponseOutcome = 'APPROVED' | 'PARTIALLY_APPROVED' | 'DECLINED';

export interface ResponseCodeEntry {
  code: string;
  description: string;
  outcome: ResponseOutcome;
  /** Null for approvals. */
  declineReason: DeclineReason | null;
}

export const declineReasons = {
  DO_NOT_HONOR: '05',
  /** A request of a transaction type (DE3 positions 1–2) the issuer does not process. */
  INVALID_TRANSACTION: '12',
  INVALID_AMOUNT: '13',
  INVALID_CARD_NUMBER: '14',
  INSUFFICIENT_FUNDS: '51',
  EXPIRED_CARD: '54',
  INCORRECT_PIN: '55',
  TRANSACTION_NOT_PERMITTED: '57',
  CARD_NOT_ACTIVE: '57',
  LTV_PURCHASE_RESTRICTED: '57',
  SUSPECTED_FRAUD: '59',
  EXCEEDS_AMOUNT_LIMIT: '61',
  RESTRICTED_CARD: '62',
  EXCEEDS_FREQUENCY_LIMIT: '65',
  ISSUER_UNAVAILABLE: '91',
  DUPLICATE_TRANSACTION: '94',
  SYSTEM_MALFUNCTION: '96',
  /** A partial approval the program or terminal does not allow is answered "05" (contract §12.4). */
  PARTIAL_APPROVAL_NOT_ALLOWED: '05',
  /** The client answered with a well-formed code that is not in the table below. */
  DECLINED_BY_CLIENT: '05',
} as const satisfies Record<string, string>;

export type DeclineReason = keyof typeof declineReasons;

const entries: readonly ResponseCodeEntry[] = [
  { code: '00', description: 'Approved or completed successfully', outcome: 'APPROVED', declineReason: null },
  { code: '05', description: 'Do not honor', outcome: 'DECLINED', declineReason: 'DO_NOT_HONOR' },
  { code: '10', description: 'Approved for partial amount', outcome: 'PARTIALLY_APPROVED', declineReason: null },
  { code: '12', description: 'Invalid transaction', outcome: 'DECLINED', declineReason: 'INVALID_TRANSACTION' },
  { code: '13', description: 'Invalid amount', outcome: 'DECLINED', declineReason: 'INVALID_AMOUNT' },
  { code: '14', description: 'Invalid card number', outcome: 'DECLINED', declineReason: 'INVALID_CARD_NUMBER' },
  { code: '51', description: 'Not sufficient funds', outcome: 'DECLINED', declineReason: 'INSUFFICIENT_FUNDS' },
  { code: '54', description: 'Expired card', outcome: 'DECLINED', declineReason: 'EXPIRED_CARD' },
  { code: '55', description: 'Incorrect PIN', outcome: 'DECLINED', declineReason: 'INCORRECT_PIN' },
  { code: '57', description: 'Transaction not permitted to cardholder', outcome: 'DECLINED', declineReason: 'TRANSACTION_NOT_PERMITTED' },
  { code: '59', description: 'Suspected fraud', outcome: 'DECLINED', declineReason: 'SUSPECTED_FRAUD' },
  { code: '61', description: 'Exceeds withdrawal amount limit', outcome: 'DECLINED', declineReason: 'EXCEEDS_AMOUNT_LIMIT' },
  { code: '62', description: 'Restricted card', outcome: 'DECLINED', declineReason: 'RESTRICTED_CARD' },
  { code: '65', description: 'Exceeds withdrawal frequency limit', outcome: 'DECLINED', declineReason: 'EXCEEDS_FREQUENCY_LIMIT' },
  { code: '91', description: 'Issuer or switch inoperative', outcome: 'DECLINED', declineReason: 'ISSUER_UNAVAILABLE' },
  { code: '94', description: 'Duplicate transmission', outcome: 'DECLINED', declineReason: 'DUPLICATE_TRANSACTION' },
  { code: '96', description: 'System malfunction', outcome: 'DECLINED', declineReason: 'SYSTEM_MALFUNCTION' },
];

export const responseCodes: ReadonlyMap<string, ResponseCodeEntry> = new Map(entries.map((entry) => [entry.code, entry]));

/** Two letters or digits: the shape a client's `responseCode` must have (else stand-in, contract §12.4). */
export function isResponseCodeShape(code: unknown): code is string {
  return typeof code === 'string' && /^[0-9A-Z]{2}$/.test(code);
}

/**
 * The entry of a response code. A well-formed code outside the table still declines with that
 * code (contract §12.4: "any other two-character code declines with that code"); null only when
 * the value does not have the shape of a response code at all.
 */
export function describeResponseCode(code: string): ResponseCodeEntry | null {
  const known = responseCodes.get(code);
  if (known !== undefined) return known;
  if (!isResponseCodeShape(code)) return null;
  return { code, description: 'Declined (code outside the sandbox table)', outcome: 'DECLINED', declineReason: 'DECLINED_BY_CLIENT' };
}

/** True for "00" and "10": a hold is placed or money posted (for "10", on the approved amount). */
export function isApproval(code: string): boolean {
  const outcome = describeResponseCode(code)?.outcome;
  return outcome === 'APPROVED' || outcome === 'PARTIALLY_APPROVED';
}

/** The DE39 code the network is answered with for a decline reason. */
export function responseCodeOf(reason: DeclineReason): string {
  return declineReasons[reason];
}
