import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import { withTransaction, type Tx } from '../../platform/db/transaction.js';
import { isUuid, newId } from '../../platform/ids.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { assertPlainText, isBlank } from '../../platform/text.js';
import { apiKeyPattern, apiKeyPrefix, generateApiKey, hashApiKey, hashesMatch, parseCidr } from './api-key.js';
import * as store from './tenants.store.js';

export interface ClientView {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyView {
  /** The full key: shown once, never stored. */
  key: string;
  prefix: string;
  clientId: string;
  readOnly: boolean;
  allowedCidrs: string[];
  createdAt: string;
}

/** A key as GET /v1/api-keys lists it: never the key itself nor its hash. */
export interface ApiKeySummaryView {
  prefix: string;
  readOnly: boolean;
  allowedCidrs: string[];
  createdAt: string;
  revokedAt: string | null;
  /** The key making the request. */
  current: boolean;
}

export function apiKeySummaryView(row: store.ApiKeySummaryRow, currentKeyId: string): ApiKeySummaryView {
  return {
    prefix: row.prefix,
    readOnly: row.read_only,
    allowedCidrs: row.allowed_cidrs,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
    current: row.id === currentKeyId,
  };
}

/** A key as the admin API lists it: whose it is and its state, never the key itself nor its hash. */
export interface AdminApiKeyView {
  prefix: string;
  clientId: string;
  readOnly: boolean;
  allowedCidrs: string[];
  createdAt: string;
  revokedAt: string | null;
}

export function adminApiKeyView(row: store.ApiKeySummaryRow, clientId: string): AdminApiKeyView {
  const { current: _current, ...view } = apiKeySummaryView(row, '');
  return { ...view, clientId };
}

export interface CreateKeyOptions {
  readOnly?: boolean;
  allowedCidrs?: string[];
  /** A key chosen by the operator (OPENBAAS_API_KEY) instead of a generated one. */
  fixedKey?: string;
  /** How a refused CIDR is named: the CLI's option; by default the HTTP field `allowedCidrs[i]`. */
  cidrField?: string;
}

export const clientNameLengthMax = 200;
const bootstrapLockId = 7_300_151_002;

function clientView(row: store.ClientRow): ClientView {
  return { id: row.id, name: row.name, createdAt: row.created_at.toISOString() };
}

export function validateClientName(name: unknown): string {
  if (typeof name !== 'string' || isBlank(name) || name.length > clientNameLengthMax) {
    throw validationError('name', `must be a non-empty string of at most ${clientNameLengthMax} characters`);
  }
  assertPlainText(name, 'name');
  return name.trim();
}

/** Creates a client and runs every module's client seeder in the same transaction. */
export async function createClientInTx(tx: Tx, deps: Deps, name: string): Promise<ClientView> {
  const now = deps.clock.now();
  const row: store.ClientRow = { id: newId(deps.clock), name: validateClientName(name), created_at: now };
  await store.insertClient(tx, row);
  for (const seed of deps.clientSeeders) await seed(tx, row.id, now, deps);
  return clientView(row);
}

export async function createClient(deps: Deps, name: string): Promise<ClientView> {
  return withTransaction(deps.db, (tx) => createClientInTx(tx, deps, name));
}

export async function createApiKeyInTx(tx: Tx, deps: Deps, clientId: string, options: CreateKeyOptions = {}): Promise<ApiKeyView> {
  // Checked here, not only by the admin route: the CLI's --client reached the database with any text.
  if (!isUuid(clientId)) throw notFound('Client');
  const client = await store.findClient(tx, clientId);
  if (!client) throw notFound('Client');
  const live = deps.config.mode === 'production';
  const key = options.fixedKey ?? generateApiKey(live);
  const match = apiKeyPattern.exec(key);
  if (!match || (match[1] === 'live') !== live) {
    throw validationError('key', `must be an ${live ? 'sk_live_' : 'sk_test_'} key in ${deps.config.mode} mode`);
  }
  const allowedCidrs = options.allowedCidrs ?? [];
  for (const [index, cidr] of allowedCidrs.entries()) {
    if (!parseCidr(cidr)) throw validationError(options.cidrField ?? `allowedCidrs[${index}]`, `"${cidr}" is not an IP address or CIDR range`);
  }
  const now = deps.clock.now();
  const prefix = apiKeyPrefix(key);
  if (await store.findApiKeyByPrefix(tx, prefix)) throw new AppError('CONFLICT', 'A key with this prefix already exists.');
  await store.insertApiKey(tx, {
    client_id: clientId,
    id: newId(deps.clock),
    prefix,
    secret_hash: hashApiKey(key),
    live,
    read_only: options.readOnly ?? false,
    allowed_cidrs: allowedCidrs,
    created_at: now,
    revoked_at: null,
  });
  // The id as stored (the one sent may be in capitals).
  return { key, prefix, clientId: client.id, readOnly: options.readOnly ?? false, allowedCidrs, createdAt: now.toISOString() };
}

export async function createApiKey(deps: Deps, clientId: string, options: CreateKeyOptions = {}): Promise<ApiKeyView> {
  return withTransaction(deps.db, (tx) => createApiKeyInTx(tx, deps, clientId, options));
}

export async function revokeApiKey(deps: Deps, keyOrPrefix: string): Promise<{ prefix: string; clientId: string; revokedAt: string }> {
  // The whole key pasted for its prefix revokes that key, when it is that key (until 2026-12-05 it
  // answered "Active API key not found" and the key stayed live; found by an audit).
  let prefix = keyOrPrefix;
  if (apiKeyPattern.test(keyOrPrefix)) {
    prefix = apiKeyPrefix(keyOrPrefix);
    const found = await store.findApiKeyByPrefix(deps.db, prefix);
    if (!found || !hashesMatch(found.secret_hash, hashApiKey(keyOrPrefix))) throw notFound('Active API key');
  }
  const row = await store.revokeApiKey(deps.db, prefix, deps.clock.now());
  if (!row?.revoked_at) throw notFound('Active API key');
  return { prefix: row.prefix, clientId: row.client_id, revokedAt: row.revoked_at.toISOString() };
}

export async function listClients(deps: Deps): Promise<ClientView[]> {
  return (await store.listClients(deps.db)).map(clientView);
}

/** One page of clients, newest first (the admin API). */
export async function listClientsPage(deps: Deps, query: ListQuery): Promise<{ clients: ClientView[]; pagination: Pagination }> {
  const { rows, pagination } = await paginate(deps.db, store.clientsQuery(deps.db), query, { id: 'id', createdAt: 'created_at' });
  return { clients: rows.map(clientView), pagination };
}

/** One page of a client's keys, newest first, revoked ones too (the admin API); 404 for an unknown client. */
export async function listClientKeysPage(deps: Deps, clientId: string, query: ListQuery): Promise<{ keys: AdminApiKeyView[]; pagination: Pagination }> {
  if (!isUuid(clientId)) throw notFound('Client');
  const client = await store.findClient(deps.db, clientId);
  if (!client) throw notFound('Client');
  const { rows, pagination } = await paginate(deps.db, store.apiKeysQuery(deps.db, client.id), query, { id: 'id', createdAt: 'created_at' });
  return { keys: rows.map((row) => adminApiKeyView(row, client.id)), pagination };
}

/**
 * Sandbox start-up: on an empty database create a client and a key (returned so the caller can
 * print it once); with OPENBAAS_API_KEY make sure that exact key exists.
 */
export async function bootstrapSandbox(
  deps: Deps,
  onProgress?: (message: string) => void,
): Promise<{ client: ClientView; key: ApiKeyView } | undefined> {
  if (deps.config.mode !== 'sandbox') return undefined;
  const fixedKey = deps.config.sandboxApiKey;
  return withTransaction(deps.db, async (tx) => {
    // Several processes may start at once on one PostgreSQL database: only one bootstraps.
    await sql`SELECT pg_advisory_xact_lock(${bootstrapLockId})`.execute(tx);
    if (fixedKey) {
      if (await store.findApiKeyByPrefix(tx, apiKeyPrefix(fixedKey))) return undefined;
      const existing = (await store.listClients(tx))[0];
      if (!existing) onProgress?.('creating the sandbox client…');
      const client = existing ? clientView(existing) : await createClientInTx(tx, deps, 'Sandbox');
      return { client, key: await createApiKeyInTx(tx, deps, client.id, { fixedKey }) };
    }
    if ((await store.countClients(tx)) > 0) return undefined;
    onProgress?.('creating the sandbox client…');
    const client = await createClientInTx(tx, deps, 'Sandbox');
    return { client, key: await createApiKeyInTx(tx, deps, client.id) };
  });
}

export async function createClientWithKey(
  deps: Deps,
  name: string,
  keyOptions: CreateKeyOptions = {},
): Promise<{ client: ClientView; apiKey: ApiKeyView }> {
  return withTransaction(deps.db, async (tx) => {
    const client = await createClientInTx(tx, deps, name);
    return { client, apiKey: await createApiKeyInTx(tx, deps, client.id, keyOptions) };
  });
}
