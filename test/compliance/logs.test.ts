import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { appWithLogCapture } from '../support/log-capture.js';
import { createReadyIndividual, pathOf, startKyc } from './helpers.js';

/**
 * The hosted KYC page's link is its only credential: the logs show its path without the token; and
 * a credential put in any query string by mistake is not logged either.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('logs of the hosted KYC page', () => {
  it('never carry the link token, on the page, its submission and an unknown token', async () => {
    const capture = await appWithLogCapture(t);
    try {
      const customer = await createReadyIndividual(t);
      const started = await startKyc(t, customer.id);
      const path = pathOf(started.sdk.link);
      const token = path.split('/').at(-1) as string;
      expect(token.length).toBeGreaterThan(20);
      const page = await capture.app.inject({ method: 'GET', url: `${path}?lang=en` });
      expect(page.statusCode).toBe(200);
      const submitted = await capture.app.inject({ method: 'POST', url: path, payload: 'outcome=APPROVED', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(submitted.statusCode).toBe(303);
      const unknown = await capture.app.inject({ method: 'GET', url: '/hosted/kyc/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
      expect(unknown.statusCode).toBe(404);
      // The path as the router reads it, percent-decoded: an encoded spelling is the page too.
      const encoded = await capture.app.inject({ method: 'GET', url: path.replace('/hosted/kyc/', '/hosted/%6Byc/') });
      expect(encoded.statusCode).toBe(200);
      const logged = capture.logged();
      expect(logged).toContain('"url":"/hosted/kyc/[REDACTED]?lang=en"');
      expect(logged).toContain('"url":"/hosted/kyc/[REDACTED]"');
      expect(logged).not.toContain(token);
      expect(logged).not.toContain('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    } finally {
      await capture.close();
    }
  });
});

describe('logs of a credential put in a query string', () => {
  it('carry its value as [REDACTED], by the parameter\'s name or by the value\'s form; other parameters as sent', async () => {
    // Until 2026-12-05 the query was logged as sent: a vault token given as ?token= stayed usable in the log (found by an audit).
    const capture = await appWithLogCapture(t);
    try {
      const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJjYXJkIjoieCJ9.c2lnbmF0dXJlc2lnbmF0dXJl';
      const key = 'sk_test_QueryStringKey0123456789';
      for (const url of [
        `/v1/vault/show?cardId=abc&token=${jwt}`,
        `/v1/assets?api_key=${key}`,
        `/v1/assets?x=${encodeURIComponent(key)}&limit=2`,
        `/v1/assets?Access%5FToken=opaque-secret-value`,
        `/v1/assets?${jwt}`,
      ]) {
        const response = await capture.app.inject({ method: 'GET', url, headers: { authorization: t.clientA.key } });
        expect(response.statusCode).toBeGreaterThanOrEqual(400);
      }
      await capture.app.inject({ method: 'GET', url: '/v1/assets?limit=2&offset=0', headers: { authorization: t.clientA.key } });
      const logged = capture.logged();
      for (const secret of [jwt, key, 'opaque-secret-value']) expect(logged).not.toContain(secret);
      expect(logged).toContain('"url":"/v1/vault/show?cardId=abc&token=[REDACTED]"');
      expect(logged).toContain('"url":"/v1/assets?api_key=[REDACTED]"');
      expect(logged).toContain('"url":"/v1/assets?x=[REDACTED]&limit=2"');
      expect(logged).toContain('"url":"/v1/assets?Access%5FToken=[REDACTED]"');
      expect(logged).toContain('"url":"/v1/assets?[REDACTED]"');
      expect(logged).toContain('"url":"/v1/assets?limit=2&offset=0"');
    } finally {
      await capture.close();
    }
  });
});
