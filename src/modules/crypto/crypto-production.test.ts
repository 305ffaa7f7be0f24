import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { newWallet } from '../../../test/crypto/fixtures.js';
import { loadConfig } from '../../platform/config.js';

/** Production mode: no sandbox chain controls, and no addresses without a configured seed. */
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
});
afterAll(async () => {
  await t.close();
});

describe('production', () => {
  it('makes no deposit address without OPENBAAS_SANDBOX_SEED (503), and has no sandbox chain controls', async () => {
    const walletId = await newWallet(t);
    const response = await t.request({ method: 'POST', url: '/v1/digital/addresses', body: { walletId, asset: 'BTC' } });
    expect(response.status, JSON.stringify(response.body)).toBe(503);
    expect(response.body.code).toBe('SERVICE_UNAVAILABLE');
    expect((await t.request({ url: `/v1/digital/addresses?walletId=${walletId}` })).body.data).toEqual([]);
    for (const url of ['/v1/sandbox/crypto-deposits', '/v1/sandbox/chains/BITCOIN/blocks']) {
      expect((await t.request({ method: 'POST', url, body: {} })).status, url).toBe(404);
    }
  });
});

describe('configuration', () => {
  const base = { LOG_LEVEL: 'silent', OPENBAAS_ENCRYPTION_KEY: '0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0' };
  it('the sandbox seed: a fixed public default in sandbox, none in production, or the one configured', () => {
    expect(loadConfig({ ...base }).sandboxSeed).toBe('openbaas-public-sandbox-seed');
    expect(loadConfig({ ...base, OPENBAAS_MODE: 'production' }).sandboxSeed).toBeUndefined();
    expect(loadConfig({ ...base, OPENBAAS_MODE: 'production', OPENBAAS_SANDBOX_SEED: 'a seed of our own' }).sandboxSeed).toBe('a seed of our own');
    expect(() => loadConfig({ ...base, OPENBAAS_SANDBOX_SEED: 'short' })).toThrow(/OPENBAAS_SANDBOX_SEED/);
  });

  it('the block period: 0 (off) by default, a whole number of seconds up to a day', () => {
    expect(loadConfig({ ...base }).sandboxBlockSeconds).toBe(0);
    expect(loadConfig({ ...base, OPENBAAS_SANDBOX_BLOCK_SECONDS: '15' }).sandboxBlockSeconds).toBe(15);
    expect(() => loadConfig({ ...base, OPENBAAS_SANDBOX_BLOCK_SECONDS: '1.5' })).toThrow(/OPENBAAS_SANDBOX_BLOCK_SECONDS/);
    expect(() => loadConfig({ ...base, OPENBAAS_SANDBOX_BLOCK_SECONDS: '86401' })).toThrow(/OPENBAAS_SANDBOX_BLOCK_SECONDS/);
  });
});
