import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appWithLogCapture } from '../../../test/support/log-capture.js';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { individualBody } from '../../../test/customers/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('logs', () => {
  it('never carry an SSN or a document number, even at trace level and on refused requests', async () => {
    const capture = await appWithLogCapture(t);
    const { app } = capture;
    try {
      const headers = { authorization: t.clientA.key, 'content-type': 'application/json' };
      const created = await app.inject({ method: 'POST', url: '/v1/customers/individual', headers, payload: individualBody({}, { documentSsn: '219-09-9999', documentPassport: 'Q9988776' }) });
      expect(created.statusCode).toBe(201);
      const refused = await app.inject({ method: 'POST', url: '/v1/customers/individual', headers, payload: individualBody({}, { documentSsn: '219-09-9999', birthDate: '2099-01-01' }) });
      expect(refused.statusCode).toBe(400);
      expect(capture.logged().length).toBeGreaterThan(0);
      for (const secret of ['219-09-9999', '219099999', 'Q9988776']) expect(capture.logged()).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});
