import type { ColumnType } from 'kysely';
import type { Json } from '../../platform/db/schema.js';

export interface WebhookSubscriptionsTable {
  client_id: string;
  id: string;
  name: string;
  url: string;
  event_types: string[];
  active: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  secret_rotated_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** Endpoint health (migration 0021): the start of the current unbroken run of failed attempts, by the client's clock. */
  failing_since: Date | null;
  /** Set when the subscription was disabled automatically (it is then not active either). */
  disabled_at: Date | null;
  disabled_reason: DisabledReason | null;
}

/** Why a subscription was disabled automatically: its endpoint failed every attempt for WEBHOOK_DISABLE_AFTER_MS. */
export type DisabledReason = 'ENDPOINT_FAILING';

export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED' | 'CANCELLED';

export interface WebhookDeliveriesTable {
  client_id: string;
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  test_data: Json<Record<string, unknown>> | null;
  status: DeliveryStatus;
  attempt_count: number;
  final_attempt: number | null;
  next_attempt_at: Date;
  lease_token: string | null;
  lease_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  /** Sandbox fault injection: the delay the first attempt was held back by (migration 0020); null when none. */
  injected_delay_ms: number | null;
}

export interface WebhookDeliveryAttemptsTable {
  client_id: string;
  delivery_id: string;
  attempt_number: number;
  attempted_at: Date;
  succeeded: boolean;
  http_status: number | null;
  latency_ms: number | null;
  response_body: string | null;
  error: string | null;
  worker: string;
  /** Sandbox fault injection: 'DUPLICATE' for the extra sending of a delivery that had succeeded (migration 0020). */
  injected_fault: InjectedFault | null;
  /** Cooperative decision requests (migration 0028): what the answer decided; null for ordinary events. */
  verdict: ColumnType<string | null, string | null | undefined, string | null>;
}

export type InjectedFault = 'DUPLICATE';

/** A client's webhook fault injection settings (sandbox only; migration 0020). */
export interface WebhookFaultsTable {
  client_id: string;
  duplicate_rate: number;
  reorder_window_ms: number;
  extra_delay_ms: number;
  created_at: Date;
  updated_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    webhook_subscriptions: WebhookSubscriptionsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
    webhook_faults: WebhookFaultsTable;
  }
}
