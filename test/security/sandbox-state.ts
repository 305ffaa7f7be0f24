import { sql } from 'kysely';
import type { TestClient, TestContext } from '../harness.js';
import type { SecurityCase } from './types.js';

/**
 * Security cases of sandbox reset and snapshots. Reset and the snapshot list name no resource (they
 * act on the caller's own data); the snapshot routes name a snapshot of the caller.
 */

/** The suite creates many snapshots: keep the client under its limit by dropping all but its newest few. */
async function pruneSnapshots(t: TestContext, client: TestClient): Promise<void> {
  await sql`
    DELETE FROM sandbox_snapshots
    WHERE client_id = ${client.id}
      AND id NOT IN (SELECT id FROM sandbox_snapshots WHERE client_id = ${client.id} ORDER BY id DESC LIMIT 5)`.execute(t.deps.db);
}

async function snapshotUrl(t: TestContext, client: TestClient): Promise<string> {
  await pruneSnapshots(t, client);
  const response = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'security' } });
  if (response.status !== 201) throw new Error(`taking a snapshot failed: ${JSON.stringify(response.body)}`);
  return `/v1/sandbox/snapshots/${response.body.data.id as string}`;
}

export const sandboxStateSecurityCases: SecurityCase[] = [
  { method: 'POST', route: '/v1/sandbox/reset', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/reset', body: { confirm: 'RESET' } }) },
  {
    method: 'POST',
    route: '/v1/sandbox/snapshots',
    ownsResource: false,
    prepare: async (t, client) => {
      await pruneSnapshots(t, client);
      return { url: '/v1/sandbox/snapshots', body: { name: 'security' } };
    },
  },
  { method: 'GET', route: '/v1/sandbox/snapshots', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/snapshots' }) },
  { method: 'GET', route: '/v1/sandbox/snapshots/:snapshotId', ownsResource: true, prepare: async (t, client) => ({ url: await snapshotUrl(t, client) }) },
  {
    method: 'POST',
    route: '/v1/sandbox/snapshots/:snapshotId/restore',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `${await snapshotUrl(t, client)}/restore`, body: {} }),
  },
  { method: 'DELETE', route: '/v1/sandbox/snapshots/:snapshotId', ownsResource: true, prepare: async (t, client) => ({ url: await snapshotUrl(t, client) }) },
];
