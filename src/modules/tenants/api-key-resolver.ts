import type { Deps } from '../../platform/deps.js';
import type { KeyLookupResult } from '../../platform/http/auth.js';
import { apiKeyPattern, apiKeyPrefix, hashApiKey, hashesMatch, ipAllowed } from './api-key.js';
import { findApiKeyByPrefix } from './tenants.store.js';

type KeyLookup = KeyLookupResult;

/**
 * Finds the key by its prefix and compares the SHA-256 hashes in constant time. Results are
 * cached briefly per process so the hot read paths do not pay a query per request; a revocation
 * is therefore seen by other processes within AUTH_CACHE_TTL_MS (in this process at once).
 *
 * No request waits for the database while its key is cached: once an entry is past half its life,
 * the request that finds it starts one lookup in the background and is answered from the entry,
 * which the lookup then replaces. Lookups of one key share one query: the requests that find no
 * entry (a new process, a key not used for a while) wait for the same one. Without either, every
 * request arriving while an expired entry was being looked up again made a query of its own and
 * took a pool connection for it, once per AUTH_CACHE_TTL_MS under load. An entry is never used
 * past AUTH_CACHE_TTL_MS after its query, so a revocation is seen as soon as before.
 */
export class ApiKeyResolver {
  private readonly cache = new Map<string, CacheEntry>();
  /** The lookup in flight for a key, shared by whoever needs it meanwhile. */
  private readonly inFlight = new Map<string, Promise<KeyLookup>>();
  /** Counts forgetAll calls: a lookup begun before one is neither shared nor cached after it. */
  private generation = 0;
  private static readonly cacheEntriesMax = 10_000;

  constructor(private readonly deps: Pick<Deps, 'config' | 'db'>) {}

  async resolve(key: string): Promise<KeyLookup> {
    const shape = apiKeyPattern.exec(key);
    if (!shape) return { outcome: 'unknown' };
    // A data folder run in sandbox mode, then in production, keeps its sk_test_ keys: they name the
    // mode they were made for and do not open a server of the other (until 2026-12-05 they did;
    // found by an audit).
    if ((shape[1] === 'live') !== (this.deps.config.mode === 'production')) return { outcome: 'otherMode', serverMode: this.deps.config.mode };
    const hash = hashApiKey(key);
    const cacheKey = hash.toString('base64');
    const cached = this.cache.get(cacheKey);
    const nowMs = performance.now();
    if (cached && cached.expiresAtMs > nowMs) {
      if (nowMs >= cached.refreshAtMs && !this.inFlight.has(cacheKey)) {
        // A failed refresh leaves the entry to expire; the next request then looks the key up itself.
        this.lookUp(key, hash, cacheKey).catch(() => {});
      }
      return cached.lookup;
    }
    return this.inFlight.get(cacheKey) ?? this.lookUp(key, hash, cacheKey);
  }

  /** Looks the key up, caches the answer and shares the lookup while it runs. */
  private lookUp(key: string, hash: Buffer, cacheKey: string): Promise<KeyLookup> {
    const generation = this.generation;
    const ttlMs = this.deps.config.authCacheTtlMs;
    const lookup = (async (): Promise<KeyLookup> => {
      const startedMs = performance.now();
      const row = await findApiKeyByPrefix(this.deps.db, apiKeyPrefix(key));
      let found: KeyLookup;
      if (!row || !hashesMatch(row.secret_hash, hash)) found = { outcome: 'unknown' };
      else if (row.revoked_at) found = { outcome: 'revoked' };
      else {
        found = {
          outcome: 'ok',
          auth: { clientId: row.client_id, keyId: row.id, keyPrefix: row.prefix, readOnly: row.read_only, clockOffsetMs: Number(row.clock_offset_ms) },
          allowedCidrs: row.allowed_cidrs,
        };
      }
      if (ttlMs > 0 && generation === this.generation) {
        if (this.cache.size >= ApiKeyResolver.cacheEntriesMax) this.cache.clear();
        // Its life counts from before the query: what it holds may be that old.
        this.cache.set(cacheKey, { lookup: found, refreshAtMs: startedMs + ttlMs / 2, expiresAtMs: startedMs + ttlMs });
      }
      return found;
    })();
    // Without a cache (AUTH_CACHE_TTL_MS 0) every request reads the key itself.
    if (ttlMs === 0) return lookup;
    this.inFlight.set(cacheKey, lookup);
    const done = () => {
      if (this.inFlight.get(cacheKey) === lookup) this.inFlight.delete(cacheKey);
    };
    lookup.then(done, done);
    return lookup;
  }

  forgetAll(): void {
    this.generation++;
    this.cache.clear();
    this.inFlight.clear();
  }
}

interface CacheEntry {
  lookup: KeyLookup;
  /** From then on, a request that uses the entry has it looked up again in the background. */
  refreshAtMs: number;
  expiresAtMs: number;
}

export { ipAllowed };
