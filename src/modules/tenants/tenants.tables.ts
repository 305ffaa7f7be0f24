export interface ClientsTable {
  id: string;
  name: string;
  created_at: Date;
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
