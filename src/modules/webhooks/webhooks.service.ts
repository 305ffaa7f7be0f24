import os from 'node:os';
import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { assertPlainText } from '../../platform/text.js';
import { eventTypes, everyEventType, isEventType, renamedEventTypes, type SubscribedEventType } from './event-types.js';
import { testEventType } from './event-payloads.js';
import { recordEvent } from './events.store.js';
import { deliveryBody, errorKeptChars, finalAttemptOfNewSchedule, responseBodyKeptChars, truncate } from './delivery-policy.js';
import { webhookHttpClient, type PostOutcome } from './webhook-http.js';
import { generateSecret, signedHeaders } from './webhook-signing.js';
import { webhookSecretBoxOf } from './webhook-secrets.js';
import { checkWebhookUrl } from './webhook-url.js';
import * as store from './webhooks.store.js';
import type { AttemptRow, DeliveryRow, SubscriptionRow } from './webhooks.store.js';
import type { DisabledReason, InjectedFault } from './webhooks.tables.js';

/**
 * ACTIVE: receives its events; PAUSED: made inactive by the client (PATCH active: false);
 * DISABLED: made inactive by the platform because its endpoint kept failing (disabledReason);
 * DELETED: deleted. Only ACTIVE has `active: true`.
 */
export type WebhookStatus = 'ACTIVE' | 'PAUSED' | 'DISABLED' | 'DELETED';

export interface WebhookView {
  id: string;
  name: string;
  url: string;
  subscribedEventTypes: string[];
  active: boolean;
  status: WebhookStatus;
  disabledReason: DisabledReason | null;
  disabledAt: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
  secretRotatedAt: string | null;
  previousSecretExpiresAt: string | null;
}

export interface AttemptView {
  attempt: number;
  attemptedAt: string;
  succeeded: boolean;
  httpStatus: number | null;
  latencyMs: number | null;
  responseBody: string | null;
  error: string | null;
  injectedFault: InjectedFault | null;
  /** Cooperative decision requests only: what the answer decided. */
  verdict: string | null;
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  test: boolean;
  status: DeliveryRow['status'];
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  attempts: AttemptView[];
}

export interface CreateWebhookInput {
  name: string;
  url: string;
  subscribedEventTypes: string[];
  active?: boolean;
}

export type UpdateWebhookInput = Partial<CreateWebhookInput>;

/** Input whose URL and event types were checked (outside any transaction: the URL check may resolve DNS). */
export interface CheckedWebhookInput {
  name?: string;
  url?: string;
  eventTypes?: SubscribedEventType[];
  active?: boolean;
}

export interface NewWebhookInput {
  name: string;
  url: string;
  eventTypes: SubscribedEventType[];
  active: boolean;
}

export async function checkNewWebhookInput(deps: Deps, input: CreateWebhookInput): Promise<NewWebhookInput> {
  assertPlainText(input.name, 'name', { notBlank: true });
  const eventTypes = checkEventTypes(input.subscribedEventTypes);
  const url = await checkWebhookUrl(input.url, deps.config.mode);
  return { name: input.name, url, eventTypes, active: input.active ?? true };
}

export async function checkWebhookInput(deps: Deps, input: UpdateWebhookInput): Promise<CheckedWebhookInput> {
  assertPlainText(input.name, 'name', { notBlank: true });
  // Event types first: they need no I/O and their errors are the most common.
  const eventTypes = input.subscribedEventTypes === undefined ? undefined : checkEventTypes(input.subscribedEventTypes);
  const url = input.url === undefined ? undefined : await checkWebhookUrl(input.url, deps.config.mode);
  return {
    ...(input.name === undefined ? {} : { name: input.name }),
    ...(url === undefined ? {} : { url }),
    ...(eventTypes === undefined ? {} : { eventTypes }),
    ...(input.active === undefined ? {} : { active: input.active }),
  };
}

