import http from 'node:http';
import pg from 'pg';
import type { Scenario, ScenarioResult } from '../lib.js';
import { cpuFigures, cpuPerUnit, cpuSnapshot, type CpuPerUnit } from '../support/cpu.js';
import { postJson } from '../support/http-rounds.js';
import { anchorDeliveriesCte, anchorIdFunctionSql, checkpoint, recreateDatabase, runSql } from '../support/postgres.js';
import { buildOnce, startServer, withServerLog, type RunningServer } from '../support/server.js';
import { seedWallets, targetEnv, verify, withDeps, type Target } from '../support/setup.js';
import { benchEnv, describeMachine } from '../support/settings.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import type { Deps } from '../../src/platform/deps.js';
import { cryptoSettingsOf } from '../../src/modules/crypto/crypto-transfers.routes.js';
import { getOrCreateAddress, receiveCryptoDeposit } from '../../src/modules/crypto/crypto-transfers.service.js';
import { describeCryptoNetwork } from '../../src/modules/crypto/networks.js';

/**
 * Issue 21 item 8: N pending BTC deposits on BITCOIN, spread over the deposit addresses of
 * `walletCount` wallets of one client, are confirmed by one POST /v1/sandbox/chains/BITCOIN/blocks
 * with `count` = the network's requirement (3), against the running server on PostgreSQL, timed
 * from send to answer; the answer must say `completed` = N. Value: deposits completed per second.
 *
 * The anchor, in the same run, on the same database, right after ours: a fresh set of N pending
 * deposits made the same way, completed by plain SQL in one transaction (the chain's height
 * raised, then one statement of data-modifying CTEs doing per deposit what completion does:
 * the crypto_transfers row updated, its CRYPTO_DEPOSIT_SUCCESS child inserted, the pending
 * credit CLEARED, the wallet account's PENDING moved to AVAILABLE (one UPDATE per account), the
 * PENDING_CLEAR ledger transfer, its entry and the wallet history record inserted, the
 * CRYPTO_DEPOSIT_TRANSACTION_COMPLETED event and its deliveries inserted). Ratio: ours / anchor.
 *
 * Sizes (BENCH_CRYPTO_SIZES, default 1,000, 2,500, 5,000, 10,000) run in turn, ours then the
 * anchor for each, every measurement on fresh deposits, a CHECKPOINT and an ANALYZE before each,
 * after an unmeasured warm-up of BENCH_CRYPTO_WARMUP (200) deposits each way; the time per
 * deposit across sizes shows whether the time grows linearly (per_deposit_growth: the largest
 * size's time per deposit over the lowest of any size; growth_exponent: log(t_max/t_min) over
 * log(N_max/N_min), 1 = linear). The deposits are
 * genuine: made in-process by the service function (receiveCryptoDeposit, the sandbox route's
 * own), `depositsPerTransaction` to a transaction. `ledger verify` must be clean at the end.
 */
const network = 'BITCOIN';
const asset = 'BTC';
const sizes = (process.env.BENCH_CRYPTO_SIZES ?? '1000,2500,5000,10000').split(',').map((size) => Number(size.trim()));
const walletCount = Number(process.env.BENCH_CRYPTO_WALLETS ?? 1_000);
const depositsPerTransaction = 500;
const targetRatio = 0.5;
/** Deposits mined (ours, then the anchor) before the sizes, not measured: the server's first blocks call compiles its path. */
const warmupDeposits = Number(process.env.BENCH_CRYPTO_WARMUP ?? 200);
/**
 * Linear enough: the time per deposit at the largest size is at most this many times the lowest
 * time per deposit of any size (a fixed cost makes small sizes dearer per deposit, which is not growth).
 */
const perDepositGrowthMax = 1.25;
const btcScale = 8;


/** Raises the chain as the blocks call does; $4 is the count. Returns the height before. */
const anchorRaiseChain = `
INSERT INTO crypto_chain_heights (client_id, network, height, mined_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (client_id, network) DO UPDATE SET height = crypto_chain_heights.height + EXCLUDED.height, mined_at = EXCLUDED.mined_at
RETURNING height - $3 AS before`;

/**
 * Completes every PENDING deposit of client $1 on network $2: $3 confirmations added, $4 the
 * height before, $5 the moment, $6 the trace id, $7 the asset's scale. Returns the count.
 */
