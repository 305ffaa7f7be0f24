import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { appWithLogCapture } from '../support/log-capture.js';
import { createReadyIndividual, pathOf, startKyc } from './helpers.js';

/** The hosted KYC page's link is its only credential: the logs show its path without the token. */

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
