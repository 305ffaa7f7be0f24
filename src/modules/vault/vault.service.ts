import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import { fieldCipherOf } from '../../platform/crypto/field-cipher.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { cardVaultOf, findCard, findCardProgram, type CardRow } from '../cards/index.js';
import { findCustomer, revealCustomerDocuments } from '../customers/index.js';
import { signVaultToken, vaultSettingsOf, type VaultScope, type VaultTokenClaims } from './vault-token.js';
import type { VaultAuditAction, VaultCardField } from './vault.tables.js';

type Queryable = Db | Tx;

/** At most this many reveals of one card per minute (contract §12.6), by the client's clock. */
export const revealsPerCardPerMinute = 10;

export const vaultDocumentFields = ['ssn', 'documentIdCard', 'documentLicense', 'documentPassport'] as const;
export type VaultDocumentField = (typeof vaultDocumentFields)[number];

/** Who is asking, for the audit: never a value. */
export interface Requester {
  ip: string | null;
  userAgent: string | null;
}

export async function vaultConfig(db: Queryable, deps: Pick<Deps, 'config' | 'database'>, clientId: string, now: Date) {
  const settings = await vaultSettingsOf(db, fieldCipherOf(deps), clientId, now);
  return {
    vaultId: settings.vault_id,
    environment: deps.config.mode === 'sandbox' ? ('sandbox' as const) : ('live' as const),
    cname: deps.config.vaultPublicHost,
    routeId: settings.route_id,
  };
}

async function audit(
  tx: Tx,
  clientId: string,
  entry: { action: VaultAuditAction; customerId: string; cardId: string | null; fields: string[]; tokenId: string; now: Date },
  requester: Requester,
): Promise<void> {
  await tx
    .insertInto('vault_audit')
    .values({
      client_id: clientId,
      id: idAt(entry.now),
      action: entry.action,
      customer_id: entry.customerId,
      card_id: entry.cardId,
      fields: entry.fields,
      token_id: entry.tokenId,
      ip: requester.ip,
      user_agent: requester.userAgent?.slice(0, 500) ?? null,
      created_at: entry.now,
    })
    .execute();
}

/**
 * POST /v1/vault/token: a token for one customer (`userId`), optionally restricted to one of their
 * cards, with the scopes asked for (default cards:reveal). Another client's customer or card: 404.
 */
export async function issueVaultToken(
  tx: Tx,
  context: RequestContext,
  deps: Pick<Deps, 'config' | 'database'>,
  input: { userId: string; cardId?: string | undefined; scopes?: VaultScope[] | undefined },
  requester: Requester,
): Promise<{ token: string; expiresAt: string }> {
  const customer = await findCustomer(tx, context.clientId, input.userId);
  if (!customer) throw notFound('Customer', 'userId');
  // The token names the card as stored (ids are written in lower case), whatever case was sent.
  let cardId: string | null = null;
  if (input.cardId !== undefined) {
    const card = await findCard(tx, context.clientId, input.cardId);
    if (!card || card.customer_id !== customer.id) throw notFound('Card', 'cardId');
    cardId = card.id;
  }
  const scopes: VaultScope[] = [...new Set<VaultScope>(input.scopes ?? ['cards:reveal'])];
  const cipher = fieldCipherOf(deps);
  const settings = await vaultSettingsOf(tx, cipher, context.clientId, context.now);
  const issued = await signVaultToken(settings, cipher, { customerId: customer.id, cardId, scopes }, context.now);
  await audit(tx, context.clientId, { action: 'TOKEN_ISSUED', customerId: customer.id, cardId, fields: scopes, tokenId: issued.tokenId, now: context.now }, requester);
  return { token: issued.token, expiresAt: issued.expiresAt.toISOString() };
}

function requireScope(claims: VaultTokenClaims, scope: VaultScope): void {
  if (!claims.scopes.includes(scope)) throw new AppError('FORBIDDEN', `This vault token does not carry the scope ${scope}; ask for it in POST /v1/vault/token.`);
}

/**
 * The card a token may reveal: the customer's own (another client's or customer's card answers
 * 404, as a missing one does), the token's card when it names one, ACTIVE (422 CARD_NOT_ACTIVE),
 * and, for a physical card, a program that allows revealing physical cards.
 */
async function revealableCard(tx: Tx, claims: VaultTokenClaims, cardId: string): Promise<CardRow> {
  if (claims.cardId !== null && claims.cardId !== cardId.toLowerCase()) throw notFound('Card', 'cardId');
  // The card's row lock orders concurrent reveals of one card, so the per-minute count holds.
  const card = await findCard(tx, claims.clientId, cardId, { forUpdate: true });
  if (!card || card.customer_id !== claims.customerId) throw notFound('Card', 'cardId');
  if (card.status !== 'ACTIVE') throw new AppError('CARD_NOT_ACTIVE', `The card is ${card.status}: only an ACTIVE card can be revealed.`);
  if (!card.is_virtual) {
    const program = await findCardProgram(tx, claims.clientId, card.card_program_id);
    if (!program?.reveal_physical_cards) {
      throw new AppError('FORBIDDEN', 'This is a physical card, and its program does not allow revealing physical cards (revealPhysicalCards).');
    }
  }
  return card;
}

