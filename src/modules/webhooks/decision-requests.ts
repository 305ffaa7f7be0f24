import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import { prepared, preparedSelect } from '../../platform/db/prepared-statements.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { deliveryBody, errorKeptChars, responseBodyKeptChars, truncate } from './delivery-policy.js';
import { eventRecordOf, type EventRecord } from './events.store.js';
import type { EventType } from './event-types.js';
import { webhookHttpClient, type PostOutcome } from './webhook-http.js';
import { signedHeaders } from './webhook-signing.js';
import { webhookSecretBoxOf } from './webhook-secrets.js';
import { workerName } from './webhooks.service.js';

/**
 * Synchronous decision requests (contract §12.4): COOP_AUTH_0100 and COOP_AUTH_0200 are not
 * queued for the delivery worker like other events. The caller records the event (in the
 * transaction that reserves the money), sends it once with `sendDecisionRequest` outside any
 * transaction, and records the one attempt with `recordDecisionDelivery` in the transaction that
 * applies the answer, so the delivery log shows every request with its answer and verdict. They
 * are never retried: the network's window is too short.
 */

/** The subscription that answers decision requests of one type. */
export interface DecisionEndpoint {
  subscriptionId: string;
  url: string;
  /** Signing secrets, newest first (a rotated secret still signs during its overlap). */
  secrets: string[];
}

/**
 * The client's active subscription that names `type` explicitly (a `*` subscription is not asked
 * to decide: it did not sign up to answer in real time). With several, the oldest answers.
 */
export async function decisionEndpointOf(tx: Tx, deps: Pick<Deps, 'config' | 'database'>, clientId: string, type: EventType, now: Date): Promise<DecisionEndpoint | null> {
  // Prepared, as the decision path's other statements: one runs for every decision request.
  const row = (
    await preparedSelect(
      tx
        .selectFrom('webhook_subscriptions')
        .select(['id', 'url', 'secret', 'previous_secret', 'previous_secret_expires_at'])
        .where('client_id', '=', clientId)
        .where('active', '=', true)
        .where('deleted_at', 'is', null)
        .where(sql<boolean>`${type} = ANY (event_types)`)
        .orderBy('created_at')
        .orderBy('id')
        .limit(1),
    ).execute(tx)
  ).rows[0];
  if (!row) return null;
  return { subscriptionId: row.id, url: row.url, secrets: webhookSecretBoxOf(deps).signingSecrets(clientId, row.id, row, now) };
}

/** Records a decision request's event (the event stream shows it; no delivery is queued). `id` may be drawn beforehand. */
export async function recordDecisionRequestEvent(tx: Tx, context: RequestContext, type: EventType, data: Record<string, unknown>, id?: string): Promise<EventRecord> {
  const event = eventRecordOf(context, type, data, id);
  await prepared(sql`
    INSERT INTO events (client_id, id, type, data, created_at)
    VALUES (${context.clientId}, ${event.id}, ${type}, ${JSON.stringify(event.data)}, ${context.now})`).execute(tx);
  return event;
}

/** Sends a decision request once, signed, within `timeoutMs`; a later answer is reported to `onLate`. Never throws. */
export async function sendDecisionRequest(
  deps: Pick<Deps, 'config'>,
  endpoint: DecisionEndpoint,
  event: EventRecord,
  timeoutMs: number,
  onLate: (late: { httpStatus: number; latencyMs: number }) => void,
): Promise<PostOutcome> {
  const body = deliveryBody(event);
  const headers = signedHeaders(endpoint.secrets, event.id, Math.floor(Date.now() / 1000), body);
  return webhookHttpClient(deps.config.mode).post(
    endpoint.url,
    { ...headers, 'openbaas-delivery-id': decisionDeliveryIdOf(event.id), 'openbaas-attempt': '1' },
    body,
    { timeoutMs, lateResponse: { graceMs: 10_000, onResponse: onLate } },
  );
}

/** The delivery id of a decision request: derived from its event id, so the header sent matches the log. */
function decisionDeliveryIdOf(eventId: string): string {
  return eventId;
}

/**
 * Writes the delivery log entry of a decision request: one delivery, DELIVERED when the answer
 * was used and FAILED when the stand-in decided, with its single attempt and `verdict`.
 */
export async function recordDecisionDelivery(
  tx: Tx,
  input: { clientId: string; subscriptionId: string; event: EventRecord; attemptedAt: Date; now: Date; outcome: PostOutcome; accepted: boolean; verdict: string },
): Promise<void> {
  const id = decisionDeliveryIdOf(input.event.id);
  const status = input.accepted ? 'DELIVERED' : 'FAILED';
  // The delivery and its one attempt in one statement (the decision path counts round trips).
  await prepared(sql`
    WITH delivery AS (
      INSERT INTO webhook_deliveries (client_id, id, subscription_id, event_id, event_type, status, attempt_count, final_attempt, next_attempt_at,
        created_at, updated_at, completed_at)
      VALUES (${input.clientId}, ${id}, ${input.subscriptionId}, ${input.event.id}, ${input.event.type}, ${status}, 1, 1, ${input.now},
        ${input.attemptedAt}, ${input.now}, ${input.now})
      RETURNING client_id, id
    )
    INSERT INTO webhook_delivery_attempts (client_id, delivery_id, attempt_number, attempted_at, succeeded, http_status, latency_ms, response_body, error, worker, verdict)
    SELECT client_id, id, 1, ${input.attemptedAt}, ${input.accepted}, ${input.outcome.httpStatus}::int, ${input.outcome.latencyMs}::int,
      ${truncate(input.outcome.responseBody, responseBodyKeptChars)}, ${truncate(input.outcome.error, errorKeptChars)}, ${workerName}, ${truncate(input.verdict, 300)}
    FROM delivery
  `).execute(tx);
}
