import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import { openDeps } from '../../main.js';
import { loadConfig } from '../../platform/config.js';
import { createClientWithKey } from '../tenants/tenants.service.js';
import { webhookSecretBoxOf } from './webhook-secrets.js';
import { generateSecret } from './webhook-signing.js';
import { migratedDataFolder } from '../../../test/support/temp-folder.js';

// A subscription whose secret is still in plain text, as every subscription created before
// migration 0012 is: the next start of the program encrypts it, and it opens to the same secret.
describe('webhook secrets written before migration 0012', () => {
  it('are encrypted when the program starts, and still open to the same secret', async () => {
    const config = loadConfig({ DATA_DIR: migratedDataFolder('webhooks'), LOG_LEVEL: 'silent' });
    const legacy = generateSecret();
    const first = await openDeps(config);
    const { clientId, webhookId } = await (async (deps) => {
      try {
        const { app } = await buildApp(deps, { logger: false });
        const created = await createClientWithKey(deps, 'Legacy Co');
        const response = await app.inject({
          method: 'POST',
          url: '/v1/webhooks',
          headers: { authorization: created.apiKey.key },
          payload: { name: 'legacy', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] },
        });
        expect(response.statusCode, response.body).toBe(201);
        await app.close();
        const webhookId = String(JSON.parse(response.body).data.id);
        await sql`UPDATE webhook_subscriptions SET secret = ${legacy} WHERE id = ${webhookId}`.execute(deps.db);
        return { clientId: created.client.id, webhookId };
      } finally {
        await deps.database.close();
      }
    })(first);

    const deps = await openDeps(loadConfig({ DATA_DIR: config.dataDir, LOG_LEVEL: 'silent' }));
    try {
      const row = await deps.db.selectFrom('webhook_subscriptions').select('secret').where('id', '=', webhookId).executeTakeFirstOrThrow();
      expect(row.secret).toMatch(/^v1\./);
      expect(webhookSecretBoxOf(deps).open(clientId, webhookId, row.secret)).toBe(legacy);
    } finally {
      await deps.database.close();
    }
  });
});
