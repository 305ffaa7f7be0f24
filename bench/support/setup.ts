import crypto from 'node:crypto';
import { loadConfig } from '../../src/platform/config.js';
import { openDeps } from '../../src/main.js';
import type { Deps } from '../../src/platform/deps.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { findAsset } from '../../src/platform/money/assets.js';
import { createClientWithKey } from '../../src/modules/tenants/tenants.service.js';
import * as customers from '../../src/modules/customers/customers.service.js';
import { fieldCipherOf } from '../../src/platform/crypto/field-cipher.js';
import { LedgerBatch, verifyLedger, type TransferOperation, type VerifyReport } from '../../src/modules/ledger/index.js';

export interface Target {
  /** PostgreSQL connection string, or undefined for the embedded database in dataDir. */
  databaseUrl?: string;
  dataDir?: string;
}

/** One encryption key per bench run (customer fields are encrypted; PostgreSQL needs a key). */
const benchEncryptionKey = process.env.BENCH_ENCRYPTION_KEY ?? crypto.randomBytes(32).toString('hex');

export function targetEnv(target: Target): Record<string, string> {
  return {
    OPENBAAS_ENCRYPTION_KEY: benchEncryptionKey,
    ...(target.databaseUrl ? { DATABASE_URL: target.databaseUrl } : { DATA_DIR: target.dataDir ?? '' }),
  };
}

export async function withDeps<T>(target: Target, work: (deps: Deps) => Promise<T>): Promise<T> {
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
          history: { parentTransactionId: crypto.randomUUID(), type: 'BENCH_FUNDING', traceId: 'bench-setup' },
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
 * Real wallets through the customers service: individual customers, each with 20 portfolios of
 * up to 50 wallets (the module's limits), so 1,000 wallets per customer.
 */
async function createWallets(deps: Deps, clientId: string, count: number): Promise<string[]> {
  const cipher = fieldCipherOf(deps);
  const wallets: string[] = [];
  let serial = 0;
  while (wallets.length < count) {
    const context = { clientId, traceId: 'bench-setup', now: deps.clock.now() };
    const customer = await withTransaction(deps.db, (tx) =>
      customers.createIndividual(tx, context, cipher, {
        email: `bench.${serial++}.${crypto.randomBytes(4).toString('hex')}@example.com`,
        phoneNumber: '212 555 0123',
        phoneCountryCode: '+1',
        kyc: { firstName: 'Bench', lastName: 'Customer', birthDate: '1990-01-01', nationality: 'US', documentSsn: '123-45-6789' },
      }),
    );
    for (let portfolioIndex = 0; portfolioIndex < customers.portfoliosPerCustomerMax && wallets.length < count; portfolioIndex++) {
      await withTransaction(deps.db, async (tx) => {
        const portfolioId =
          portfolioIndex === 0
            ? (customer.portfolios[0]?.id ?? '')
            : (await customers.createPortfolio(tx, context, customer.id, { name: `Bench ${portfolioIndex}` })).id;
        const existing = portfolioIndex === 0 ? (customer.portfolios[0]?.wallets.length ?? 0) : 0;
        if (portfolioIndex === 0) wallets.push(...(customer.portfolios[0]?.wallets ?? []));
        for (let index = existing; index < customers.walletsPerPortfolioMax && wallets.length < count; index++) {
          wallets.push((await customers.createWallet(tx, context, customer.id, portfolioId, { name: `Bench ${index}` })).id);
        }
      });
    }
  }
  return wallets.slice(0, count);
}

export async function verify(target: Target): Promise<VerifyReport> {
  return withDeps(target, (deps) => verifyLedger(deps.db));
}
