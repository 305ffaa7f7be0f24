import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { ApiKeysTable, ClientsTable } from './tenants.tables.js';
import './tenants.tables.js';

export type ClientRow = ClientsTable;
export type ApiKeyRow = ApiKeysTable;

export async function insertClient(tx: Tx | Db, row: ClientRow): Promise<void> {
  await tx.insertInto('clients').values(row).execute();
}

export async function insertApiKey(tx: Tx | Db, row: ApiKeyRow): Promise<void> {
  await tx.insertInto('api_keys').values(row).execute();
}

export async function findApiKeyByPrefix(db: Tx | Db, prefix: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst();
}

export async function findClient(db: Tx | Db, clientId: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('id', '=', clientId).executeTakeFirst();
}

export async function listClients(db: Tx | Db): Promise<ClientRow[]> {
  return db.selectFrom('clients').selectAll().orderBy('id').execute();
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