/** Subscriptions a client may have at once (deleted ones do not count). */
export const subscriptionsPerClientMax = 100;

/** Names this process in the attempt log. */
export const workerName = `${os.hostname()}:${process.pid}`.slice(0, 200);

export function webhookStatusOf(row: Pick<SubscriptionRow, 'active' | 'deleted_at' | 'disabled_at'>): WebhookStatus {
  if (row.deleted_at) return 'DELETED';
  if (row.disabled_at) return 'DISABLED';
  return row.active ? 'ACTIVE' : 'PAUSED';
}

export function webhookView(row: SubscriptionRow): WebhookView {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    subscribedEventTypes: row.event_types,
    active: row.active,
    status: webhookStatusOf(row),
    disabledReason: row.deleted_at ? null : row.disabled_reason,
    disabledAt: row.deleted_at ? null : (row.disabled_at?.toISOString() ?? null),
    failingSince: row.failing_since?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    deletedAt: row.deleted_at?.toISOString() ?? null,
    secretRotatedAt: row.secret_rotated_at?.toISOString() ?? null,
    previousSecretExpiresAt: row.previous_secret_expires_at?.toISOString() ?? null,
  };
}

function attemptView(row: AttemptRow): AttemptView {
  return {
    attempt: row.attempt_number,
    attemptedAt: row.attempted_at.toISOString(),
    succeeded: row.succeeded,
    httpStatus: row.http_status,
    latencyMs: row.latency_ms,
    responseBody: row.response_body,
    error: row.error,
    injectedFault: row.injected_fault,
    verdict: row.verdict,
  };
}

export function deliveryView(row: DeliveryRow, attempts: readonly AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    webhookId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type,
    test: row.event_type === testEventType,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === 'PENDING' ? row.next_attempt_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
    attempts: attempts.map(attemptView),
  };
}

/**
 * Every type must be in the catalogue; a renamed legacy name is refused with its replacement.
 * `*` (every event type, including those added later) must stand alone.
 */
export function checkEventTypes(types: readonly string[]): SubscribedEventType[] {
  if (types.includes(everyEventType)) {
    if (types.length > 1) {
      throw validationError('subscribedEventTypes', `"${everyEventType}" subscribes to every event type and must be the only entry`);
    }
    return [everyEventType];
  }
  const details: { field: string; message: string }[] = [];
  types.forEach((type, index) => {
    if (isEventType(type)) return;
    const renamed = renamedEventTypes[type];
    details.push({
      field: `subscribedEventTypes[${index}]`,
      message: renamed
        ? `${type} was renamed ${renamed}; subscribe to ${renamed}`
        : `${type} is not an event type (the catalogue is in the webhooks documentation)`,
    });
  });
  if (details.length > 0) {
    throw new AppError('UNKNOWN_EVENT_TYPE', `Unknown event type: ${details.map((detail) => detail.message).join('; ')}.`, { details });
  }
  // Stored in catalogue order, so equal sets read the same.
  return eventTypes.filter((type) => types.includes(type));
}

async function loadSubscription(tx: Tx, clientId: string, id: string): Promise<SubscriptionRow> {
  if (!isUuid(id)) throw notFound('Webhook');
  const row = await store.findSubscription(tx, clientId, id, { forUpdate: true });
  if (!row) throw notFound('Webhook');
  return row;
}

function refuseDeleted(row: SubscriptionRow, action: string): void {
  if (row.deleted_at) throw new AppError('CONFLICT', `This webhook was deleted on ${row.deleted_at.toISOString()} and cannot be ${action}.`);
}

