import { describe, expect, it, vi } from 'vitest';
import { createTestApp } from './harness.js';
import { DatabaseRelay } from './support/database-relay.js';
import { appWithLogCapture } from './support/log-capture.js';

// The readiness probe is public: while the database cannot be reached it answers a reason of its
// own, and the database's error (which names the database's host and port) goes to the log only.
// Until 2026-12-07 it answered "Not ready: connect ECONNREFUSED 127.0.0.1:7448" to anyone (found by
// an audit). PostgreSQL only: a relay stands in front of the database server.

describe('/health/ready while the database refuses connections', () => {
  it('answers 503 "the database cannot be reached" without the database\'s address, logs the cause, and 200 once it is back', async () => {
    const relay = new DatabaseRelay(new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'));
    await relay.listen();
    const t = await createTestApp({ routeDatabaseUrl: (url) => relay.address(url) });
    const logging = await appWithLogCapture(t);
    let refusing = false;
    try {
      expect((await logging.app.inject({ url: '/health/ready' })).statusCode).toBe(200);
      const relayPort = new URL(relay.address('postgres://x@127.0.0.1:1/x')).port;
      await relay.closeAll();
      refusing = true;
      await vi.waitFor(
        async () => {
          const probe = await logging.app.inject({ url: '/health/ready' });
          expect(probe.statusCode).toBe(503);
          expect(probe.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'Not ready: the database cannot be reached' });
          expect(probe.body).not.toContain(relayPort);
          expect(logging.logged()).toContain(`ECONNREFUSED 127.0.0.1:${relayPort}`);
        },
        { timeout: 15_000, interval: 200 },
      );
      expect(logging.logged()).toContain('readiness probe: the database query failed');
      await relay.listen();
      refusing = false;
      await vi.waitFor(async () => expect((await logging.app.inject({ url: '/health/ready' })).statusCode).toBe(200), { timeout: 15_000, interval: 200 });
    } finally {
      await logging.close();
      if (refusing) await relay.listen();
      await t.close();
      await relay.closeAll();
    }
  });
});
