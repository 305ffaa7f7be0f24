import { type KyselyPlugin, type RootOperationNode, type UnknownRow, type QueryResult } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyResolver } from '../src/modules/tenants/api-key-resolver.js';
import { createApiKey, revokeApiKey } from '../src/modules/tenants/tenants.service.js';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** Counts the statements that reach the database through a Kysely instance (the resolver's key lookups). */
class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: { node: RootOperationNode }): RootOperationNode {
    this.count++;
    return args.node;
  }
  transformResult(args: { result: QueryResult<UnknownRow> }): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

/** A resolver of its own (its own cache), whose lookups are counted, with the cache's life given. */
function resolverWith(ttlMs: number): { resolver: ApiKeyResolver; counter: StatementCounter } {
  const counter = new StatementCounter();
  const resolver = new ApiKeyResolver({ config: { ...t.deps.config, authCacheTtlMs: ttlMs }, db: t.deps.db.withPlugin(counter) });
  return { resolver, counter };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('API key cache (ApiKeyResolver)', () => {
  it('requests that find no entry share one lookup and get the same answer', async () => {
    const { resolver, counter } = resolverWith(60_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => resolver.resolve(t.clientA.key)));
    expect(counter.count).toBe(1);
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).toMatchObject({ outcome: 'ok', auth: { clientId: t.clientA.id } });
    // Cached now: no more lookups.
    await resolver.resolve(t.clientA.key);
    expect(counter.count).toBe(1);
  });

  it('past half its life, an entry still answers at once and is looked up again once, in the background', async () => {
    const { resolver, counter } = resolverWith(2_000);
    const first = await resolver.resolve(t.clientA.key);
    expect(counter.count).toBe(1);
    await sleep(1_100);
    // Every request of this burst is answered from the entry; one of them started a lookup.
    const burst = await Promise.all(Array.from({ length: 10 }, () => resolver.resolve(t.clientA.key)));
    expect(burst.every((answer) => answer === first)).toBe(true);
    expect(counter.count).toBe(2);
    // The background lookup replaces the entry (a new object); the requests meanwhile start no other.
    let refreshed = first;
    for (let waited = 0; refreshed === first && waited < 800; waited += 20) {
      await sleep(20);
      refreshed = await resolver.resolve(t.clientA.key);
    }
    expect(refreshed).not.toBe(first);
    expect(refreshed).toEqual(first);
    expect(counter.count).toBe(2);
  });

  it('never answers from an entry older than its life: a key revoked meanwhile is refused once it has expired', async () => {
    const client = await t.newClient('Resolver revocation');
    const { key, prefix } = await createApiKey(t.deps, client.id, {});
    const { resolver } = resolverWith(300);
    expect((await resolver.resolve(key)).outcome).toBe('ok');
    await revokeApiKey(t.deps, prefix);
    // Within its life the entry may still answer; unused, it expires and the next request looks again.
    await sleep(350);
    expect((await resolver.resolve(key)).outcome).toBe('revoked');
  });

  it('forgetAll: a lookup begun before it is neither shared nor cached after it', async () => {
    const { resolver, counter } = resolverWith(60_000);
    const before = resolver.resolve(t.clientB.key);
    resolver.forgetAll();
    const after = resolver.resolve(t.clientB.key);
    await Promise.all([before, after]);
    expect(counter.count).toBe(2);
    await resolver.resolve(t.clientB.key);
    expect(counter.count).toBe(2);
  });

  it('without a cache (AUTH_CACHE_TTL_MS 0), every request reads the key itself', async () => {
    const { resolver, counter } = resolverWith(0);
    await Promise.all(Array.from({ length: 5 }, () => resolver.resolve(t.clientA.key)));
    expect(counter.count).toBe(5);
  });

  it('a key of the wrong shape is unknown without a lookup', async () => {
    const { resolver, counter } = resolverWith(60_000);
    expect(await resolver.resolve('not-a-key')).toEqual({ outcome: 'unknown' });
    expect(counter.count).toBe(0);
  });
});