export async function createWebhook(
  tx: Tx,
  context: RequestContext,
  deps: Pick<Deps, 'config' | 'database'>,
  input: NewWebhookInput,
): Promise<WebhookView & { secret: string }> {
  // The client's row is locked so that concurrent creations count one after the other.
  await tx.selectFrom('clients').select('id').where('id', '=', context.clientId).forNoKeyUpdate().executeTakeFirst();
  const existing = await store.countLiveSubscriptions(tx, context.clientId);
  if (existing >= subscriptionsPerClientMax) {
    throw new AppError(
      'WEBHOOK_LIMIT_REACHED',
      `A client can have at most ${subscriptionsPerClientMax} webhook subscriptions; delete one you no longer use.`,
    );
  }
  if (input.active) await refuseSecondDecisionEndpoint(tx, context.clientId, input.eventTypes, undefined);
  const id = idAt(context.now);
  const secret = generateSecret();
  const row: SubscriptionRow = {
    client_id: context.clientId,
    id,
    name: input.name,
    url: input.url,
    event_types: input.eventTypes,
    active: input.active,
    secret: webhookSecretBoxOf(deps).seal(context.clientId, id, secret),
    previous_secret: null,
    previous_secret_expires_at: null,
    secret_rotated_at: null,
    created_at: context.now,
    updated_at: context.now,
    deleted_at: null,
    failing_since: null,
    disabled_at: null,
    disabled_reason: null,
  };
  await store.insertSubscription(tx, row);
  await recordEvent(tx, context, 'WEBHOOK_CREATED', { webhookId: row.id });
  return { ...webhookView(row), secret };
}

export async function updateWebhook(tx: Tx, context: RequestContext, id: string, input: CheckedWebhookInput): Promise<WebhookView> {
  const current = await loadSubscription(tx, context.clientId, id);
  refuseDeleted(current, 'changed');
  const types = input.eventTypes ?? current.event_types;
  const active = input.active ?? current.active;
  if (active && decisionTypesOf(types).length > 0) {
    // As creation does: the client's row orders the checks of concurrent changes.
    await tx.selectFrom('clients').select('id').where('id', '=', context.clientId).forNoKeyUpdate().executeTakeFirst();
    await refuseSecondDecisionEndpoint(tx, context.clientId, types, current.id);
  }
  const updated = await store.updateSubscription(tx, context.clientId, current.id, {
    name: input.name ?? current.name,
    url: input.url ?? current.url,
    event_types: types,
    active,
    // Setting `active` (either way) on a paused or disabled subscription is the client taking
    // over: the marks of an automatic disable go, and the endpoint starts a fresh health record
    // (a new run of failures must last the whole period again).
    ...(input.active !== undefined && !current.active ? { failing_since: null, disabled_at: null, disabled_reason: null } : {}),
    // A new endpoint of an active subscription starts a fresh health record too: the old
    // endpoint's run of failures says nothing about it (its first failure disabled it at once).
    ...(current.active && active && input.url !== undefined && input.url !== current.url ? { failing_since: null } : {}),
    updated_at: context.now,
  });
  if (!active) {
    await store.cancelPendingDeliveries(tx, context.clientId, current.id, context.now);
  } else if (input.eventTypes !== undefined && !types.includes(everyEventType)) {
    await store.cancelPendingDeliveries(tx, context.clientId, current.id, context.now, types);
  }
  await recordEvent(tx, context, 'WEBHOOK_UPDATED', { webhookId: current.id });
  return webhookView(updated);
}

/** Soft delete: the record stays readable with deletedAt; deleting it again changes nothing. */
export async function deleteWebhook(tx: Tx, context: RequestContext, id: string): Promise<{ view: WebhookView; deletedNow: boolean }> {
  const current = await loadSubscription(tx, context.clientId, id);
  if (current.deleted_at) return { view: webhookView(current), deletedNow: false };
  const updated = await store.updateSubscription(tx, context.clientId, current.id, {
    active: false,
    deleted_at: context.now,
    updated_at: context.now,
  });
  await store.cancelPendingDeliveries(tx, context.clientId, current.id, context.now);
  await recordEvent(tx, context, 'WEBHOOK_DELETED', { webhookId: current.id });
  return { view: webhookView(updated), deletedNow: true };
}

