import crypto from 'node:crypto';
import { sql } from 'kysely';
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { FieldCipher } from '../../platform/crypto/field-cipher.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/ids.js';
import type { VaultSettingsTable } from './vault.tables.js';
import './vault.tables.js';

type Queryable = Db | Tx;

/** Contract §12.6: six minutes, by the client's clock. */
export const vaultTokenTtlSeconds = 360;
/** How far a token's `iat` may lie ahead of the client's clock (servers whose clocks differ a little). */
const vaultTokenIssuedAtLeewaySeconds = 30;
export const vaultTokenIssuer = 'openbaas';
export const vaultTokenAudience = 'openbaas-vault';
export const vaultScopes = ['cards:reveal', 'documents:reveal'] as const;
export type VaultScope = (typeof vaultScopes)[number];

export interface VaultTokenClaims {
  clientId: string;
  customerId: string;
  cardId: string | null;
  scopes: VaultScope[];
  tokenId: string;
  expiresAt: Date;
}

const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
function randomText(length: number, characters = alphabet): string {
  let text = '';
  for (let index = 0; index < length; index++) text += characters[crypto.randomInt(characters.length)];
  return text;
}

function boundTo(clientId: string, version: number): string {
  return `${clientId}:vault:secret:v${version}`;
}

/**
 * The client's vault settings, made on first use: a vault id (`tnt` + 8 letters or digits), a
 * route id, and the first signing secret (32 random bytes, kept encrypted).
 */
export async function vaultSettingsOf(db: Queryable, cipher: FieldCipher, clientId: string, now: Date): Promise<VaultSettingsTable> {
  const existing = await db.selectFrom('vault_settings').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  if (existing) return existing;
  const row: VaultSettingsTable = {
    client_id: clientId,
    vault_id: `tnt${randomText(8)}`,
    route_id: crypto.randomUUID(),
    secret_encrypted: cipher.encrypt(crypto.randomBytes(32).toString('base64url'), boundTo(clientId, 1)),
    secret_version: 1,
    previous_secret_encrypted: null,
    previous_secret_expires_at: null,
    created_at: now,
    rotated_at: null,
  };
  // Two first requests at once: one row wins, both read it.
  await db.insertInto('vault_settings').values(row).onConflict((conflict) => conflict.column('client_id').doNothing()).execute();
  return db.selectFrom('vault_settings').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();
}

function secretOf(cipher: FieldCipher, settings: VaultSettingsTable, version: number): Uint8Array | undefined {
  if (version === settings.secret_version) return Buffer.from(cipher.decrypt(settings.secret_encrypted, boundTo(settings.client_id, version)), 'base64url');
  if (version === settings.secret_version - 1 && settings.previous_secret_encrypted) {
    return Buffer.from(cipher.decrypt(settings.previous_secret_encrypted, boundTo(settings.client_id, version)), 'base64url');
  }
  return undefined;
}

/**
 * A new signing secret. The previous one keeps verifying the tokens it signed until the last of
 * them has expired (rotation time + token lifetime), then it is gone; a second rotation within
 * that window drops the oldest secret at once (its tokens stop working), so rotate at most once per
 * token lifetime to break nothing.
 */
export async function rotateVaultSecret(tx: Tx, cipher: FieldCipher, clientId: string, now: Date): Promise<{ secretVersion: number; previousSecretValidUntil: string }> {
  await vaultSettingsOf(tx, cipher, clientId, now);
  const current = await tx.selectFrom('vault_settings').selectAll().where('client_id', '=', clientId).forUpdate().executeTakeFirstOrThrow();
  const version = current.secret_version + 1;
  const previousExpiresAt = new Date(now.getTime() + vaultTokenTtlSeconds * 1000);
  const previousSecret = cipher.decrypt(current.secret_encrypted, boundTo(clientId, current.secret_version));
  await tx
    .updateTable('vault_settings')
    .set({
      secret_encrypted: cipher.encrypt(crypto.randomBytes(32).toString('base64url'), boundTo(clientId, version)),
      secret_version: version,
      previous_secret_encrypted: cipher.encrypt(previousSecret, boundTo(clientId, current.secret_version)),
      previous_secret_expires_at: previousExpiresAt,
      rotated_at: now,
    })
    .where('client_id', '=', clientId)
    .execute();
  return { secretVersion: version, previousSecretValidUntil: previousExpiresAt.toISOString() };
}

