/** migrations/0026_vault.sql */
export interface VaultSettingsTable {
  client_id: string;
  vault_id: string;
  route_id: string;
  secret_encrypted: string;
  secret_version: number;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  rotated_at: Date | null;
}

export type VaultCardField = 'pan' | 'cvv' | 'expiry';

export interface VaultAliasesTable {
  client_id: string;
  alias: string;
  card_id: string;
  field: VaultCardField;
  created_at: Date;
}

export type VaultAuditAction = 'TOKEN_ISSUED' | 'REVEALED';

export interface VaultAuditTable {
  client_id: string;
  id: string;
  action: VaultAuditAction;
  customer_id: string;
  card_id: string | null;
  fields: string[];
  token_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    vault_settings: VaultSettingsTable;
    vault_aliases: VaultAliasesTable;
    vault_audit: VaultAuditTable;
  }
}