/**
 * A new secret, returned once. During the overlap deliveries carry two signatures (new and
 * previous), so receivers can switch without losing a message. Rotating again during an overlap
 * drops the oldest secret: only the one just replaced keeps signing.
 */
export async function rotateSecret(
  tx: Tx,
  context: RequestContext,
  deps: Deps,
  id: string,
): Promise<WebhookView & { secret: string }> {
  const current = await loadSubscription(tx, context.clientId, id);
  refuseDeleted(current, 'rotated');
  const overlapMs = deps.config.webhookSecretOverlapMs;
  const secret = generateSecret();
  const updated = await store.updateSubscription(tx, context.clientId, current.id, {
    secret: webhookSecretBoxOf(deps).seal(context.clientId, current.id, secret),
    previous_secret: overlapMs > 0 ? current.secret : null,
    previous_secret_expires_at: overlapMs > 0 ? new Date(context.now.getTime() + overlapMs) : null,
    secret_rotated_at: context.now,
    updated_at: context.now,
  });
  await recordEvent(tx, context, 'WEBHOOK_UPDATED', { webhookId: current.id });
  return { ...webhookView(updated), secret };
}

/**
 * Endpoint health: disables a subscription whose endpoint has failed every attempt for
 * WEBHOOK_DISABLE_AFTER_MS by the client's clock (context.now). The delivery worker calls it, in a
 * transaction of its own, for the subscriptions its outcome statement found due; the rules are
 * checked again here under the row lock, so a client who paused, resumed or deleted the
 * subscription meanwhile, or an attempt that succeeded meanwhile, wins. The pending deliveries
 * are cancelled (replay brings them back) and WEBHOOK_UPDATED is recorded for the client's other
 * subscriptions. Returns whether it disabled the subscription.
 */
export async function disableFailingEndpoint(
  tx: Tx,
  context: RequestContext,
  config: Pick<Deps['config'], 'webhookDisableAfterMs'>,
  subscriptionId: string,
): Promise<boolean> {
  const current = await store.findSubscription(tx, context.clientId, subscriptionId, { forUpdate: true });
  if (!current?.active || current.deleted_at || !current.failing_since) return false;
  if (!endpointFailedLongEnough(config, current.failing_since, context.now)) return false;
  await store.updateSubscription(tx, context.clientId, current.id, {
    active: false,
    disabled_at: context.now,
    disabled_reason: 'ENDPOINT_FAILING',
    updated_at: context.now,
  });
  await store.cancelPendingDeliveries(tx, context.clientId, current.id, context.now);
  await recordEvent(tx, context, 'WEBHOOK_UPDATED', { webhookId: current.id });
  return true;
}

/** True once a run of failures that began at `failingSince` has lasted the whole period at `now` (0 never disables). */
export function endpointFailedLongEnough(config: Pick<Deps['config'], 'webhookDisableAfterMs'>, failingSince: Date, now: Date): boolean {
  return config.webhookDisableAfterMs > 0 && now.getTime() - failingSince.getTime() >= config.webhookDisableAfterMs;
}

/** Events one replay request schedules at most; a request that finds more says so (`more`) and is sent again. */
export const replayEventsMax = 10_000;

export interface ReplayInput {
  since: Date;
  until?: Date;
}

export interface ReplayView {
  webhookId: string;
  since: string;
  until: string;
  scheduled: number;
  more: boolean;
}

/**
 * Replay of what an endpoint missed: every event of the client recorded in [since, until) (by the
 * client's clock; without until, or with one in the future: from since to now, now included), or
 * whose delivery to this subscription failed or was cancelled in that window (so a replay from
 * failingSince or disabledAt takes back the events those failures and that disable left behind),
 * that the subscription subscribes to now, that was
 * recorded while the subscription existed, and that it has not received: its delivery is FAILED
 * or CANCELLED (brought back to PENDING with a new retry schedule and the same webhook-id) or
 * missing (created: the subscription was disabled or paused when the event happened). Events
 * delivered or on their way are left alone, so a replay never sends an event a second time and
 * repeating one schedules nothing new. At most replayEventsMax events per request, oldest first.
 */
