/**
 * @openbaas/sdk: the OpenBaaS API, typed from its OpenAPI document (src/generated/openapi.ts,
 * made by openapi-typescript), called through openapi-fetch, with a thin layer for what generation
 * cannot do: the API key and base URL, an Idempotency-Key on every write, retries (with that key)
 * of 429, 5xx, busy 409s and failed connections, pages as async iteration, errors carrying their code, and webhook verification.
 */
import type { components } from './generated/openapi.js';

export { OpenBaaS, OpenBaaSConnectionError, createOpenBaaS, retryAfterSeconds, type OpenBaaSOptions, type ResponseBody } from './client.js';
export { OpenBaaSError, isOpenBaaSError, type ErrorBody, type ErrorCode, type ErrorDetail } from './errors.js';
export { paginate, type ListItem, type ListPath, type Page, type Pagination } from './pagination.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookVerificationReason,
} from './webhooks.js';
export type { components, operations, paths, webhooks } from './generated/openapi.js';

/** A shared schema of the OpenAPI document: `Schema<'Customer'>`, `Schema<'Wallet'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
