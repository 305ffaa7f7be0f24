/**
 * The webhooks module's public surface. Other modules record events with recordEvent (inside the
 * transaction of the change); a later synchronous sender (cooperative card authorization) reuses
 * the Standard Webhooks signing and the outgoing HTTP client.
 */
export { addEvents, recordEvent, recordEvents, eventRecordOf, type EventRecord, type EventToRecord } from './events.store.js';
export { eventTypes, isEventType, type EventType } from './event-types.js';
export { eventPayloadSchemas } from './event-payloads.js';
export { signedHeaders, type SignedHeaders } from './webhook-signing.js';
export { sealPlaintextWebhookSecrets, webhookSecretBoxOf, WebhookSecretBox } from './webhook-secrets.js';
export { webhookHttpClient, WebhookHttpClient, type PostOptions, type PostOutcome } from './webhook-http.js';
export { DeliveryWorker, purgeOldDeliveries } from './delivery-worker.js';
export {
  decisionEndpointOf,
  decisionRequestOf,
  addDecisionDelivery,
  addDecisionRequestEvent,
  sendDecisionRequest,
  type DecisionEndpoint,
} from './decision-requests.js';
export { registerEventRoutes } from './events.routes.js';
export { registerWebhookRoutes } from './webhooks.routes.js';
export { registerWebhookFaultRoutes } from './webhook-faults.routes.js';
export { eventOpenApi, eventSchemaName, type EventOpenApi } from './event-openapi.js';
