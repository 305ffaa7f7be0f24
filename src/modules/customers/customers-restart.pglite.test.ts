import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import { openDeps } from '../../main.js';
import { loadConfig } from '../../platform/config.js';
import { encryptionKeyFileName } from '../../platform/crypto/field-cipher.js';
import { createClientWithKey } from '../tenants/tenants.service.js';
import { individualBody } from '../../../test/customers/fixtures.js';
import { migratedDataFolder } from '../../../test/support/temp-folder.js';

// The embedded database without OPENBAAS_ENCRYPTION_KEY: the generated key lives in the data
// folder, so encrypted fields still read after the program restarts.
describe('embedded database encryption key', () => {
  it('keeps encrypted document numbers readable across a restart', async () => {
    const config = loadConfig({ DATA_DIR: migratedDataFolder('customers'), LOG_LEVEL: 'silent' });
    const first = await openDeps(config);
    const { customerId, key } = await (async (deps) => {
      try {
        const { app } = await buildApp(deps, { logger: false });
        const created = await createClientWithKey(deps, 'Restart Co');
        const key = created.apiKey.key;
        const response = await app.inject({
          method: 'POST',
          url: '/v1/customers/individual',
          headers: { authorization: key },
          payload: individualBody({}, { documentPassport: 'K0000001' }),
        });
        expect(response.statusCode, response.body).toBe(201);
        await app.close();
        return { customerId: String(JSON.parse(response.body).data.id), key };
      } finally {
        await deps.database.close();
      }
    })(first);
    expect(fs.existsSync(path.join(config.dataDir, encryptionKeyFileName))).toBe(true);

    // A fresh configuration object, as a new process would have.
    const deps = await openDeps(loadConfig({ DATA_DIR: config.dataDir, LOG_LEVEL: 'silent' }));
    try {
      const { app } = await buildApp(deps, { logger: false });
      const response = await app.inject({ url: `/v1/customers/${customerId}`, headers: { authorization: key } });
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body).data.kyc).toMatchObject({ documentPassport: '****0001', documentSsn: '***-**-6789' });
      await app.close();
    } finally {
      await deps.database.close();
    }
  });
});
