/**
 * PostgreSQL's own CPU time per internal transfer, for batches of the write statement the server
 * sends (`assumeInternalTransfers` + `processInternalTransfers` + the idempotency records), by
 * batch size. Not a scenario of `npm run bench`: a measuring tool for changes to that statement
 * or to the schema it writes.
 *
 *   npx tsx bench/tools/pg-batch-cost.ts            # batch sizes 1, 4, 16 and 64
 *   BATCHES=16 SETUPS='{"a":["…sql…"],"b":["…sql…"]}' npx tsx bench/tools/pg-batch-cost.ts
 *
 * One connection writes the batches one after another; the time is the database process's
 * on-CPU time around each batch (the first field of /proc/<pid>/schedstat, in nanoseconds), so
 * neither the network, nor this process, nor time the hypervisor took is counted. The variants
 * (batch sizes, or named lists of SQL statements run when switching to them) alternate every
 * BLOCK batches, so the machine's drift weighs on all of them alike; after each switch one batch
 * is written and not counted. Linux only; works in database BENCH_DATABASE_TOOL (default
 * openbaas_batch_cost) on the bench's PostgreSQL, which it drops and recreates.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { sql } from 'kysely';
import { loadConfig } from '../../src/platform/config.js';
import { openDeps } from '../../src/main.js';
import { withPipelinedTransaction } from '../../src/platform/db/pipelined-transaction.js';
import { WriteStatement } from '../../src/platform/db/write-statement.js';
import { idempotencyRecordsStatement } from '../../src/platform/http/write-batcher.js';
import { envelopeOf } from '../../src/platform/http/idempotency.js';
import { assumeInternalTransfers, processInternalTransfers } from '../../src/modules/internal-transfers/internal-transfers.service.js';
import { recreateDatabase } from '../support/postgres.js';
import { seedWallets, targetEnv } from '../support/setup.js';

const walletCount = 10_000;
const batchSizes = (process.env.BATCHES ?? '1,4,16,64').split(',').map(Number);
const setups = JSON.parse(process.env.SETUPS ?? '{}') as Record<string, string[]>;
const block = Number(process.env.BLOCK ?? 1);
const batchesPerVariant = Number(process.env.BATCHES_PER_VARIANT ?? 200);

interface Variant {
  name: string;
  batchSize: number;
  statements: string[];
}
const variants: Variant[] =
  Object.keys(setups).length > 0
    ? Object.entries(setups).map(([name, statements]) => ({ name, batchSize: batchSizes[0] ?? 16, statements }))
    : batchSizes.map((batchSize) => ({ name: `batch=${batchSize}`, batchSize, statements: [] }));

const url = await recreateDatabase(process.env.BENCH_DATABASE_TOOL ?? 'openbaas_batch_cost');
const seeded = await seedWallets({ databaseUrl: url }, walletCount, 1_000_000_00n);
const deps = await openDeps(loadConfig({ ...targetEnv({ databaseUrl: url }), LOG_LEVEL: 'silent', DB_POOL_MAX: '1' }, { runWorkers: false }));

async function writeBatch(size: number): Promise<void> {
  const now = new Date();
  const items = Array.from({ length: size }, () => {
    const source = Math.floor(Math.random() * walletCount);
    const other = Math.floor(Math.random() * (walletCount - 1));
    const destination = other >= source ? other + 1 : other;
    return {
      context: { clientId: seeded.clientId, traceId: crypto.randomUUID(), now },
      input: { sourceWalletId: seeded.wallets[source] ?? '', destinationWalletId: seeded.wallets[destination] ?? '', amount: '0.01', asset: 'USD' },
    };
  });
  // Sent as the server sends it: the write alone, as one transaction behind a single Sync.
  await withPipelinedTransaction(deps.database.pool, async (tx) => {
    const loaded = assumeInternalTransfers(tx, items, 'sandbox');
    const write = new WriteStatement();
    const outcomes = await processInternalTransfers(tx, loaded, items.map((_, index) => index), write);
    const records = items.map((item, index) => {
      const outcome = outcomes[index];
      if (!outcome?.ok) throw new Error('a transfer of the batch was refused');
      const response = { statusCode: 201, body: envelopeOf(outcome.result, item.context) };
      return { clientId: seeded.clientId, key: crypto.randomUUID(), hash: crypto.randomBytes(32), method: 'POST', path: '/internal-transfer', response, createdAt: now };
    });
    write.add('idempotency_keys', idempotencyRecordsStatement(records));
    return { result: undefined, last: write.compile(tx) };
  });
}

try {
  const pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(deps.db)).rows[0]?.pid;
  const onCpuNs = () => Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  const totals = new Map<string, { ns: number; transfers: number; perTransferUs: number[] }>();
  let current: Variant | undefined;
  for (let index = 0; index < batchesPerVariant * variants.length; index++) {
    const variant = variants[Math.floor(index / block) % variants.length];
    if (!variant) throw new Error('no variant');
    if (variant !== current) {
      for (const statement of variant.statements) await sql.raw(statement).execute(deps.db);
      current = variant;
      await writeBatch(variant.batchSize);
    }
    const before = onCpuNs();
    await writeBatch(variant.batchSize);
    const spent = onCpuNs() - before;
    const total = totals.get(variant.name) ?? { ns: 0, transfers: 0, perTransferUs: [] };
    total.ns += spent;
    total.transfers += variant.batchSize;
    total.perTransferUs.push(spent / variant.batchSize / 1000);
    totals.set(variant.name, total);
  }
  for (const [name, total] of totals) {
    const sorted = [...total.perTransferUs].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
    console.log(`${name}: postgres_us_per_transfer=${(total.ns / total.transfers / 1000).toFixed(1)} median=${median.toFixed(1)} batches=${sorted.length}`);
  }
} finally {
  await deps.database.close();
}
