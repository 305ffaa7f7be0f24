import type { Deps } from '../../platform/deps.js';
import type { KeyLookupResult } from '../../platform/http/auth.js';
import { apiKeyPattern, apiKeyPrefix, hashApiKey, hashesMatch, ipAllowed } from './api-key.js';
import { findApiKeyByPrefix } from './tenants.store.js';

type KeyLookup = KeyLookupResult;

/**
 * Finds the key by its prefix and compares the SHA-256 hashes in constant time. Results are
 * cached briefly per process so the hot read paths do not pay a query per request; a revocation
 * is therefore seen by other processes within AUTH_CACHE_TTL_MS (in this process at once).
 */
export class ApiKeyResolver {
  private readonly cache = new Map<string, { lookup: KeyLookup; expiresAtMs: number }>();
  private static readonly cacheEntriesMax = 10_000;

  constructor(private readonly deps: Deps) {}

  async resolve(key: string): Promise<KeyLookup> {
    if (!apiKeyPattern.test(key)) return { outcome: 'unknown' };
    const hash = hashApiKey(key);
    const cacheKey = hash.toString('base64');
    const ttlMs = this.deps.config.authCacheTtlMs;
    const cached = this.cache.get(cacheKey);
    if (cached && cached.expiresAtMs > performance.now()) return cached.lookup;

    const row = await findApiKeyByPrefix(this.deps.db, apiKeyPrefix(key));
    let lookup: KeyLookup;
    if (!row || !hashesMatch(row.secret_hash, hash)) lookup = { outcome: 'unknown' };
    else if (row.revoked_at) lookup = { outcome: 'revoked' };
    else {
      lookup = {
        outcome: 'ok',
        auth: { clientId: row.client_id, keyId: row.id, keyPrefix: row.prefix, readOnly: row.read_only, clockOffsetMs: Number(row.clock_offset_ms) },
        allowedCidrs: row.allowed_cidrs,
      };
    }
    if (ttlMs > 0) {
      if (this.cache.size >= ApiKeyResolver.cacheEntriesMax) this.cache.clear();
      this.cache.set(cacheKey, { lookup, expiresAtMs: performance.now() + ttlMs });
    }
    return lookup;
  }

  forgetAll(): void {
    this.cache.clear();
  }
}

export { ipAllowed };