export const anchorCompleteDeposits = `
WITH locked AS MATERIALIZED (
  SELECT t.client_id, t.id, t.wallet_id, t.pending_credit_id, t.asset, t.network, t.amount, t.fee, t.tx_hash,
    t.confirmations + $3::int AS confirmations, coalesce(t.block_number, $4::bigint + 1) AS block_number
  FROM crypto_transfers t
  WHERE t.client_id = $1 AND t.network = $2 AND t.status = 'PENDING' AND t.direction = 'DEPOSIT'
  ORDER BY t.id
  FOR UPDATE
),
pending AS MATERIALIZED (
  SELECT l.*, o.rn,
    bench_anchor_id($5, o.rn) AS child_id, bench_anchor_id($5, o.rn) AS ledger_transfer_id,
    bench_anchor_id($5, o.rn) AS record_id, bench_anchor_id($5, o.rn) AS event_id
  FROM locked l JOIN (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM locked) o ON o.id = l.id
),
transfers AS (
  UPDATE crypto_transfers t SET status = 'COMPLETED', confirmations = p.confirmations, block_number = p.block_number, updated_at = $5
  FROM pending p WHERE t.client_id = p.client_id AND t.id = p.id
  RETURNING 1
),
children AS (
  INSERT INTO crypto_transactions (client_id, id, crypto_transfer_id, type, status, confirmations, failure_reason, created_at)
  SELECT client_id, child_id, id, 'CRYPTO_DEPOSIT_SUCCESS', 'COMPLETED', confirmations, NULL, $5 FROM pending
  RETURNING 1
),
credits AS (
  UPDATE ledger_pending_credits c SET status = 'CLEARED', updated_at = $5
  FROM pending p WHERE c.client_id = p.client_id AND c.id = p.pending_credit_id AND c.status = 'PENDING'
  RETURNING c.client_id, c.id, c.account_id, c.asset, c.amount
),
cleared AS MATERIALIZED (
  SELECT p.client_id, p.id, p.wallet_id, p.pending_credit_id, p.child_id, p.ledger_transfer_id, p.record_id, c.account_id, c.asset, c.amount
  FROM pending p JOIN credits c ON c.client_id = p.client_id AND c.id = p.pending_credit_id
),
accounts AS (
  UPDATE ledger_accounts a SET
    available = a.available + d.amount,
    pending = a.pending - d.amount,
    overdrawn = LEAST(a.overdrawn, GREATEST(0, -(a.available + d.amount)))
  FROM (SELECT client_id, account_id, sum(amount) AS amount FROM cleared GROUP BY client_id, account_id) d
  WHERE a.client_id = d.client_id AND a.id = d.account_id
  RETURNING 1
),
ledger AS (
  INSERT INTO ledger_transfers (client_id, id, kind, parent_transaction_id, hold_id, pending_credit_id, description, created_at)
  SELECT client_id, ledger_transfer_id, 'PENDING_CLEAR', id, NULL, pending_credit_id, NULL, $5 FROM cleared
  RETURNING 1
),
entries AS (
  INSERT INTO ledger_entries (client_id, transfer_id, entry_index, asset, amount, debit_account_id, debit_balance, credit_account_id, credit_balance, created_at)
  SELECT client_id, ledger_transfer_id, 0, asset, amount, account_id, 'PENDING', account_id, 'AVAILABLE', $5 FROM cleared
  RETURNING 1
),
records AS (
  INSERT INTO wallet_transactions (client_id, id, parent_transaction_id, wallet_id, ledger_transfer_id, type, purpose, operation,
    balance_type, status, amount, asset, crypto_transaction_id, parent_crypto_transaction_id, created_at)
  SELECT client_id, record_id, id, wallet_id, ledger_transfer_id, 'CRYPTO_DEPOSIT', 'CLEARING', 'CREDIT', 'AVAILABLE', 'COMPLETED',
    amount, asset, child_id, id, $5 FROM cleared
  RETURNING 1
),
events_written AS (
  INSERT INTO events (client_id, id, type, data, created_at)
  SELECT client_id, event_id, 'CRYPTO_DEPOSIT_TRANSACTION_COMPLETED',
    jsonb_build_object('walletId', wallet_id, 'cryptoTransactionId', child_id, 'parentCryptoTransactionId', id, 'asset', asset,
      'network', network, 'amount', round(amount / (10::numeric ^ $7::int), $7::int)::text, 'fee', round(fee / (10::numeric ^ $7::int), $7::int)::text,
      'txHash', tx_hash, 'confirmations', confirmations, 'status', 'COMPLETED', 'failureReason', NULL, 'traceId', $6::text),
    $5
  FROM pending
  RETURNING client_id, id, type, created_at
),
${anchorDeliveriesCte}
SELECT (SELECT count(*) FROM transfers)::int AS transfers, (SELECT count(*) FROM children)::int AS children,
  (SELECT count(*) FROM cleared)::int AS cleared, (SELECT count(*) FROM accounts)::int AS accounts,
  (SELECT count(*) FROM ledger)::int AS ledger, (SELECT count(*) FROM entries)::int AS entries,
  (SELECT count(*) FROM records)::int AS records, (SELECT count(*) FROM events_written)::int AS events,
  (SELECT count(*) FROM deliveries)::int AS deliveries`;

