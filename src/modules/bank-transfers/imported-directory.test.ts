import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { expectLedgerClean, fund, linkedWallet, withdrawalBody, type LinkedWallet } from '../../../test/bank/fixtures.js';
import { packageRoot } from '../../paths.js';
import { importDirectoryFiles } from '../bank-directory/index.js';

/**
 * Withdrawals and counterparties validate against the directory in use: after the official
 * FedACH and Fedwire files are imported, a bank that only those files list is known, with the
 * files' own name and city. Reads ../shared/data/bank-directory when present (never committed).
 */
const sampleFolder = path.resolve(packageRoot, '..', 'shared', 'data', 'bank-directory');
const samplesPresent = ['FedACHdir.txt', 'fpddir.txt'].every((file) => fs.existsSync(path.join(sampleFolder, file)));
// In both sample files, and not in the built-in directory.
const importedOnly = '074006674';

describe.skipIf(!samplesPresent)('bank rails on the imported official directory (skipped: ../shared/data/bank-directory is missing)', () => {
  let t: TestContext;
  let wallet: LinkedWallet;

  beforeAll(async () => {
    t = await createTestApp();
    wallet = await linkedWallet(t);
    await fund(t, wallet, '100.00');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a routing number listed only in the imported files becomes usable, with the files\' bank data', async () => {
    const before = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { routingNumber: importedOnly }) });
    expect(before.status).toBe(404);
    expect(before.body.code).toBe('BANK_NOT_FOUND');

    const imported = await importDirectoryFiles(t.deps.db, { fedach: path.join(sampleFolder, 'FedACHdir.txt'), fedwire: path.join(sampleFolder, 'fpddir.txt') }, t.clock.now());
    expect(imported.map((entry) => entry.kind)).toEqual(['FEDACH', 'FEDWIRE']);

    for (const transferNetwork of ['ACH_DOMESTIC', 'FEDWIRE_DOMESTIC']) {
      const response = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { routingNumber: importedOnly, transferNetwork }) });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data.beneficiary).toMatchObject({ bankName: 'THE NATIONAL BANK OF INDIANAPOLIS', bankCity: 'INDIANAPOLIS', bankState: 'IN', bankCountry: 'US' });
    }
    const counterparty = await t.request({
      method: 'POST',
      url: `/v1/customers/${wallet.customerId}/portfolios/${wallet.portfolioId}/counterparties`,
      body: { transferNetwork: 'ACH_DOMESTIC', accountHolderName: 'Hoosier Supply Co', routingNumber: importedOnly },
    });
    expect(counterparty.body.data).toMatchObject({ bankName: 'THE NATIONAL BANK OF INDIANAPOLIS', bankState: 'IN' });
    await expectLedgerClean(t);
  });
});
