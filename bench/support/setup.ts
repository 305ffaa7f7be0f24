import crypto from 'node:crypto';
import { loadConfig } from '../../src/platform/config.js';
import { openDeps } from '../../src/main.js';
import type { Deps } from '../../src/platform/deps.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { findAsset } from '../../src/platform/money/assets.js';
import { createClientWithKey } from '../../src/modules/tenants/tenants.service.js';
import { createIndividual } from '../../src/modules/customers/customers.service.js';
import { fieldCipherOf } from '../../src/platform/crypto/field-cipher.js';
import { idAt } from '../../src/platform/ids.js';
import { LedgerBatch, verifyLedger, type TransferOperation, type VerifyReport } from '../../src/modules/ledger/index.js';

export interface Target {
  /** PostgreSQL connection string, or undefined for the embedded database in dataDir. */
  databaseUrl?: string;
  dataDir?: string;
}

/** A fixed key for the bench's own throwaway databases (PostgreSQL needs one configured). */
const benchEncryptionKey = '6265 6e63 685f 6f6e 6c79 5f6b 6579 5f66 6f72 5f6c 6f61 6421 2121 2121 2121 2121'.replace(/ /g, '');

export function targetEnv(target: Target): Record<string, string> {
  return target.databaseUrl
    ? { DATABASE_URL: target.databaseUrl, OPENBAAS_ENCRYPTION_KEY: benchEncryptionKey }
    : { DATA_DIR: target.dataDir ?? '' };
}

async function withDeps<T>(target: Target, work: (deps: Deps) => Promise<T>): Promise<T> {
  const deps = await openDeps(loadConfig({ ...targetEnv(target), LOG_LEVEL: 'silent' }, { runWorkers: false }));
  try {
    return await work(deps);
  } finally {
    await deps.database.close();
  }
}

export interface Seeded {
  clientId: string;
  apiKey: string;
  wallets: string[];
}

const fundingChunk = 500;

/**
 * Creates a client with an API key and `walletCount` wallets, each funded with `fundingMinor` USD
 * from the bank settlement account through the ledger, before the server starts (the embedded
 * database can only be open in one process at a time).
 */
export async function seedWallets(target: Target, walletCount: number, fundingMinor: bigint): Promise<Seeded> {
  return withDeps(target, async (deps) => {
    const { client, apiKey } = await createClientWithKey(deps, 'Benchmark client');
    const wallets = await createWallets(deps, client.id, walletCount);
    const usd = findAsset('USD', 'sandbox');
    if (!usd) throw new Error('USD missing');
    for (let start = 0; start < wallets.length; start += fundingChunk) {
      const chunk = wallets.slice(start, start + fundingChunk);
      await withTransaction(deps.db, async (tx) => {
        const now = deps.clock.now();
        const batch = new LedgerBatch(tx, now);
        const operations: TransferOperation[] = chunk.map((walletId) => ({
          operation: 'transfer',
          clientId: client.id,
          now,
          asset: usd,
          legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId }, amount: fundingMinor }],
          history: { parentTransactionId: crypto.randomUUID(), type: 'BENCH_FUNDING' },
        }));
        for (const operation of operations) batch.declare(operation);
        await batch.load();
        for (const operation of operations) batch.apply(operation);
        await batch.flush();
      });
    }
    return { clientId: client.id, apiKey: apiKey.key, wallets };
  });
}

/**
 * One real customer (through the customers service, so its default portfolio and primary wallet
 * are made as the API makes them), then `count` wallets inserted into that portfolio in bulk, the
 * way pgbench -i fills its tables: a load fixture, not a product path.
 */
async function createWallets(deps: Deps, clientId: string, count: number): Promise<string[]> {
  const now = deps.clock.now();
  const context = { clientId, traceId: 'bench-setup', now };
  const input = {
    email: `bench-${crypto.randomUUID()}@example.com`,
    phoneNumber: '212 555 0123',
    phoneCountryCode: '+1',
    kyc: { firstName: 'Bench', lastName: 'Load', birthDate: '1990-12-10', nationality: 'US' },
  } as unknown as Parameters<typeof createIndividual>[3];
  const customer = await withTransaction(deps.db, (tx) => createIndividual(tx, context, fieldCipherOf(deps), input));
  const primary = await deps.db
    .selectFrom('wallets')
    .select(['portfolio_id'])
    .where('client_id', '=', clientId)
    .where('customer_id', '=', customer.id)
    .executeTakeFirstOrThrow();
  const wallets = Array.from({ length: count }, () => idAt(now));
  const chunk = 1000;
  for (let start = 0; start < wallets.length; start += chunk) {
    await deps.db
      .insertInto('wallets')
      .values(
        wallets.slice(start, start + chunk).map((id, index) => ({
          client_id: clientId,
          id,
          customer_id: customer.id,
          portfolio_id: primary.portfolio_id,
          name: `Load ${start + index}`,
          is_primary: false,
          virtual_account_number: null,
          dedicated_account_number: null,
          vrn: null,
          created_at: now,
        })),
      )
      .execute();
  }
  return wallets;
}

export async function verify(target: Target): Promise<VerifyReport> {
  return withDeps(target, (deps) => verifyLedger(deps.db));
}
