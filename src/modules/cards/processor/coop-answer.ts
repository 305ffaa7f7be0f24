/**
 * Reading a cooperative client's answer to a decision request (contract §12.4). Pure: the HTTP
 * outcome in, what it means out. docs/cards.md "Cooperative authorization" lists the rules.
 */
import { isApproval, isAuthorizationCode, isResponseCodeShape } from '../network/index.js';
import type { CoopAuthSettings } from '../program-settings.js';
import type { StandInReason } from './card-transactions.tables.js';

/** What the client's HTTP exchange produced (the webhooks client's outcome, or no endpoint at all). */
export interface ClientExchange {
  ok: boolean;
  httpStatus: number | null;
  latencyMs: number;
  responseBody: string | null;
  /** Set when the answer was longer than the client reads: responseBody is its first that many bytes. */
  responseBodyTruncatedAtBytes?: number;
  error: string | null;
}

export type ClientVerdict =
  | {
      kind: 'APPROVE';
      approvedMinor: bigint;
      /** Set once approvedMinor is converted to the card's currency: the amount as the client answered it, in the request's. */
      answeredMinor?: bigint;
      /** Less than the request approved: the network is answered "10" (coopOutcome), whichever code the client sent. */
      partial: boolean;
      authCode: string | null;
      message: string | null;
      metadata: Record<string, unknown> | null;
      /** The code the client answered ("00" or "10"), as it sent it. */
      responseCode: string;
    }
  | { kind: 'DECLINE'; responseCode: string; message: string | null; metadata: Record<string, unknown> | null }
  | { kind: 'STAND_IN'; reason: StandInReason; detail: string };

const metadataKeysMax = 20;
const messageMaxChars = 200;

const badBody = (detail: string): ClientVerdict => ({ kind: 'STAND_IN', reason: 'BAD_BODY', detail });

/** The verdict on one answer to a request for `amountMinor` (minor units). */
export function readClientAnswer(exchange: ClientExchange, amountMinor: bigint): ClientVerdict {
  if (exchange.httpStatus === null) {
    const error = exchange.error ?? 'no answer';
    return { kind: 'STAND_IN', reason: error.startsWith('timed out') ? 'TIMEOUT' : 'UNREACHABLE', detail: error };
  }
  if (!exchange.ok) return { kind: 'STAND_IN', reason: 'NON_2XX', detail: `HTTP ${exchange.httpStatus}` };
  // Said as it is: a cut answer fails to parse, and "not JSON" sent integrators hunting a JSON bug
  // (found by an audit, 2026-12-02).
  if (exchange.responseBodyTruncatedAtBytes !== undefined) return badBody(`the body is longer than ${exchange.responseBodyTruncatedAtBytes} bytes, the most read of an answer`);
  let body: unknown;
  try {
    body = JSON.parse(exchange.responseBody ?? '');
  } catch {
    return badBody('the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return badBody('the body is not a JSON object');
  const answer = body as Record<string, unknown>;
  const responseCode = answer.responseCode;
  // An optional field sent as null is taken as absent: many JSON writers write every field of a
  // type (until 2026-12-04 a null made the answer unusable, so the stand-in declined; found by an audit).
  const approvedAmountMinor = answer.approvedAmountMinor ?? undefined;
  const authCode = answer.authCode ?? undefined;
  const message = answer.message ?? undefined;
  const metadata = answer.metadata ?? undefined;
  if (!isResponseCodeShape(responseCode)) return badBody('responseCode must be two characters, digits or capital letters');
  if (authCode !== undefined && (typeof authCode !== 'string' || !isAuthorizationCode(authCode))) return badBody('authCode must be six digits or capital letters, not 000000');
  if (message !== undefined && (typeof message !== 'string' || message.length > messageMaxChars)) return badBody(`message must be a string of at most ${messageMaxChars} characters`);
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || Object.keys(metadata).length > metadataKeysMax)) {
    return badBody(`metadata must be an object with at most ${metadataKeysMax} keys`);
  }
  const extras = { message: (message) ?? null, metadata: (metadata as Record<string, unknown> | undefined) ?? null };
  if (responseCode !== '00' && responseCode !== '10') return { kind: 'DECLINE', responseCode, ...extras };
  let approvedMinor = amountMinor;
  if (approvedAmountMinor !== undefined) {
    if (typeof approvedAmountMinor !== 'number' || !Number.isSafeInteger(approvedAmountMinor)) return badBody('approvedAmountMinor must be an integer');
    if (approvedAmountMinor <= 0) return badBody('approvedAmountMinor must be above 0');
    approvedMinor = BigInt(approvedAmountMinor);
    if (approvedMinor > amountMinor) return badBody(`approvedAmountMinor ${approvedMinor} is above the ${amountMinor} requested`);
    // A partial approval of everything asked is no partial approval (contract §12.4: approved ≥ request → stand-in).
    if (responseCode === '10' && approvedMinor === amountMinor) return badBody(`responseCode "10" (partial approval) needs approvedAmountMinor below the ${amountMinor} requested`);
  } else if (responseCode === '10') {
    return badBody('responseCode "10" (partial approval) needs approvedAmountMinor');
  }
  const partial = approvedMinor < amountMinor;
  return { kind: 'APPROVE', approvedMinor, partial, authCode: (authCode) ?? null, responseCode, ...extras };
}