export async function signVaultToken(
  settings: VaultSettingsTable,
  cipher: FieldCipher,
  claims: { customerId: string; cardId: string | null; scopes: VaultScope[] },
  now: Date,
): Promise<{ token: string; tokenId: string; expiresAt: Date }> {
  const secret = secretOf(cipher, settings, settings.secret_version);
  if (!secret) throw new Error('the current vault secret cannot be read');
  const issuedAt = Math.floor(now.getTime() / 1000);
  const tokenId = crypto.randomUUID();
  const expiresAt = new Date((issuedAt + vaultTokenTtlSeconds) * 1000);
  const token = await new SignJWT({ cid: settings.client_id, scope: claims.scopes.join(' '), ...(claims.cardId ? { card: claims.cardId } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: `v${settings.secret_version}` })
    .setIssuer(vaultTokenIssuer)
    .setAudience(vaultTokenAudience)
    .setSubject(claims.customerId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + vaultTokenTtlSeconds)
    .setJti(tokenId)
    .sign(secret);
  return { token, tokenId, expiresAt };
}

export function invalidVaultToken(reason: string): AppError {
  return new AppError('VAULT_TOKEN_INVALID', `The vault token is not valid: ${reason}.`);
}

/** The token of `Authorization: Bearer <token>`; an API key or anything else is refused. */
export function bearerToken(authorization: string | undefined): string {
  if (!authorization) throw invalidVaultToken('send it as Authorization: Bearer <token> (from POST /v1/vault/token)');
  // The scheme name is case-insensitive (RFC 9110 §11.1), as for API keys.
  const match = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/i.exec(authorization.trim());
  if (!match?.[1]) {
    throw invalidVaultToken(
      authorization.startsWith('sk_') || authorization.includes(' sk_')
        ? 'these endpoints take a vault token (Authorization: Bearer <token>), never an API key'
        : 'send it as Authorization: Bearer <token> (from POST /v1/vault/token)',
    );
  }
  return match[1];
}

/**
 * Checks a vault token: HS256 only (`none` and every other algorithm refused), signed with the
 * client's current or still-valid previous secret, issuer and audience as issued, not expired by
 * the client's clock (`nowOf`). Every failure is 401: VAULT_TOKEN_EXPIRED for an expired token,
 * VAULT_TOKEN_INVALID otherwise.
 */
const signatureFails = 'its signature does not verify with a signing secret in use (one rotated away, after its 6-minute overlap, no longer works)';

export async function verifyVaultToken(
  db: Queryable,
  cipher: FieldCipher,
  token: string,
  nowOf: (clientId: string) => Promise<Date>,
): Promise<VaultTokenClaims> {
  let kid: string | undefined;
  let unverifiedClientId: unknown;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== 'HS256') throw invalidVaultToken(`the algorithm must be HS256, not ${String(header.alg)}`);
    kid = header.kid;
    unverifiedClientId = decodeJwt(token).cid;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalidVaultToken('it is not a well-formed JWT');
  }
  const version = /^v([0-9]{1,9})$/.exec(kid ?? '')?.[1];
  if (typeof unverifiedClientId !== 'string' || !isUuid(unverifiedClientId) || version === undefined) throw invalidVaultToken('it was not issued by OpenBaaS');
  const settings = await db.selectFrom('vault_settings').selectAll().where('client_id', '=', unverifiedClientId).executeTakeFirst();
  // Worded as a bad signature, so a token relabelled with a made-up client id tells nothing of which ids exist.
  if (!settings) throw invalidVaultToken(signatureFails);
  const now = await nowOf(settings.client_id);
  const versionNumber = Number(version);
  const previousExpired = settings.previous_secret_expires_at !== null && settings.previous_secret_expires_at <= now;
  const secret = versionNumber === settings.secret_version - 1 && previousExpired ? undefined : secretOf(cipher, settings, versionNumber);
  // The same words for a key id the client has no secret of (rotated away, or never made): a
  // distinct message told, of any client id, that it exists and which secret version it is at
  // (found by an audit, 2026-12-02).
  if (!secret) throw invalidVaultToken(signatureFails);
  try {
    const { payload } = await jwtVerify(token, secret, {
      algorithms: ['HS256'],
      issuer: vaultTokenIssuer,
      audience: vaultTokenAudience,
      currentDate: now,
      requiredClaims: ['sub', 'exp', 'iat', 'jti', 'cid'],
    });
    if (payload.cid !== settings.client_id || typeof payload.sub !== 'string' || !isUuid(payload.sub)) throw invalidVaultToken('its claims do not match');
    // Issued after the client's now: a sandbox restore moved the clock back since. Judged by
    // `exp` alone it would live the rewound time plus 6 minutes; it lives 6 minutes from `iat`
    // by a clock that has reached `iat`. A little leeway for servers whose clocks differ.
    if ((payload.iat ?? 0) > now.getTime() / 1000 + vaultTokenIssuedAtLeewaySeconds) {
      throw invalidVaultToken('it was issued after the current time of your clock (a sandbox restore moved the clock back): ask your server for a new one');
    }
    const scopes = (typeof payload.scope === 'string' ? payload.scope.split(' ') : []).filter((scope): scope is VaultScope =>
      (vaultScopes as readonly string[]).includes(scope),
    );
    return {
      clientId: settings.client_id,
      customerId: payload.sub,
      cardId: typeof payload.card === 'string' ? payload.card : null,
      scopes,
      tokenId: String(payload.jti),
      expiresAt: new Date((payload.exp ?? 0) * 1000),
    };
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof joseErrors.JWTExpired) {
      throw new AppError('VAULT_TOKEN_EXPIRED', 'The vault token has expired (they live 6 minutes): ask your server for a new one.');
    }
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) throw invalidVaultToken(signatureFails);
    if (error instanceof joseErrors.JWTClaimValidationFailed) throw invalidVaultToken(`its ${error.claim} claim is wrong`);
    throw invalidVaultToken('it could not be verified');
  }
}

/**
 * The client's clock moves from `from` to `to` (a sandbox restore moving it back): the overlap of
 * a rotated-away signing secret keeps what it had left, and one that had ended stays ended. The
 * vault's settings are not restored (a secret rotated away must not come back, nor the tokens it
 * signed), but its overlap is judged by the client's clock, which is.
 */
export async function rebaseSecretOverlap(tx: Tx, clientId: string, from: Date, to: Date): Promise<void> {
  await sql`
    UPDATE vault_settings
    SET previous_secret_expires_at = ${to}::timestamptz + GREATEST(previous_secret_expires_at - ${from}::timestamptz, interval '0')
    WHERE client_id = ${clientId} AND previous_secret_expires_at IS NOT NULL`.execute(tx);
}
