import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { Scenario, ScenarioResult } from '../lib.js';
import { buildOnce } from '../support/server.js';
import { seedWallets, type Seeded } from '../support/setup.js';
import { describeMachine, durationS } from '../support/settings.js';
import { measureTransferLoad, transferFigures } from '../support/transfer-load.js';
import { transferRequests } from './transfers.js';
import type { Database } from '../../src/platform/db/schema.js';
import { WriteStatement } from '../../src/platform/db/write-statement.js';
import { advisoryLockId } from '../../src/platform/http/idempotency.js';
import { idempotencyRecordsStatement, lockAndLookupKeysStatement } from '../../src/platform/http/write-batcher.js';
import { idAt } from '../../src/platform/ids.js';
import { walletAccountId } from '../../src/modules/ledger/index.js';
import * as store from '../../src/modules/ledger/ledger.store.js';
import { addEvents } from '../../src/modules/webhooks/events.store.js';

const walletCount = 10_000;
const connections = 8;

/** Compiles our statement builders to SQL text and parameters without a connection. */
const compiler = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });

async function run(lite: { query: (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }> }, statement: RawBuilder<unknown>) {
  const compiled = statement.compile(compiler);
  return lite.query(compiled.sql, [...compiled.parameters]);
}

/**
 * The anchor: the same SQL one internal transfer runs (idempotency lock and lookup, account locks,
 * one combined write of balances, ledger transfer, entry, two wallet records, two events and the
 * idempotency record), one transfer per transaction, in a loop straight on PGlite: no HTTP, no
 * pool, no batching.
 */
async function anchorLoop(dataDir: string, seeded: Seeded): Promise<{ perSecond: number; count: number; p50Ms: number; p99Ms: number }> {
  const lite = await PGlite.create(dataDir);
  const latencies: number[] = [];
  const deadline = Date.now() + durationS * 1000;
  let count = 0;
  const clientId = seeded.clientId;
  try {
    while (Date.now() < deadline) {
      const started = performance.now();
      const next = transferRequests(seeded.wallets)();
      const body = JSON.parse(next.body) as { sourceWalletId: string; destinationWalletId: string };
      const key = next.headers['idempotency-key'];
      const now = new Date();
      await lite.transaction(async (tx) => {
        await run(tx, lockAndLookupKeysStatement([{ lockId: advisoryLockId(clientId, key), clientId, key }]));
        const sourceId = walletAccountId(clientId, body.sourceWalletId, 'USD');
        const destinationId = walletAccountId(clientId, body.destinationWalletId, 'USD');
        const accounts = (await run(tx, store.lockAccountsStatement([{ clientId, id: sourceId }, { clientId, id: destinationId }]))).rows as store.AccountRow[];
        const source = accounts.find((row) => row.id === sourceId);
        const destination = accounts.find((row) => row.id === destinationId);
        if (!source || !destination || BigInt(source.available) < 1n) throw new Error('anchor accounts missing or empty');
        const parentTransactionId = idAt(now);
        const transferId = idAt(now);
        const debitId = idAt(now);
        const creditId = idAt(now);
        const traceId = crypto.randomUUID();
        const write = new WriteStatement();
        write.add(
          'accounts',
          store.updateWalletAccountsStatement([
            { clientId, id: sourceId, ctid: source.ctid, available: -1n, reserved: 0n, pending: 0n, forced: false },
            { clientId, id: destinationId, ctid: destination.ctid, available: 1n, reserved: 0n, pending: 0n, forced: false },
          ]),
          { expectRows: 2 },
        );
        write.add('transfers', store.insertTransfersStatement([{ clientId, id: transferId, kind: 'TRANSFER', parentTransactionId, holdId: null, pendingCreditId: null, description: null, traceId, createdAt: now }]));
        write.add('entries', store.insertEntriesStatement([{ clientId, transferId, index: 0, asset: 'USD', amount: 1n, debitAccountId: sourceId, debitBalance: 'AVAILABLE', creditAccountId: destinationId, creditBalance: 'AVAILABLE', createdAt: now }]));
        const record = (id: string, walletId: string, operation: 'CREDIT' | 'DEBIT') => ({
          clientId, id, parentTransactionId, walletId, ledgerTransferId: transferId, type: 'INTERNAL_TRANSFER', purpose: 'TRANSFER', operation,
          balanceType: 'AVAILABLE' as const, status: 'COMPLETED' as const, amount: 1n, asset: 'USD', note: null, cardTransactionId: null,
          parentCardTransactionId: null, bankTransactionId: null, parentBankTransactionId: null, cryptoTransactionId: null, parentCryptoTransactionId: null, createdAt: now,
        });
        write.add('wallet_transactions', store.insertWalletTransactionsStatement([record(debitId, body.sourceWalletId, 'DEBIT'), record(creditId, body.destinationWalletId, 'CREDIT')]));
        const context = { clientId, traceId, now };
        addEvents(write, [
          { context, type: 'INTERNAL_TRANSACTION_COMPLETED', data: { walletId: body.sourceWalletId, transactionId: debitId } },
          { context, type: 'INTERNAL_TRANSACTION_COMPLETED', data: { walletId: body.destinationWalletId, transactionId: creditId } },
        ]);
        const responseBody = {
          message: 'Internal transfer completed',
          data: { parentTransactionId, type: 'INTERNAL_TRANSFER', status: 'COMPLETED', amount: '0.01', asset: 'USD', source: { walletId: body.sourceWalletId, transactionId: debitId }, destination: { walletId: body.destinationWalletId, transactionId: creditId }, createdAt: now.toISOString() },
          traceId: context.traceId,
        };
        write.add('idempotency', idempotencyRecordsStatement([{ clientId, key, hash: crypto.createHash('sha256').update(next.body).digest(), method: 'POST', path: '/internal-transfer', response: { statusCode: 201, body: responseBody }, createdAt: now }]));
        await run(tx, write.build());
      });
      latencies.push(performance.now() - started);
      count++;
    }
  } finally {
    await lite.close();
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  return { perSecond: count / durationS, count, p50Ms: at(0.5), p99Ms: at(0.99) };
}

export const embedded: Scenario = {
  name: 'embedded',
  description: `POST /internal-transfer on the embedded PGlite database (the default), random pairs among ${walletCount} funded wallets, ${connections} connections; anchor: the same SQL in a raw in-process loop on PGlite`,
  async run(): Promise<ScenarioResult> {
    await buildOnce();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-bench-embedded-'));
    try {
      const anchorTarget = { dataDir: path.join(root, 'anchor') };
      const anchorSeed = await seedWallets(anchorTarget, walletCount, 1_000_000_00n);
      const anchor = await anchorLoop(anchorTarget.dataDir, anchorSeed);

      const target = { dataDir: path.join(root, 'server') };
      const measured = await measureTransferLoad(target, { connections, walletCount });
      return {
        scenario: 'embedded',
        ratio: measured.load.okPerSecond / anchor.perSecond,
        figures: transferFigures(measured, anchor.perSecond, { anchor_p99_ms: anchor.p99Ms }),
        extra: {
          machine: describeMachine(),
          connections,
          durationS,
          walletCount,
          anchorTransfers: anchor.count,
          statusCounts: measured.load.statusCounts,
          ledgerTotals: measured.report.totals,
        },
      };
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
