import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import { compiledOnce, compileOnly } from '../../platform/db/text-statements.js';
import type { RowsKind, WriteStatement } from '../../platform/db/write-statement.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { deliveryBody, errorKeptChars, responseBodyKeptChars, truncate } from './delivery-policy.js';
import { addEvents, eventsQuery, type EventRecord } from './events.store.js';
import { assert } from '../../platform/assert.js';
import type { EventType } from './event-types.js';
import { webhookHttpClient, type PostOutcome } from './webhook-http.js';
import { signedHeaders } from './webhook-signing.js';
import { webhookSecretBoxOf } from './webhook-secrets.js';
import { workerName } from './webhooks.service.js';

/**
 * Synchronous decision requests (contract §12.4): COOP_AUTH_0100 and COOP_AUTH_0200 are not
 * queued for the delivery worker like other events. The caller records the event (in the
 * transaction that reserves the money, `addDecisionRequestEvent`), sends it once with
 * `sendDecisionRequest` outside any transaction, and records the one attempt with
 * `addDecisionDelivery` in the transaction that applies the answer, so the delivery log shows
 * every request with its answer and verdict. They are never retried: the network's window is too
 * short.
 */

/** The subscription that answers decision requests of one type. */
export interface DecisionEndpoint {
  subscriptionId: string;
  url: string;
  /** Signing secrets, newest first (a rotated secret still signs during its overlap). */
  secrets: string[];
}

const decisionEndpointStatement = compiledOnce((clientId: string, type: string) =>
  compileOnly
    .selectFrom('webhook_subscriptions')
    .select(['id', 'url', 'secret', 'previous_secret', 'previous_secret_expires_at'])
    .where('client_id', '=', clientId)
    .where('active', '=', true)
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`${type} = ANY (event_types)`)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1),
);

/**
 * The client's active subscription that names `type` explicitly (a `*` subscription is not asked
 * to decide: it did not sign up to answer in real time). With several, the oldest answers.
 */
export async function decisionEndpointOf(tx: Tx, deps: Pick<Deps, 'config' | 'database'>, clientId: string, type: EventType, now: Date): Promise<DecisionEndpoint | null> {
  // Prepared and compiled once, as the decision path's other statements: one runs for every decision request.
  const row = (await decisionEndpointStatement(clientId, type).execute(tx)).rows[0];
  if (!row) return null;
  return { subscriptionId: row.id, url: row.url, secrets: webhookSecretBoxOf(deps).signingSecrets(clientId, row.id, row, now) };
}

/**
 * Adds a decision request's event to `write` (the event stream shows it; no delivery is queued),
 * which the caller sends. `id` may be drawn beforehand.
 */
export function addDecisionRequestEvent(write: WriteStatement, context: RequestContext, type: EventType, data: Record<string, unknown>, id?: string): EventRecord {
  const [event] = addEvents(write, [{ context, type, data, ...(id === undefined ? {} : { id }) }], { deliveries: false });
  assert(event, 'one event, one record');
  return event;
}

/**
 * A decision request's event as recorded (its type, moment and data), or undefined: what a
 * request's own second transaction, should it never come, is decided from later (the cards
 * module's `card.coop-decision` timer reads the message back from its `data.raw`).
 */
export async function decisionRequestOf(tx: Tx, clientId: string, id: string): Promise<EventRecord | undefined> {
  // The read of GET /v1/events/:id.
  const row = await eventsQuery(tx, clientId).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, type: row.type as EventType, createdAt: row.created_at.toISOString(), data: row.data as EventRecord['data'] };
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
 * Adds the delivery log entry of a decision request to `write`, which the caller sends: one
 * delivery, DELIVERED when the answer was used and FAILED when the stand-in decided, with its
 * single attempt and `verdict`.
 */
export function addDecisionDelivery(
  write: WriteStatement,
  input: { clientId: string; subscriptionId: string; event: EventRecord; attemptedAt: Date; now: Date; outcome: PostOutcome; accepted: boolean; verdict: string },
): void {
  write.addRows(decisionDeliveries, [input]);
}

type DecisionDelivery = Parameters<typeof addDecisionDelivery>[1];

/** Decision request deliveries, each with its one attempt (the attempts' reference to their delivery is checked at the statement's end). */
const decisionDeliveries: RowsKind<DecisionDelivery> = {
  name: 'decision_deliveries',
  parts: (rows) => {
    const column = <T>(pick: (row: DecisionDelivery) => T) => rows.map(pick);
    const ids = column((row) => decisionDeliveryIdOf(row.event.id));
    return [
      {
        name: 'decision_deliveries',
        statement: sql`
          INSERT INTO webhook_deliveries (client_id, id, subscription_id, event_id, event_type, status, attempt_count, final_attempt, next_attempt_at,
            created_at, updated_at, completed_at)
          SELECT client_id, id, subscription_id, event_id, event_type, status, 1, 1, now_at, attempted_at, now_at, now_at
          FROM unnest(${column((row) => row.clientId)}::uuid[], ${ids}::uuid[], ${column((row) => row.subscriptionId)}::uuid[], ${column((row) => row.event.id)}::uuid[],
            ${column((row) => row.event.type)}::text[], ${column((row) => (row.accepted ? 'DELIVERED' : 'FAILED'))}::text[], ${column((row) => row.now)}::timestamptz[],
            ${column((row) => row.attemptedAt)}::timestamptz[])
            AS d (client_id, id, subscription_id, event_id, event_type, status, now_at, attempted_at)`,
      },
      {
        name: 'decision_delivery_attempts',
        statement: sql`
          INSERT INTO webhook_delivery_attempts (client_id, delivery_id, attempt_number, attempted_at, succeeded, http_status, latency_ms, response_body, error, worker, verdict)
          SELECT client_id, delivery_id, 1, attempted_at, succeeded, http_status, latency_ms, response_body, error, ${workerName}, verdict
          FROM unnest(${column((row) => row.clientId)}::uuid[], ${ids}::uuid[], ${column((row) => row.attemptedAt)}::timestamptz[], ${column((row) => row.accepted)}::boolean[],
            ${column((row) => row.outcome.httpStatus)}::int[], ${column((row) => row.outcome.latencyMs)}::int[],
            ${column((row) => truncate(row.outcome.responseBody, responseBodyKeptChars))}::text[], ${column((row) => truncate(row.outcome.error, errorKeptChars))}::text[],
            ${column((row) => truncate(row.verdict, 300))}::text[])
            AS a (client_id, delivery_id, attempted_at, succeeded, http_status, latency_ms, response_body, error, verdict)`,
      },
    ];
  },
};