interface Measurement {
  seconds: number;
  completed: number;
  cpu: CpuPerUnit | undefined;
}

interface SizeResult {
  size: number;
  ours: Measurement;
  anchor: Measurement;
  oursPerSecond: number;
  anchorPerSecond: number;
  ratio: number;
  oursMsPerDeposit: number;
  anchorMsPerDeposit: number;
  setupS: number;
}

/** The deposit addresses (BITCOIN) of every wallet, made by the service as POST /v1/digital/addresses does. */
async function createAddresses(deps: Deps, clientId: string, wallets: readonly string[]): Promise<string[]> {
  const settings = cryptoSettingsOf(deps);
  return withTransaction(deps.db, async (tx) => {
    const addresses: string[] = [];
    for (const walletId of wallets) {
      const context = { clientId, traceId: 'bench-setup', now: deps.clock.now() };
      addresses.push((await getOrCreateAddress(tx, context, settings, { walletId, asset, network })).address.address);
    }
    return addresses;
  });
}

/** `count` pending deposits, round robin over the addresses, by the sandbox route's service function. */
async function createDeposits(deps: Deps, clientId: string, addresses: readonly string[], count: number, serial: { next: number }): Promise<void> {
  const settings = cryptoSettingsOf(deps);
  for (let start = 0; start < count; start += depositsPerTransaction) {
    const end = Math.min(count, start + depositsPerTransaction);
    await withTransaction(deps.db, async (tx) => {
      for (let index = start; index < end; index++) {
        const n = serial.next++;
        const context = { clientId, traceId: 'bench-setup', now: deps.clock.now() };
        // 0.00010000 to 0.00019999 BTC.
        const amount = `0.${String(10_000 + (n % 10_000)).padStart(btcScale, '0')}`;
        const deposit = await receiveCryptoDeposit(tx, context, settings, { address: addresses[n % addresses.length] ?? '', asset, amount });
        if (deposit.status !== 'PENDING') throw new Error(`a setup deposit is ${deposit.status}, not PENDING`);
      }
    });
  }
}

async function pendingCount(deps: Deps, clientId: string): Promise<number> {
  const row = await deps.db
    .selectFrom('crypto_transfers')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('client_id', '=', clientId)
    .where('network', '=', network)
    .where('status', '=', 'PENDING')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function prepare(url: string): Promise<void> {
  await runSql(url, ['ANALYZE']);
  await checkpoint(url);
}

/** Ours: one blocks call over HTTP, timed from send to answer. */
async function measureOurs(server: RunningServer, apiKey: string, count: number, expected: number): Promise<Measurement> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const url = new URL(server.url);
    const before = cpuSnapshot(server.pid);
    const started = performance.now();
    const answer = await postJson(agent, url, `/v1/sandbox/chains/${network}/blocks`, apiKey, { count });
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuPerUnit(before, cpuSnapshot(server.pid), expected);
    if (answer.status !== 200) throw new Error(`the blocks call answered ${answer.status}: ${answer.body.slice(0, 2000)}`);
    const data = (JSON.parse(answer.body) as { data: { completed: number; confirmed: number; failed: number } }).data;
    if (data.completed !== expected || data.confirmed !== expected || data.failed !== 0) {
      throw new Error(`the blocks call completed ${data.completed} (confirmed ${data.confirmed}, failed ${data.failed}) of ${expected} pending deposits`);
    }
    return { seconds, completed: data.completed, cpu };
  } finally {
    agent.destroy();
  }
}

