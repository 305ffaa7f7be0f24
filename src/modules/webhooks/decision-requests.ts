import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { idAt } from '../../platform/ids.js';
import { deliveryBody, errorKeptChars, responseBodyKeptChars, truncate } from './delivery-policy.js';
import type { EventRecord } from './events.store.js';
import type { EventType } from './event-types.js';
import { assertEventPayload } from './event-payloads.js';
import { webhookHttpClient, type PostOutcome } from './webhook-http.js';
import { signedHeaders } from './webhook-signing.js';
import { webhookSecretBoxOf } from './webhook-secrets.js';
import { workerName } from './webhooks.service.js';
import * as store from './webhooks.store.js';

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
  const row = await tx
    .selectFrom('webhook_subscriptions')
    .select(['id', 'url', 'secret', 'previous_secret', 'previous_secret_expires_at'])
    .where('client_id', '=', clientId)
    .where('active', '=', true)
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`${type} = ANY (event_types)`)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (!row) return null;
  return { subscriptionId: row.id, url: row.url, secrets: webhookSecretBoxOf(deps).signingSecrets(clientId, row.id, row, now) };
}

/** Records a decision request's event (the event stream shows it; no delivery is queued). `id` may be drawn beforehand. */
export async function recordDecisionRequestEvent(tx: Tx, context: RequestContext, type: EventType, data: Record<string, unknown>, id = idAt(context.now)): Promise<EventRecord> {
  const event: EventRecord = { id, type, createdAt: context.now.toISOString(), data: { ...data, traceId: context.traceId } };
  assertEventPayload(type, event.data);
  await tx
    .insertInto('events')
    .values({ client_id: context.clientId, id: event.id, type, data: JSON.stringify(event.data), created_at: context.now })
    .execute();
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
  await store.insertDelivery(tx, {
    client_id: input.clientId,
    id,
    subscription_id: input.subscriptionId,
    event_id: input.event.id,
    event_type: input.event.type,
    test_data: null,
    status: input.accepted ? 'DELIVERED' : 'FAILED',
    attempt_count: 1,
    final_attempt: 1,
    next_attempt_at: input.now,
    lease_token: null,
    lease_expires_at: null,
    created_at: input.attemptedAt,
    updated_at: input.now,
    completed_at: input.now,
    injected_delay_ms: null,
  });
  await store.insertAttempt(tx, {
    client_id: input.clientId,
    delivery_id: id,
    attempt_number: 1,
    attempted_at: input.attemptedAt,
    succeeded: input.accepted,
    http_status: input.outcome.httpStatus,
    latency_ms: input.outcome.latencyMs,
    response_body: truncate(input.outcome.responseBody, responseBodyKeptChars),
    error: truncate(input.outcome.error, errorKeptChars),
    worker: workerName,
    injected_fault: null,
    verdict: truncate(input.verdict, 300),
  });
}
