/**
 * The call to a cooperative client, between the two transactions of a decision request: it holds
 * no database connection and no row lock while it waits (issue 19 item 5, docs/cards.md).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../../platform/deps.js';
import { sendDecisionRequest } from '../../webhooks/index.js';
import type { ClientExchange } from './coop-answer.js';
import type { StandInReason } from './card-transactions.tables.js';
import type { PendingCoopDecision } from './coop-auth.js';

export interface ClientCall {
  /** Null when nothing was sent: the client has no subscription for the decision type, or no time was left (`notSent`). */
  exchange: ClientExchange | null;
  attemptedAt: Date;
  /** Why the request was not sent although the client has a subscription: the stand-in decides for this reason. */
  notSent?: { reason: StandInReason; detail: string };
}

/**
 * Sends the decision request once. The program's timeoutMs counts from the message's arrival, as
 * the network's own window does: the request is sent with what is left of it after the system's
 * first transaction (`elapsedMs` since the arrival), so that a stand-in answers the network
 * within timeoutMs plus the second transaction. With nothing left it is not sent. A late answer
 * is only logged.
 */
export async function callCoopClient(deps: Pick<Deps, 'config'>, pending: PendingCoopDecision, log: FastifyBaseLogger, elapsedMs: number): Promise<ClientCall> {
  const attemptedAt = new Date(pending.event.createdAt);
  if (pending.endpoint === null) return { exchange: null, attemptedAt };
  const { timeoutMs } = pending.settings;
  // What the client has of it: whole milliseconds, none once it is over.
  const windowMs = Math.max(0, Math.floor(timeoutMs - elapsedMs));
  if (windowMs === 0) {
    const detail = `not sent: the message arrived ${Math.round(elapsedMs)} ms before, past the program's timeoutMs (${timeoutMs})`;
    log.warn({ eventId: pending.event.id, cardTransactionId: pending.childId, elapsedMs: Math.round(elapsedMs), timeoutMs }, 'cooperative decision request not sent: no time left');
    return { exchange: null, attemptedAt, notSent: { reason: 'TIMEOUT', detail } };
  }
  const exchange = await sendDecisionRequest(deps, pending.endpoint, pending.event, windowMs, (late) => {
    log.warn(
      { eventId: pending.event.id, cardTransactionId: pending.childId, httpStatus: late.httpStatus, latencyMs: late.latencyMs, timeoutMs, windowMs },
      'cooperative decision answer arrived after the timeout: ignored (the stand-in had decided)',
    );
  });
  return { exchange, attemptedAt };
}

/**
 * Waits, outside any transaction, until the card transaction record `childId` exists (a repeat
 * waiting for its first sending's answer), at most `waitMs`. Resolves either way.
 */
export async function waitForRecord(deps: Pick<Deps, 'db'>, clientId: string, childId: string, waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  for (;;) {
    const row = await deps.db.selectFrom('card_transactions').select('id').where('client_id', '=', clientId).where('id', '=', childId).executeTakeFirst();
    if (row || Date.now() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
