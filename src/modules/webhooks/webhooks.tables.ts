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
}

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
}

declare module '../../platform/db/schema.js' {
  interface Database {
    webhook_subscriptions: WebhookSubscriptionsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  }
}
