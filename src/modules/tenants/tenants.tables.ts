export interface ClientsTable {
  id: string;
  name: string;
  created_at: Date;
  /** The sandbox clock's offset from the wall clock (bigint, read as a string); 0 in production. */
  clock_offset_ms: import('kysely').ColumnType<string, string | undefined, string>;
  /** While a clock advance runs its timers (wall time): the timer worker leaves the client alone. */
  clock_advance_lease_until: import('kysely').ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The Idempotency-Key of the advance holding the lease. */
  clock_advance_key: import('kysely').ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiKeysTable {
  client_id: string;
  id: string;
  prefix: string;
  secret_hash: Buffer;
  live: boolean;
  read_only: boolean;
  allowed_cidrs: string[];
  created_at: Date;
  revoked_at: Date | null;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    clients: ClientsTable;
    api_keys: ApiKeysTable;
  }
}