export async function replayWebhook(
  tx: Tx,
  context: RequestContext,
  deps: Pick<Deps, 'config' | 'clock'>,
  id: string,
  input: ReplayInput,
): Promise<ReplayView> {
  const current = await loadSubscription(tx, context.clientId, id);
  refuseDeleted(current, 'replayed');
  if (!current.active) {
    throw new AppError(
      'CONFLICT',
      `This webhook is ${webhookStatusOf(current)}; make it active (PATCH active: true) before replaying what it missed.`,
    );
  }
  // A window that reaches now takes now in: an event recorded in this very millisecond counts.
  const untilNow = !input.until || input.until > context.now;
  const until = untilNow ? context.now : (input.until ?? context.now);
  if (untilNow ? input.since > until : input.since >= until) {
    throw validationError('since', untilNow ? `must not be after now (${until.toISOString()})` : `must be before until (${until.toISOString()})`);
  }
  const from = input.since > current.created_at ? input.since : current.created_at;
  const result = await sql<{ scheduled: string; found: string }>`
    WITH candidates AS (
      SELECT e.id AS event_id
      FROM events e
      WHERE e.client_id = ${context.clientId} AND e.created_at >= ${from}
        AND (e.created_at < ${until} OR (${untilNow}::boolean AND e.created_at = ${until}))
      UNION
      -- A delivery that failed or was cancelled in the window missed its event then, whenever the
      -- event was recorded (webhook_deliveries_missed, migration 0043).
      SELECT d.event_id
      FROM webhook_deliveries d
      WHERE d.client_id = ${context.clientId} AND d.subscription_id = ${current.id} AND d.status IN ('FAILED', 'CANCELLED')
        AND d.completed_at >= ${input.since}
        AND (d.completed_at < ${until} OR (${untilNow}::boolean AND d.completed_at = ${until}))
    ), missed AS (
      SELECT e.client_id, e.id, e.type, e.created_at
      FROM candidates k
      JOIN events e ON e.client_id = ${context.clientId} AND e.id = k.event_id
      WHERE e.created_at >= ${current.created_at}
        AND (e.type = ANY (${current.event_types}::text[]) OR '*' = ANY (${current.event_types}::text[]))
        -- A decision request was asked once, at authorization time; its answer no longer decides anything.
        AND e.type <> ALL (${[...decisionRequestTypes]}::text[])
        AND NOT EXISTS (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.client_id = e.client_id AND d.subscription_id = ${current.id} AND d.event_id = e.id
            AND d.status IN ('PENDING', 'DELIVERED'))
      ORDER BY e.created_at, e.id
      LIMIT ${replayEventsMax + 1}::int
    ), chosen AS (
      SELECT * FROM missed ORDER BY created_at, id LIMIT ${replayEventsMax}::int
    ), scheduled AS (
      INSERT INTO webhook_deliveries (client_id, id, subscription_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
      SELECT c.client_id, openbaas_delivery_id(c.id, 0), ${current.id}, c.id, c.type, 'PENDING', ${context.now}, ${context.now}, ${context.now}
      FROM chosen c
      ON CONFLICT (client_id, subscription_id, event_id) DO UPDATE SET
        status = 'PENDING', next_attempt_at = EXCLUDED.next_attempt_at,
        final_attempt = webhook_deliveries.attempt_count + ${finalAttemptOfNewSchedule(deps.config, 0)}::int,
        completed_at = NULL, lease_token = NULL, lease_expires_at = NULL, updated_at = EXCLUDED.updated_at
      WHERE webhook_deliveries.status IN ('FAILED', 'CANCELLED')
        -- One cancelled while it was being sent is still being sent until its attempt ends (it
        -- keeps its claim, whose expiry is in real time): the endpoint may acknowledge it.
        AND (webhook_deliveries.lease_expires_at IS NULL OR webhook_deliveries.lease_expires_at <= ${deps.clock.now()}::timestamptz)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM scheduled)::text AS scheduled, (SELECT count(*) FROM missed)::text AS found
  `.execute(tx);
  const counts = result.rows[0];
  return {
    webhookId: current.id,
    since: input.since.toISOString(),
    until: until.toISOString(),
    scheduled: Number(counts?.scheduled ?? 0),
    more: Number(counts?.found ?? 0) > replayEventsMax,
  };
}