/** The anchor: plain SQL in one transaction on its own connection, timed from BEGIN to the end of COMMIT. */
async function measureAnchor(url: string, clientId: string, count: number, expected: number): Promise<Measurement> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const now = new Date();
    const before = cpuSnapshot();
    const started = performance.now();
    await client.query('BEGIN');
    const raised = await client.query<{ before: string }>(anchorRaiseChain, [clientId, network, count, now]);
    const result = await client.query<Record<string, number>>(anchorCompleteDeposits, [clientId, network, count, raised.rows[0]?.before ?? 0, now, 'bench-anchor', btcScale]);
    await client.query('COMMIT');
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuPerUnit(before, cpuSnapshot(), expected);
    const counts = result.rows[0] ?? {};
    for (const name of ['transfers', 'children', 'cleared', 'ledger', 'entries', 'records', 'events']) {
      if (counts[name] !== expected) throw new Error(`the anchor wrote ${counts[name]} ${name} for ${expected} deposits: ${JSON.stringify(counts)}`);
    }
    return { seconds, completed: counts.cleared ?? 0, cpu };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/** How time grows with N between two sizes, as a power (1 = linear). */
function growthExponent(small: SizeResult, large: SizeResult, side: 'ours' | 'anchor'): number {
  return Math.log(large[side].seconds / small[side].seconds) / Math.log(large.size / small.size);
}

