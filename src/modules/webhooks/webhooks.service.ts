import os from 'node:os';
import type { Deps } from '../../platform/deps.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { eventTypes, everyEventType, isEventType, renamedEventTypes, type SubscribedEventType } from './event-types.js';
import { testEventType } from './event-payloads.js';
import { recordEvent } from './events.store.js';
import { deliveryBody, errorKeptChars, responseBodyKeptChars, truncate } from './delivery-policy.js';
import { webhookHttpClient, type PostOutcome } from './webhook-http.js';
import { generateSecret, signedHeaders } from './webhook-signing.js';
import { webhookSecretBoxOf } from './webhook-secrets.js';
import { checkWebhookUrl } from './webhook-url.js';
import * as store from './webhooks.store.js';
import type { AttemptRow, DeliveryRow, SubscriptionRow } from './webhooks.store.js';
import type { InjectedFault } from './webhooks.tables.js';

export interface WebhookView {
  id: string;
  name: string;
  url: string;
  subscribedEventTypes: string[];
  active: boolean;
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
  const eventTypes = checkEventTypes(input.subscribedEventTypes);
  const url = await checkWebhookUrl(input.url, deps.config.mode);
  return { name: input.name, url, eventTypes, active: input.active ?? true };
}

export async function checkWebhookInput(deps: Deps, input: UpdateWebhookInput): Promise<CheckedWebhookInput> {
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

export function webhookView(row: SubscriptionRow): WebhookView {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    subscribedEventTypes: row.event_types,
    active: row.active,
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
  const updated = await store.updateSubscription(tx, context.clientId, current.id, {
    name: input.name ?? current.name,
    url: input.url ?? current.url,
    event_types: types,
    active,
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
export async function retryDelivery(tx: Tx, context: RequestContext, deliveryId: string): Promise<DeliveryView> {
  if (!isUuid(deliveryId)) throw notFound('Delivery');
  const delivery = await store.findDelivery(tx, context.clientId, deliveryId, { forUpdate: true });
  if (!delivery) throw notFound('Delivery');
  const subscription = await loadSubscription(tx, context.clientId, delivery.subscription_id);
  refuseDeleted(subscription, 'sent to');
  if (!subscription.active) throw new AppError('CONFLICT', 'This webhook is not active; activate it (PATCH active: true) before retrying.');
  if (delivery.status === 'PENDING' && delivery.lease_expires_at && delivery.lease_expires_at > context.now) {
    throw new AppError('CONFLICT', 'This delivery is being sent right now; look at its attempts in a moment.');
  }
  const updated = await store.updateDelivery(tx, context.clientId, delivery.id, {
    status: 'PENDING',
    next_attempt_at: context.now,
    final_attempt: delivery.status === 'PENDING' ? delivery.final_attempt : delivery.attempt_count + 1,
    completed_at: null,
    updated_at: context.now,
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
  const now = context.now;
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
  };
  await store.insertDelivery(tx, row);
  await store.insertAttempt(tx, attempt);
  return deliveryView(row, [attempt]);
}