export async function getWebhook(deps: Deps, clientId: string, id: string): Promise<SubscriptionRow> {
  if (!isUuid(id)) throw notFound('Webhook');
  const row = await store.findSubscription(deps.db, clientId, id);
  if (!row) throw notFound('Webhook');
  return row;
}

/**
 * Manual retry ("replay") of a delivery in any state but in flight: it is sent again as soon as
 * a worker picks it up, with the same webhook-id. A delivery that had finished (delivered,
 * failed or cancelled) gets one more attempt and no automatic retries after it; one still
 * waiting for an automatic retry is simply brought forward.
 */
/** Cooperative decision requests (contract §12.4): synchronous, never retried, one endpoint per type. */
const decisionRequestTypes: ReadonlySet<string> = new Set(['COOP_AUTH_0100', 'COOP_AUTH_0200']);

function decisionTypesOf(types: readonly string[]): string[] {
  return types.filter((type) => decisionRequestTypes.has(type));
}

/**
 * At most one active subscription per decision type (contract §12.4, as Increase): a decision
 * has one answer. 409 COOP_AUTH_ENDPOINT_EXISTS naming the subscription that already answers.
 */
async function refuseSecondDecisionEndpoint(tx: Tx, clientId: string, types: readonly string[], exceptId: string | undefined): Promise<void> {
  const decisionTypes = decisionTypesOf(types);
  if (decisionTypes.length === 0) return;
  let query = tx
    .selectFrom('webhook_subscriptions')
    .select(['id', 'event_types'])
    .where('client_id', '=', clientId)
    .where('active', '=', true)
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`event_types && ${decisionTypes}::text[]`);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  const other = await query.executeTakeFirst();
  if (!other) return;
  const taken = decisionTypes.filter((type) => other.event_types.includes(type));
  throw new AppError('COOP_AUTH_ENDPOINT_EXISTS', `Webhook ${other.id} already answers ${taken.join(' and ')}: a decision request has one endpoint. Remove the type there (or pause it) first.`, {
    details: [{ field: 'subscribedEventTypes', message: `${taken.join(', ')} already answered by webhook ${other.id}` }],
  });
}

export async function retryDelivery(tx: Tx, context: RequestContext, deliveryId: string, wallNow: Date): Promise<DeliveryView> {
  if (!isUuid(deliveryId)) throw notFound('Delivery');
  const delivery = await store.findDelivery(tx, context.clientId, deliveryId, { forUpdate: true });
  if (!delivery) throw notFound('Delivery');
  if (decisionRequestTypes.has(delivery.event_type)) {
    // Sending it late would ask for a decision the card network stopped waiting for long ago.
    throw new AppError('CONFLICT', `A ${delivery.event_type} decision request is sent once, at authorization time; it cannot be retried.`);
  }
  const subscription = await loadSubscription(tx, context.clientId, delivery.subscription_id);
  refuseDeleted(subscription, 'sent to');
  if (!subscription.active) throw new AppError('CONFLICT', 'This webhook is not active; activate it (PATCH active: true) before retrying.');
  // A worker's lease is in real time, not the client's (sandbox) time. A delivery cancelled while it
  // was being sent keeps its lease until its attempt ends: it is still being sent.
  if (delivery.lease_expires_at && delivery.lease_expires_at > wallNow) {
    throw new AppError('CONFLICT', 'This delivery is being sent right now; look at its attempts in a moment.');
  }
  const updated = await store.updateDelivery(tx, context.clientId, delivery.id, {
    status: 'PENDING',
    next_attempt_at: context.now,
    final_attempt: delivery.status === 'PENDING' ? delivery.final_attempt : delivery.attempt_count + 1,
    completed_at: null,
    updated_at: context.now,
    // A manual retry is never held back by fault injection, even of a delivery never attempted yet.
    injected_delay_ms: delivery.injected_delay_ms ?? 0,
  });
  const attempts = await store.attemptsOf(tx, context.clientId, [delivery.id]);
  return deliveryView(updated, attempts.get(delivery.id) ?? []);
}