async function runCryptoConfirm(): Promise<ScenarioResult> {
  if (sizes.length === 0 || sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Error(`BENCH_CRYPTO_SIZES must list whole numbers, got ${process.env.BENCH_CRYPTO_SIZES}`);
  await buildOnce();
  const url = await recreateDatabase();
  const target: Target = { databaseUrl: url };
  const setupStarted = performance.now();
  const seeded = await seedWallets(target, walletCount, 1_000_00n);
  await runSql(url, [anchorIdFunctionSql]);
  const server = await startServer({ ...benchEnv, ...targetEnv(target) });
  const results: SizeResult[] = [];
  let required = 0;
  let peakRssMiB: number;
  try {
    await withDeps(target, async (deps) => {
      required = describeCryptoNetwork(network, { bitcoinNetwork: deps.config.bitcoinNetwork }).confirmationsRequired;
      const addresses = await createAddresses(deps, seeded.clientId, seeded.wallets);
      console.log(`crypto-confirm: ${seeded.wallets.length} wallets with ${network} addresses in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s; ${network} needs ${required} confirmations`);
      const serial = { next: 0 };
      if (warmupDeposits > 0) {
        await createDeposits(deps, seeded.clientId, addresses, warmupDeposits, serial);
        await measureOurs(server, seeded.apiKey, required, warmupDeposits);
        await createDeposits(deps, seeded.clientId, addresses, warmupDeposits, serial);
        await measureAnchor(url, seeded.clientId, required, warmupDeposits);
      }
      for (const size of sizes) {
        const made = performance.now();
        await createDeposits(deps, seeded.clientId, addresses, size, serial);
        if ((await pendingCount(deps, seeded.clientId)) !== size) throw new Error(`expected ${size} pending deposits before the blocks call`);
        let setupS = (performance.now() - made) / 1000;
        await prepare(url);
        const ours = await measureOurs(server, seeded.apiKey, required, size);
        if ((await pendingCount(deps, seeded.clientId)) !== 0) throw new Error('deposits are still pending after the blocks call');

        const madeAgain = performance.now();
        await createDeposits(deps, seeded.clientId, addresses, size, serial);
        if ((await pendingCount(deps, seeded.clientId)) !== size) throw new Error(`expected ${size} pending deposits before the anchor`);
        setupS += (performance.now() - madeAgain) / 1000;
        await prepare(url);
        const anchor = await measureAnchor(url, seeded.clientId, required, size);
        if ((await pendingCount(deps, seeded.clientId)) !== 0) throw new Error('deposits are still pending after the anchor');

        const result: SizeResult = {
          size,
          ours,
          anchor,
          oursPerSecond: size / ours.seconds,
          anchorPerSecond: size / anchor.seconds,
          ratio: anchor.seconds / ours.seconds,
          oursMsPerDeposit: (ours.seconds * 1000) / size,
          anchorMsPerDeposit: (anchor.seconds * 1000) / size,
          setupS,
        };
        results.push(result);
        console.log(
          `crypto-confirm: N=${size}: ours ${ours.seconds.toFixed(3)} s (${result.oursPerSecond.toFixed(0)}/s, ${result.oursMsPerDeposit.toFixed(3)} ms each, server CPU ${ours.cpu?.serverUs.toFixed(0)} us + PostgreSQL ${ours.cpu?.postgresUs.toFixed(0)} us each); ` +
            `anchor ${anchor.seconds.toFixed(3)} s (${result.anchorPerSecond.toFixed(0)}/s, ${result.anchorMsPerDeposit.toFixed(3)} ms each, PostgreSQL ${anchor.cpu?.postgresUs.toFixed(0)} us each); ratio ${result.ratio.toFixed(3)}; setup ${setupS.toFixed(1)} s`,
        );
      }
    });
  } catch (error) {
    throw withServerLog(error, server);
  } finally {
    peakRssMiB = server.peakRssMiB();
    await server.stop();
  }
  const report = await verify(target);
  if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);

  const largest = results.reduce((best, result) => (result.size > best.size ? result : best));
  const smallest = results.reduce((best, result) => (result.size < best.size ? result : best));
  const oursExponent = results.length > 1 ? growthExponent(smallest, largest, 'ours') : Number.NaN;
  const anchorExponent = results.length > 1 ? growthExponent(smallest, largest, 'anchor') : Number.NaN;
  const perDepositGrowth = largest.oursMsPerDeposit / Math.min(...results.map((result) => result.oursMsPerDeposit));
  const anchorPerDepositGrowth = largest.anchorMsPerDeposit / Math.min(...results.map((result) => result.anchorMsPerDeposit));
  const perSize = Object.fromEntries(
    results.flatMap((result) => [
      [`s${result.size}_ms`, result.ours.seconds * 1000],
      [`s${result.size}_anchor_ms`, result.anchor.seconds * 1000],
      [`s${result.size}_ratio`, result.ratio],
    ]),
  );
  return {
    scenario: 'crypto-confirm',
    ratio: largest.ratio,
    figures: {
      value: largest.oursPerSecond,
      anchor: largest.anchorPerSecond,
      deposits: largest.size,
      // Every size together (total deposits over total seconds, each side): less sensitive to one noisy measurement.
      ratio_all_sizes: results.reduce((sum, result) => sum + result.anchor.seconds, 0) / results.reduce((sum, result) => sum + result.ours.seconds, 0),
      ...perSize,
      ms_per_deposit: results.map((result) => result.oursMsPerDeposit.toFixed(3)).join('/'),
      anchor_ms_per_deposit: results.map((result) => result.anchorMsPerDeposit.toFixed(3)).join('/'),
      growth_exponent: oursExponent,
      anchor_growth_exponent: anchorExponent,
      per_deposit_growth: perDepositGrowth,
      anchor_per_deposit_growth: anchorPerDepositGrowth,
      ...cpuFigures(largest.ours.cpu),
      ...cpuFigures(largest.anchor.cpu, 'anchor_'),
      ...(largest.anchor.cpu ? { anchor_cpu_postgres_us: largest.anchor.cpu.postgresUs } : {}),
      peak_rss_mib: peakRssMiB,
      target: targetRatio,
      ratio_check: largest.ratio >= targetRatio ? 'PASS' : 'FAIL',
      linear_check: perDepositGrowth <= perDepositGrowthMax ? 'PASS' : 'FAIL',
      verify: report.ok ? 'clean' : 'FAILED',
    },
    extra: {
      machine: describeMachine(),
      network,
      asset,
      confirmationsRequired: required,
      walletCount,
      sizes,
      depositsPerTransaction,
      perDepositGrowthMax,
      warmupDeposits,
      results,
      anchorSql: anchorCompleteDeposits,
      ledgerTotals: report.totals,
    },
  };
}

export const cryptoConfirm: Scenario = {
  name: 'crypto-confirm',
  description: `N pending ${asset} deposits on ${network} over ${walletCount} wallets of one client (N = ${sizes.join(', ')}) completed by one POST /v1/sandbox/chains/${network}/blocks, PostgreSQL; unit: a deposit completed; anchor: the same completion of fresh deposits by plain set-based SQL in one transaction, right after ours; ratio at the largest N`,
  run: runCryptoConfirm,
};
