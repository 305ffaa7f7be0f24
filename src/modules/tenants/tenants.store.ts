import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { ApiKeysTable, ClientsTable } from './tenants.tables.js';
import './tenants.tables.js';

/** A client as the tenants module reads and writes it (its sandbox clock belongs to src/platform/client-clock.ts). */
export type ClientRow = Pick<ClientsTable, 'id' | 'name' | 'created_at'>;
export type ApiKeyRow = ApiKeysTable;

export async function insertClient(tx: Tx | Db, row: ClientRow): Promise<void> {
  await tx.insertInto('clients').values(row).execute();
}

export async function insertApiKey(tx: Tx | Db, row: ApiKeyRow): Promise<void> {
  await tx.insertInto('api_keys').values(row).execute();
}

/** The key with its client's clock offset (one query: every authenticated request needs both). */
export async function findApiKeyByPrefix(db: Tx | Db, prefix: string): Promise<(ApiKeyRow & { clock_offset_ms: string }) | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('clients', 'clients.id', 'api_keys.client_id')
    .selectAll('api_keys')
    .select(sql<string>`clients.clock_offset_ms::text`.as('clock_offset_ms'))
    .where('api_keys.prefix', '=', prefix)
    .executeTakeFirst();
}

/** A client's keys for listing: everything but the secret's hash (never selected). */
export function apiKeysQuery(db: Tx | Db, clientId: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'prefix', 'read_only', 'allowed_cidrs', 'created_at', 'revoked_at'])
    .where('client_id', '=', clientId);
}

export type ApiKeySummaryRow = Pick<ApiKeyRow, 'id' | 'prefix' | 'read_only' | 'allowed_cidrs' | 'created_at' | 'revoked_at'>;

export async function findClient(db: Tx | Db, clientId: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').select(['id', 'name', 'created_at']).where('id', '=', clientId).executeTakeFirst();
}

/** Every client, for listing (the admin API pages it). */
export function clientsQuery(db: Tx | Db) {
  return db.selectFrom('clients').select(['id', 'name', 'created_at']);
}

export async function listClients(db: Tx | Db): Promise<ClientRow[]> {
  return db.selectFrom('clients').select(['id', 'name', 'created_at']).orderBy('id').execute();
}

export async function countClients(db: Tx | Db): Promise<number> {
  const row = await db.selectFrom('clients').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function revokeApiKey(db: Tx | Db, prefix: string, now: Date): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('prefix', '=', prefix)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}