export interface TestSend {
  subscription: SubscriptionRow;
  eventId: string;
  deliveryId: string;
  createdAt: Date;
  data: Record<string, unknown>;
  attemptedAt: Date;
  outcome: PostOutcome;
}

/**
 * Sends a WEBHOOK_TEST event to the subscription now, outside any transaction, signed like any
 * delivery. The caller records the result (recordTestDelivery) in its write transaction.
 */
export async function sendTestEvent(deps: Deps, context: RequestContext, id: string): Promise<TestSend> {
  const subscription = await getWebhook(deps, context.clientId, id);
  refuseDeleted(subscription, 'tested');
  const eventId = idAt(context.now);
  const data = { webhookId: subscription.id, test: true, traceId: context.traceId };
  const body = deliveryBody({ id: eventId, type: testEventType, createdAt: context.now.toISOString(), data });
  const headers = signedHeaders(webhookSecretBoxOf(deps).signingSecrets(subscription.client_id, subscription.id, subscription, context.now), eventId, Math.floor(Date.now() / 1000), body);
  const deliveryId = idAt(context.now);
  const outcome = await webhookHttpClient(deps.config.mode).post(
    subscription.url,
    { ...headers, 'openbaas-delivery-id': deliveryId, 'openbaas-attempt': '1' },
    body,
    { timeoutMs: deps.config.webhookTimeoutMs },
  );
  return { subscription, eventId, deliveryId, createdAt: context.now, data, attemptedAt: context.now, outcome };
}

export async function recordTestDelivery(tx: Tx, context: RequestContext, sent: TestSend): Promise<DeliveryView> {
  const subscription = await loadSubscription(tx, context.clientId, sent.subscription.id);
  refuseDeleted(subscription, 'tested');
  // Finished when its one attempt ended, as a worker's delivery is (until 2026-12-06 the request's
  // start: a test that timed out after 10 s showed completedAt equal to attemptedAt; found by an audit).
  const now = new Date(sent.attemptedAt.getTime() + sent.outcome.latencyMs);
  const row: DeliveryRow = {
    client_id: context.clientId,
    id: sent.deliveryId,
    subscription_id: subscription.id,
    event_id: sent.eventId,
    event_type: testEventType,
    test_data: sent.data,
    status: sent.outcome.ok ? 'DELIVERED' : 'FAILED',
    attempt_count: 1,
    final_attempt: 1,
    next_attempt_at: now,
    lease_token: null,
    lease_expires_at: null,
    created_at: sent.createdAt,
    updated_at: now,
    completed_at: now,
    injected_delay_ms: null,
  };
  const attempt: AttemptRow = {
    client_id: context.clientId,
    delivery_id: row.id,
    attempt_number: 1,
    attempted_at: sent.attemptedAt,
    succeeded: sent.outcome.ok,
    http_status: sent.outcome.httpStatus,
    latency_ms: sent.outcome.latencyMs,
    response_body: truncate(sent.outcome.responseBody, responseBodyKeptChars),
    error: truncate(sent.outcome.error, errorKeptChars),
    worker: workerName,
    injected_fault: null,
    verdict: null,
  };
  await store.insertDelivery(tx, row);
  await store.insertAttempt(tx, attempt);
  return deliveryView(row, [attempt]);
}
