/**
 * Cooperative authorization (contract §12.4): the `data` of the COOP_AUTH_* events, built from the
 * ISO 8583 message, and the shapes the processor hands between the two transactions of a decision
 * request. The processor (processor.ts) reserves and applies; the sandbox network's routes call
 * the client between the two. docs/cards.md "Cooperative authorization" has the whole design.
 */
import type { EventRecord, DecisionEndpoint } from '../../webhooks/index.js';
import { redactForEvent, type IsoMessage } from '../network/index.js';
import type { CoopAuthSettings } from '../program-settings.js';
import type { CardProgramRow } from '../programs.js';
import type { CoopPendingMark } from './card-transactions.tables.js';
import type { MessageInfo } from './message-info.js';

/** A decision request waiting for the client: phase 1 committed it, phase 2 applies the answer. */
export interface PendingCoopDecision {
  clientId: string;
  cardId: string;
  swipeId: string;
  childId: string;
  step: CoopPendingMark['step'];
  /** The message as received (phase 2 reads it again to answer the network). */
  message: IsoMessage;
  event: EventRecord;
  /** The subscription that answers; null when the client has none (the stand-in decides). */
  endpoint: DecisionEndpoint | null;
  settings: CoopAuthSettings;
  /** The card's program as phase 1 read it. */
  program: CardProgramRow;
  /**
   * The moment phase 1 dated the request (its arrival, or after its lifecycle's last change: the
   * processor's onLifecycle), which its record's id carries; phase 2 writes the record at it.
   * Absent: the request's own moment.
   */
  at?: Date;
}

export interface CoopDataInput {
  message: IsoMessage;
  info: MessageInfo;
  /** Null for the echo tool's sample card (the field is then left out). */
  cardId: string | null;
  cardReferenceId: string;
  cardTransactionId: string;
  parentCardTransactionId: string;
  availableMinor: bigint | null;
  original: { mti: string; stan: string; rrn?: string } | null;
  /** Advices only: what the processor answered. */
  answer?: { responseCode: string; authCode: string | null; approvedAmountMinor: bigint };
}

const definedOnly = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));

/**
 * The `data` of a COOP_AUTH_* event (contract §12.4 mapping): the message's data elements by
 * name, amounts as integers in minor units, the currency as its alpha code, the card by its
 * reference (never the PAN), `raw` with DE2 masked and DE14/35/36/45/52/55 removed, and the
 * OpenBaaS additions that let the client tie the request to its records.
 */
export function coopEventData(input: CoopDataInput): Record<string, unknown> {
  const { message, info } = input;
  const field = (number: number): string | undefined => message.fields[String(number)];
  const billing = field(6);
  const currency = field(49);
  return definedOnly({
    mti: message.isoMti,
    stan: info.stan,
    rrn: info.rrn,
    timestamp: info.transmittedAt.toISOString(),
    amountMinor: Number(info.transactionMinor),
    billingAmountMinor: billing === undefined ? undefined : Number(BigInt(billing)),
    currency: currency === undefined ? undefined : info.transactionCurrency,
    processingCode: info.processingCode,
    mcc: field(18),
    posEntryMode: field(22),
    posConditionCode: field(25),
    terminalId: field(41),
    merchantId: field(42),
    merchantNameLocation: field(43),
    acquirerId: field(32),
    cardReferenceId: input.cardReferenceId,
    networkData: field(63),
    networkDataRef: info.networkDataRef ?? undefined,
    original: input.original === null ? undefined : definedOnly({ ...input.original }),
    raw: redactForEvent(message),
    responseCode: input.answer?.responseCode,
    authCode: input.answer?.authCode ?? undefined,
    approvedAmountMinor: input.answer === undefined ? undefined : Number(input.answer.approvedAmountMinor),
    cardId: input.cardId ?? undefined,
    cardTransactionId: input.cardTransactionId,
    parentCardTransactionId: input.parentCardTransactionId,
    partialApprovalCapable: info.partialApprovalCapable,
    availableMinor: input.availableMinor === null ? undefined : Number(input.availableMinor),
  });
}
