import { describe, expect, it, vi } from 'vitest';
import { DatabaseRelay } from './support/database-relay.js';
import { programProcessesSuite } from './support/processes.js';

/**
 * A separate `openbaas worker` whose database stops taking connections (a restart, a failover):
 * it goes on, its tasks failing and trying again, and works again once the database answers.
 * Until 2026-12-07 it ended with status 0 as soon as its pool had lost every connection and a new
 * one was refused: nothing else held the process open, so nothing was delivered after the
 * database came back (found by an audit). PostgreSQL only: the worker is a process of its own.
 */
const suite = programProcessesSuite();

describe('a worker whose database refuses connections (PostgreSQL only)', () => {
  it('keeps running through the outage, connects again once the database answers, and stops on SIGTERM', async () => {
    const relay = new DatabaseRelay(new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'));
    await relay.listen();
    let running = false;
    const worker = suite.processes.start(['worker'], {
      route: (url) => relay.address(url),
      progress: (line) => {
        if (line.includes('workers running in')) running = true;
      },
    });
    try {
      await vi.waitFor(() => expect(running).toBe(true), { timeout: 60_000, interval: 100 });
      // The outage: every connection closed, and new ones refused.
      await relay.closeAll();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(worker.exitCode, 'the worker ended during the outage').toBeNull();
      const before = relay.accepted;
      await relay.listen();
      await vi.waitFor(() => expect(relay.accepted).toBeGreaterThan(before), { timeout: 30_000, interval: 100 });
      expect(worker.exitCode).toBeNull();
    } finally {
      const exited = new Promise<number | null>((resolve) => {
        if (worker.exitCode !== null) resolve(worker.exitCode);
        else worker.once('exit', (code) => resolve(code));
      });
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
      await relay.closeAll();
    }
  }, 120_000);
});
