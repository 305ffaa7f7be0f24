/**
 * The call to a cooperative client, between the two transactions of a decision request: it holds
 * no database connection and no row lock while it waits (issue 19 item 5, docs/cards.md).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../../platform/deps.js';
import { sendDecisionRequest } from '../../webhooks/index.js';
import type { ClientExchange } from './coop-answer.js';
import type { PendingCoopDecision } from './coop-auth.js';

export interface ClientCall {
  /** Null when the client has no subscription for the decision type (the stand-in decides). */
  exchange: ClientExchange | null;
  attemptedAt: Date;
}

/** Sends the decision request once, within the program's timeoutMs; a late answer is only logged. */
export async function callCoopClient(deps: Pick<Deps, 'config'>, pending: PendingCoopDecision, log: FastifyBaseLogger): Promise<ClientCall> {
  const attemptedAt = new Date(pending.event.createdAt);
  if (pending.endpoint === null) return { exchange: null, attemptedAt };
  const timeoutMs = pending.settings.timeoutMs;
  const exchange = await sendDecisionRequest(deps, pending.endpoint, pending.event, timeoutMs, (late) => {
    log.warn(
      { eventId: pending.event.id, cardTransactionId: pending.childId, httpStatus: late.httpStatus, latencyMs: late.latencyMs, timeoutMs },
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
