import type { Numeric } from '../../platform/db/schema.js';

/** The request log (migration 0031): one row per authenticated API request. */
export interface ApiRequestsTable {
  client_id: string;
  id: string;
  trace_id: string;
  method: string;
  path: string;
  operation_id: string | null;
  status_code: number;
  duration_ms: Numeric;
  idempotency_key: string | null;
  error_code: string | null;
  /** The request's start by its client's clock. */
  created_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    api_requests: ApiRequestsTable;
  }
}