/** What the program's stand-in rule answers to a request for `amountMinor`. */
export function standInAnswer(settings: CoopAuthSettings, amountMinor: bigint): { approved: boolean; responseCode: string } {
  const standIn = settings.standIn;
  if (standIn.mode === 'APPROVE') return { approved: true, responseCode: '00' };
  if (standIn.mode === 'APPROVE_UP_TO' && standIn.maxAmountMinor !== null && amountMinor <= BigInt(standIn.maxAmountMinor)) return { approved: true, responseCode: '00' };
  return { approved: false, responseCode: standIn.mode === 'DECLINE' ? standIn.responseCode : '91' };
}

/** What the network is answered for a verdict (contract §12.4), and who decided. */
export interface CoopOutcome {
  source: 'CLIENT' | 'STAND_IN';
  responseCode: string;
  approvedMinor: bigint;
  authCode: string | null;
  /** Set for the one decline the rules add to the client's answer: a partial approval not allowed. */
  partialNotAllowed: boolean;
}

/**
 * The client's verdict applied: its approval (a partial one only where the program enables it
 * and the terminal can take it, else "05"), its decline, or, when its answer cannot be used, the
 * program's stand-in for `amountMinor`.
 */
export function coopOutcome(verdict: ClientVerdict, settings: CoopAuthSettings, amountMinor: bigint, partialApprovalCapable: boolean): CoopOutcome {
  const none = { authCode: null, partialNotAllowed: false };
  switch (verdict.kind) {
    case 'APPROVE':
      if (verdict.partial && (!settings.partialApprovalEnabled || !partialApprovalCapable)) {
        return { ...none, source: 'CLIENT', responseCode: '05', approvedMinor: 0n, partialNotAllowed: true };
      }
      return { ...none, source: 'CLIENT', responseCode: verdict.partial ? '10' : '00', approvedMinor: verdict.approvedMinor, authCode: verdict.authCode };
    case 'DECLINE':
      return { ...none, source: 'CLIENT', responseCode: verdict.responseCode, approvedMinor: 0n };
    case 'STAND_IN': {
      const standIn = standInAnswer(settings, amountMinor);
      return { ...none, source: 'STAND_IN', responseCode: standIn.responseCode, approvedMinor: standIn.approved ? amountMinor : 0n };
    }
  }
}

/**
 * One line for the delivery log: what the answer decided, or why the stand-in decided instead;
 * `answered` is the code the network was answered (an approval of the client's that became a
 * decline, a partial approval not allowed, says so).
 */
export function verdictText(verdict: ClientVerdict, answered: string): string {
  switch (verdict.kind) {
    case 'APPROVE':
      if (!isApproval(answered)) return `PARTIAL ${verdict.answeredMinor ?? verdict.approvedMinor} not allowed (program or terminal): declined ${answered}`;
      return verdict.partial ? `PARTIAL ${verdict.answeredMinor ?? verdict.approvedMinor}` : 'APPROVED';
    case 'DECLINE':
      return `DECLINED ${verdict.responseCode}`;
    case 'STAND_IN':
      return `STAND_IN ${verdict.reason}: ${verdict.detail}; stand-in ${isApproval(answered) ? 'approved' : `declined ${answered}`}`;
  }
}
