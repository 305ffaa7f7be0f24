import crypto from 'node:crypto';
import { loadConfig } from '../../src/platform/config.js';
import { openDeps } from '../../src/main.js';
import type { Deps } from '../../src/platform/deps.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { findAsset } from '../../src/platform/money/assets.js';
import { createClientWithKey } from '../../src/modules/tenants/tenants.service.js';
import { LedgerBatch, verifyLedger, type TransferOperation, type VerifyReport } from '../../src/modules/ledger/index.js';

export interface Target {
  /** PostgreSQL connection string, or undefined for the embedded database in dataDir. */
  databaseUrl?: string;
  dataDir?: string;
}

export function targetEnv(target: Target): Record<string, string> {
  return target.databaseUrl ? { DATABASE_URL: target.databaseUrl } : { DATA_DIR: target.dataDir ?? '' };
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

/** TEMPORARY until the customers module lands: wallet ids only (the stand-in directory accepts any). */
async function createWallets(_deps: Deps, _clientId: string, count: number): Promise<string[]> {
  return Array.from({ length: count }, () => crypto.randomUUID());
}

export async function verify(target: Target): Promise<VerifyReport> {
  return withDeps(target, (deps) => verifyLedger(deps.db));
}