/**
 * At most revealsPerCardPerMinute reveals of a card in the minute before now, by the client's
 * clock. Reveals dated after now (the audit is not rewound when a snapshot restore moves the
 * clock back) are not in that minute.
 */
async function checkRevealRate(tx: Tx, clientId: string, cardId: string, now: Date): Promise<void> {
  const since = new Date(now.getTime() - 60_000);
  const result = await sql<{ count: string; oldest: Date | null }>`
    SELECT count(*)::text AS count, min(created_at) AS oldest FROM vault_audit
    WHERE client_id = ${clientId} AND card_id = ${cardId} AND action = 'REVEALED' AND created_at > ${since} AND created_at <= ${now}
  `.execute(tx);
  const row = result.rows[0];
  if (Number(row?.count ?? 0) >= revealsPerCardPerMinute) {
    const retryAfterSeconds = row?.oldest ? Math.max(1, Math.ceil((new Date(row.oldest).getTime() + 60_000 - now.getTime()) / 1000)) : 60;
    throw new AppError('RATE_LIMITED', `At most ${revealsPerCardPerMinute} reveals of one card per minute; try again in ${retryAfterSeconds} s.`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

function cardValues(deps: Pick<Deps, 'config' | 'database'>, card: CardRow, fields: readonly VaultCardField[]): Partial<Record<VaultCardField, string>> {
  const vault = cardVaultOf(deps);
  const pan = vault.decryptPan(card.pan_encrypted, card.client_id, card.id);
  const expiry = { expiryMonth: card.expiry_month, expiryYear: card.expiry_year };
  const values: Partial<Record<VaultCardField, string>> = {};
  for (const field of fields) {
    if (field === 'pan') values.pan = pan;
    if (field === 'cvv') values.cvv = vault.cvv(pan, expiry);
    if (field === 'expiry') values.expiry = `${String(card.expiry_month).padStart(2, '0')}${String(card.expiry_year % 100).padStart(2, '0')}`;
  }
  return values;
}

const aliasCharacters = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

async function aliasOf(tx: Tx, deps: Pick<Deps, 'config'>, card: CardRow, field: VaultCardField, now: Date): Promise<string> {
  const existing = await tx.selectFrom('vault_aliases').select('alias').where('client_id', '=', card.client_id).where('card_id', '=', card.id).where('field', '=', field).executeTakeFirst();
  if (existing) return existing.alias;
  let random = '';
  for (let index = 0; index < 24; index++) random += aliasCharacters[crypto.randomInt(aliasCharacters.length)];
  const alias = `tok_${deps.config.mode === 'sandbox' ? 'sandbox' : 'live'}_${random}`;
  await tx.insertInto('vault_aliases').values({ client_id: card.client_id, alias, card_id: card.id, field, created_at: now }).onConflict((conflict) => conflict.doNothing()).execute();
  const stored = await tx.selectFrom('vault_aliases').select('alias').where('client_id', '=', card.client_id).where('card_id', '=', card.id).where('field', '=', field).executeTakeFirstOrThrow();
  return stored.alias;
}

/**
 * GET /v1/vault/show (the provider's shape): the card's aliases, which POST /v1/vault/reveal turns
 * into values. Showing aliases reveals nothing, so it is not counted against the reveal limit.
 */
export async function showCard(tx: Tx, deps: Pick<Deps, 'config' | 'database'>, claims: VaultTokenClaims, cardId: string, fields: readonly VaultCardField[], now: Date) {
  requireScope(claims, 'cards:reveal');
  if (!isUuid(cardId)) throw notFound('Card', 'cardId');
  const card = await revealableCard(tx, claims, cardId);
  const aliases: { pan?: string; cvv?: string; expiryDate?: string } = {};
  for (const field of fields) {
    const alias = await aliasOf(tx, deps, card, field, now);
    if (field === 'pan') aliases.pan = alias;
    if (field === 'cvv') aliases.cvv = alias;
    if (field === 'expiry') aliases.expiryDate = alias;
  }
  return { card: aliases };
}

export type RevealInput = { aliases: string[] } | { cardId: string; fields: VaultCardField[] } | { documents: VaultDocumentField[] };

/**
 * POST /v1/vault/reveal: values in clear, for the token's customer only. Card fields need the
 * cards:reveal scope and count against the card's reveal limit (one reveal per request and card);
 * documents need documents:reveal. Every reveal is audited (fields, never values).
 */
export async function reveal(tx: Tx, deps: Pick<Deps, 'config' | 'database'>, claims: VaultTokenClaims, input: RevealInput, now: Date, requester: Requester) {
  if ('documents' in input) {
    requireScope(claims, 'documents:reveal');
    const documents = await revealCustomerDocuments(tx, claims.clientId, fieldCipherOf(deps), claims.customerId);
    if (!documents) throw notFound('Customer');
    const values: Partial<Record<VaultDocumentField, string | null>> = {};
    for (const field of input.documents) values[field] = documents[field];
    await audit(tx, claims.clientId, { action: 'REVEALED', customerId: claims.customerId, cardId: null, fields: [...input.documents], tokenId: claims.tokenId, now }, requester);
    return { documents: values };
  }
  requireScope(claims, 'cards:reveal');
  const requests = new Map<string, { fields: Set<VaultCardField>; aliases: Map<string, VaultCardField> }>();
  if ('aliases' in input) {
    const rows = input.aliases.length
      ? await tx.selectFrom('vault_aliases').selectAll().where('client_id', '=', claims.clientId).where('alias', 'in', input.aliases).execute()
      : [];
    for (const alias of input.aliases) {
      const row = rows.find((candidate) => candidate.alias === alias);
      if (!row) throw notFound('Alias', 'aliases');
      const entry = requests.get(row.card_id) ?? { fields: new Set(), aliases: new Map() };
      entry.fields.add(row.field);
      entry.aliases.set(alias, row.field);
      requests.set(row.card_id, entry);
    }
  } else {
    if (!isUuid(input.cardId)) throw notFound('Card', 'cardId');
    requests.set(input.cardId.toLowerCase(), { fields: new Set(input.fields), aliases: new Map() });
  }
  const aliasValues: Record<string, string> = {};
  const cardValuesById: Record<string, { pan?: string; cvv?: string; expiryDate?: string }> = {};
  for (const [cardId, request] of [...requests.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const card = await revealableCard(tx, claims, cardId).catch((error: unknown) => {
      // An alias of a card the token may not see answers as an unknown alias does: which aliases
      // exist for other customers is not the token holder's to learn.
      if ('aliases' in input && error instanceof AppError && error.code === 'NOT_FOUND') throw notFound('Alias', 'aliases');
      throw error;
    });
    await checkRevealRate(tx, claims.clientId, card.id, now);
    const fields = [...request.fields].sort();
    const values = cardValues(deps, card, fields);
    for (const [alias, field] of request.aliases) aliasValues[alias] = values[field] ?? '';
    cardValuesById[card.id] = { ...(values.pan ? { pan: values.pan } : {}), ...(values.cvv ? { cvv: values.cvv } : {}), ...(values.expiry ? { expiryDate: values.expiry } : {}) };
    await audit(tx, claims.clientId, { action: 'REVEALED', customerId: claims.customerId, cardId: card.id, fields, tokenId: claims.tokenId, now }, requester);
  }
  if ('aliases' in input) return { aliases: aliasValues };
  if (!('cardId' in input)) throw validationError('cardId', 'is required');
  const revealed = cardValuesById[input.cardId.toLowerCase()];
  if (!revealed) throw new Error('a revealed card has no values');
  return { card: revealed };
}

export interface AuditFilters extends ListQuery {
  customerId?: string | undefined;
  cardId?: string | undefined;
  action?: VaultAuditAction | undefined;
}

export async function listAudit(db: Db, clientId: string, filters: AuditFilters): Promise<{ data: unknown[]; pagination: Pagination }> {
  let query = db.selectFrom('vault_audit').selectAll().where('client_id', '=', clientId);
  // A customer or card the client does not have answers 404 naming the filter, as every list filtered by a resource does.
  if (filters.customerId !== undefined) {
    const customer = await findCustomer(db, clientId, filters.customerId);
    if (!customer) throw notFound('Customer', 'customerId');
    query = query.where('customer_id', '=', customer.id);
  }
  if (filters.cardId !== undefined) {
    const card = await findCard(db, clientId, filters.cardId);
    if (!card) throw notFound('Card', 'cardId');
    query = query.where('card_id', '=', card.id);
  }
  if (filters.action !== undefined) query = query.where('action', '=', filters.action);
  const { rows, pagination } = await paginate(db, query, filters, { id: 'id', createdAt: 'created_at' });
  return {
    data: rows.map((row) => ({
      id: row.id,
      action: row.action,
      customerId: row.customer_id,
      cardId: row.card_id,
      fields: row.fields,
      tokenId: row.token_id,
      ip: row.ip,
      userAgent: row.user_agent,
      createdAt: row.created_at.toISOString(),
    })),
    pagination,
  };
}
