/**
 * ISO 8583:1987 message type indicators (MTI). Four digits: version, class, function, origin.
 * The sandbox network speaks version 0 (1987) only. See research §1.1 and docs/cards-network.md.
 */

export type MessageClass =
  | 'AUTHORIZATION'
  | 'FINANCIAL'
  | 'FILE_ACTION'
  | 'REVERSAL_CHARGEBACK'
  | 'RECONCILIATION'
  | 'ADMINISTRATIVE'
  | 'FEE_COLLECTION'
  | 'NETWORK_MANAGEMENT';

export type MessageFunction = 'REQUEST' | 'REQUEST_RESPONSE' | 'ADVICE' | 'ADVICE_RESPONSE' | 'NOTIFICATION' | 'NOTIFICATION_ACKNOWLEDGEMENT';

export type MessageOrigin = 'ACQUIRER' | 'ACQUIRER_REPEAT' | 'ISSUER' | 'ISSUER_REPEAT' | 'OTHER' | 'OTHER_REPEAT';

export interface MtiMeaning {
  mti: string;
  messageClass: MessageClass;
  messageFunction: MessageFunction;
  origin: MessageOrigin;
  /** True for the "repeat" origins (1, 3, 5): the sender timed out and sent the same message again. */
  repeat: boolean;
}

const classes: Readonly<Record<string, MessageClass>> = {
  '1': 'AUTHORIZATION',
  '2': 'FINANCIAL',
  '3': 'FILE_ACTION',
  '4': 'REVERSAL_CHARGEBACK',
  '5': 'RECONCILIATION',
  '6': 'ADMINISTRATIVE',
  '7': 'FEE_COLLECTION',
  '8': 'NETWORK_MANAGEMENT',
};

const functions: Readonly<Record<string, MessageFunction>> = {
  '0': 'REQUEST',
  '1': 'REQUEST_RESPONSE',
  '2': 'ADVICE',
  '3': 'ADVICE_RESPONSE',
  '4': 'NOTIFICATION',
  '5': 'NOTIFICATION_ACKNOWLEDGEMENT',
};

const origins: Readonly<Record<string, MessageOrigin>> = {
  '0': 'ACQUIRER',
  '1': 'ACQUIRER_REPEAT',
  '2': 'ISSUER',
  '3': 'ISSUER_REPEAT',
  '4': 'OTHER',
  '5': 'OTHER_REPEAT',
};

/** Reads the four digits of a 1987 MTI; null when it is not one (wrong length, version or digit). */
export function describeMti(mti: string): MtiMeaning | null {
  if (!/^0\d{3}$/.test(mti)) return null;
  const messageClass = classes[mti.charAt(1)];
  const messageFunction = functions[mti.charAt(2)];
  const origin = origins[mti.charAt(3)];
  if (messageClass === undefined || messageFunction === undefined || origin === undefined) return null;
  return { mti, messageClass, messageFunction, origin, repeat: origin.endsWith('_REPEAT') };
}

/**
 * The messages the sandbox network exchanges with the issuer (OpenBaaS), with what the issuer
 * does on receipt. Requests may be declined; advices report something already done and are
 * always acknowledged with "00".
 */
export const sandboxMtis = {
  '0100': 'Authorization request: approve, partially approve or decline; an approval places a hold',
  '0110': 'Authorization request response',
  '0120': 'Authorization advice: a decision already taken (stand-in, final fuel amount); cannot be declined',
  '0130': 'Authorization advice response',
  '0200': 'Financial request: decide and post in one step',
  '0210': 'Financial request response',
  '0220': 'Financial advice: completion of an earlier authorization, or a force post; cannot be declined',
  '0230': 'Financial advice response',
  '0400': 'Reversal request: undo an earlier message named by DE90',
  '0410': 'Reversal request response',
  '0420': 'Reversal advice: release a hold fully, or partly with DE95',
  '0430': 'Reversal advice response',
} as const satisfies Record<string, string>;

export type SandboxMti = keyof typeof sandboxMtis;

export function isSandboxMti(mti: string): mti is SandboxMti {
  return Object.hasOwn(sandboxMtis, mti);
}

/** True for messages that expect an answer (requests and advices, first sending or repeat). */
export function expectsResponse(mti: string): boolean {
  const meaning = describeMti(mti);
  return meaning !== null && (meaning.messageFunction === 'REQUEST' || meaning.messageFunction === 'ADVICE');
}

/** True for advices (function 2): the receiver must accept them, whatever it thinks of them. */
export function isAdvice(mti: string): boolean {
  return describeMti(mti)?.messageFunction === 'ADVICE';
}

/**
 * The MTI of the answer to a request or advice: function 0 → 1 and 2 → 3, origin back to 0
 * (a repeat 0101 is answered with 0110, like the 0100 it repeats). Null for anything that is
 * not a request or an advice.
 */
export function responseMtiOf(mti: string): string | null {
  if (!expectsResponse(mti)) return null;
  const responseFunction = mti.charAt(2) === '0' ? '1' : '3';
  return `${mti.slice(0, 2)}${responseFunction}0`;
}

/** The first-sending MTI of a repeat (0101 → 0100, 0421 → 0420); the MTI itself otherwise. */
export function firstSendingOf(mti: string): string {
  const meaning = describeMti(mti);
  if (meaning === null || !meaning.repeat) return mti;
  return `${mti.slice(0, 3)}${String(Number(mti.charAt(3)) - 1)}`;
}

/**
 * Every MTI whose first sending is `first`: `first` itself (unless it is a repeat) and its repeat
 * (0100 → 0100, 0101). Exactly the MTIs `mti` with `firstSendingOf(mti) === first`, for looking
 * them up in the database.
 */
export function sendingsOf(first: string): string[] {
  const last = first.charAt(3);
  const repeat = /^[0-8]$/.test(last) ? `${first.slice(0, 3)}${String(Number(last) + 1)}` : null;
  return [first, ...(repeat === null ? [] : [repeat])].filter((mti) => firstSendingOf(mti) === first);
}

export type CoopAuthEventType = 'COOP_AUTH_0100' | 'COOP_AUTH_0120' | 'COOP_AUTH_0200' | 'COOP_AUTH_0220' | 'COOP_AUTH_0420';

const coopAuthEventTypes: Readonly<Record<string, CoopAuthEventType>> = {
  '0100': 'COOP_AUTH_0100',
  '0120': 'COOP_AUTH_0120',
  '0200': 'COOP_AUTH_0200',
  '0220': 'COOP_AUTH_0220',
  '0420': 'COOP_AUTH_0420',
};

/**
 * The cooperative-authorization event a message produces (spec: COOP_AUTH_0100, _0120, _0200,
 * _0220, _0420). A repeat maps to the event of its first sending; responses and 0400 map to none.
 */
export function coopAuthEventTypeOf(mti: string): CoopAuthEventType | null {
  return coopAuthEventTypes[firstSendingOf(mti)] ?? null;
}
