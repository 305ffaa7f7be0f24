import http from 'node:http';
import pg from 'pg';
import { sql } from 'kysely';
import type { Scenario, ScenarioResult } from '../lib.js';
import { cpuFigures, cpuPerUnit, cpuSnapshot, type CpuPerUnit } from '../support/cpu.js';
import { sendJson } from '../support/http-rounds.js';
import { anchorDeliveriesCte, anchorIdFunctionSql, checkpoint, recreateDatabase, runSql } from '../support/postgres.js';
import { buildOnce, startServer, withServerLog } from '../support/server.js';
import { seedWallets, targetEnv, verify, withDeps, type Target } from '../support/setup.js';
import { benchEnv, describeMachine } from '../support/settings.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import type { Deps } from '../../src/platform/deps.js';
import { idAt } from '../../src/platform/ids.js';
import { findAsset } from '../../src/platform/money/assets.js';
import { LedgerBatch, type TransferOperation } from '../../src/modules/ledger/index.js';
import { createCreditLine, lockCollateral } from '../../src/modules/credit/credit-lines.service.js';
import { creditCardHistoryTypes, creditLineFunding } from '../../src/modules/credit/credit-funding.js';
import { ltvScaleFactor, ltvEventTypes } from '../../src/modules/credit/ltv.js';
import { parsePrice } from '../../src/modules/trades/prices.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';

/**
 * Issue 23 item 7: one sandbox price change (PUT /v1/sandbox/prices/BTC-USD over HTTP) recomputes
 * every open BTC credit line of one client in the price change's transaction (one set-based
 * UPDATE of credit_lines, then the LTV events it causes with their webhook deliveries), timed from
 * send to answer. Value: lines recomputed per second.
 *
 * Every line has 0.1 BTC locked and 2,950.00 to 2,999.00 USD of principal, so at the seeded
 * 60,000.00 its LTV is 0.49–0.50. Two moves are measured, in turn:
 * - up: 60,000.00 → 48,000.00, LTV 0.61–0.62: every line crosses the warning threshold (0.60) and
 *   writes one LTV_THRESHOLD_WARNING (and one webhook delivery: the client has one subscription to
 *   the LTV events); below purchase-restricted (0.65), so no status change and no liquidation;
 * - down: 48,000.00 → 60,000.00: every line falls more than 0.01 below the warning threshold, its
 *   bit re-arms, no event.
 *
 * The anchor, in the same run, on the same database, on the same lines: the same moves by plain SQL
 * on its own connection in one transaction, timed from BEGIN to the end of COMMIT: the price row
 * updated, then one statement of data-modifying CTEs that locks the client's open BTC lines in id
 * order, decides each line's crossing bits with the same exact comparisons (debt × 10^(4+s) against
 * threshold × collateral × price units), and its status and residual-debt flag by the same rules
 * as ltv-monitor.ts, updates the lines where any of them changes (ltv_fired, residual_debt, status,
 * last_ltv_event_at, updated_at), inserts one event per newly crossed level
 * with the application's payload (built by jsonb_build_object) and its webhook deliveries. No
 * liquidation branch: no line reaches the liquidation threshold in these moves (ours checks and
 * finds none).
 *
 * Sizes (BENCH_LTV_SIZES, default 1,000, 5,000, 10,000 lines) are reached by adding lines to the
 * same client; at each size BENCH_LTV_ROUNDS (3) rounds of ours up, ours down, anchor up, anchor
 * down (the order of ours and the anchor alternating from round to round), a CHECKPOINT before each
 * move, an ANALYZE after each seeding; the median of the rounds counts. An unmeasured warm-up round
 * at the first size runs before. The lines are genuine: opened, collateralised and drawn by the
 * service functions behind POST /v1/credit-lines, POST /v1/credit-lines/:id/collateral and a credit
 * card's forced completion (the card processor's funding source), in-process, so the ledger holds
 * the collateral and the card spending; `ledger verify` must be clean at the end, and the LTV
 * events written must be lines × up-moves.
 */
const sizes = (process.env.BENCH_LTV_SIZES ?? process.env.BENCH_LTV_LINES ?? '1000,5000,10000').split(',').map((size) => Number(size.trim()));
const rounds = Number(process.env.BENCH_LTV_ROUNDS ?? 3);
const walletCount = Number(process.env.BENCH_LTV_WALLETS ?? 1_000);
const linesPerTransaction = 200;
const targetRatio = 0.3;
const asset = 'BTC';
const symbol = 'BTC-USD';
const btcScale = 8;
/** Collateral locked per line: 0.1 BTC. */
const collateralSatoshi = 10_000_000n;
const creditLimit = '3000.00';
const seedPrice = '60000.00';
const upPrice = '48000.00';
const warningType = 'LTV_THRESHOLD_WARNING';


/** The anchor's price change: $1 client, $2 symbol, $3 price, $4 moment. */
const anchorSetPrice = `
INSERT INTO sandbox_prices (client_id, symbol, price, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (client_id, symbol) DO UPDATE SET price = EXCLUDED.price, updated_at = EXCLUDED.updated_at`;

/**
 * A line's crossing bits after the move, as one expression over its six thresholds: bit i set when
 * the LTV reached threshold i + 1, or when it was set and the LTV is not 0.01 (100) below it.
 */
const anchorMaskExpression = [1, 2, 3, 4, 5, 6]
  .map((i) => `(CASE WHEN c.debt > 0 AND (c.lhs >= c.thresholds[${i}] * c.base OR (c.prev_mask & ${1 << (i - 1)} <> 0 AND c.lhs >= (c.thresholds[${i}] - 100) * c.base)) THEN ${1 << (i - 1)} ELSE 0 END)`)
  .join(' | ');

/**
 * The anchor's recompute of every open line of client $1 on collateral asset $2: $3 the LTV scale
 * factor 10^(4+asset scale+price scale−2), $4 the price's units, $5 the moment, $6 the trace id,
 * $7 the price's scale, $8 the asset's scale, $9 the event types by level.
 */
export const anchorRecompute = `
WITH current AS MATERIALIZED (
  SELECT s.client_id, s.id, s.customer_id, s.status, s.currency, s.collateral_amount, s.ltv_fired AS prev_mask, s.thresholds,
    s.residual_debt, s.principal + s.interest = 0 AS repaid,
    s.collateral_amount > 0 AND s.collateral_amount * $4::numeric * s.opening >= s.credit_limit * $3::numeric AS covers_limit,
    s.principal + s.interest + s.pending_holds AS debt,
    (s.principal + s.interest + s.pending_holds) * $3::numeric AS lhs,
    s.collateral_amount * $4::numeric AS base
  FROM credit_lines s
  WHERE s.client_id = $1 AND s.collateral_asset = $2 AND s.status <> 'CLOSED'
  ORDER BY s.id
  FOR UPDATE
),
decided AS MATERIALIZED (
  SELECT c.*, m.next_mask, r.next_residual,
    CASE WHEN c.status IN ('ACTIVE', 'RESTRICTED')
         THEN CASE WHEN (m.next_mask & 2) <> 0 OR c.collateral_amount = 0 OR r.next_residual THEN 'RESTRICTED' ELSE 'ACTIVE' END
         WHEN c.status = 'PENDING_COLLATERAL' AND c.covers_limit THEN 'ACTIVE'
         ELSE c.status END AS next_status
  FROM current c
  CROSS JOIN LATERAL (SELECT ${anchorMaskExpression} AS next_mask) m
  CROSS JOIN LATERAL (SELECT c.residual_debt AND NOT (c.repaid AND c.covers_limit) AS next_residual) r
),
updated AS (
  UPDATE credit_lines l
     SET ltv_fired = d.next_mask, residual_debt = d.next_residual, status = d.next_status,
         last_ltv_event_at = CASE WHEN (d.next_mask & ~d.prev_mask & 31) <> 0 THEN $5::timestamptz ELSE l.last_ltv_event_at END,
         updated_at = $5
    FROM decided d
   WHERE l.client_id = d.client_id AND l.id = d.id AND (d.next_mask <> d.prev_mask OR d.next_status <> d.status OR d.next_residual <> d.residual_debt)
  RETURNING 1
),
fired AS MATERIALIZED (
  SELECT d.*, lv.level, row_number() OVER (ORDER BY d.id, lv.level) AS rn
  FROM decided d CROSS JOIN generate_series(0, 4) AS lv(level)
  WHERE (d.next_mask >> lv.level) & 1 = 1 AND (d.prev_mask >> lv.level) & 1 = 0
),
events_written AS (
  INSERT INTO events (client_id, id, type, data, created_at)
  SELECT client_id, bench_anchor_id($5, rn), ($9::text[])[level + 1],
    jsonb_build_object(
      'customerId', customer_id, 'creditLineId', id,
      'ltv', CASE WHEN debt = 0 THEN '0.0000' WHEN base = 0 THEN NULL ELSE round(div(lhs, base) / 10000, 4)::text END,
      'thresholdLtv', round(thresholds[level + 1]::numeric / 10000, 4)::text,
      'collateralAsset', $2::text,
      'collateralAmount', round(collateral_amount / (10::numeric ^ $8::int), $8::int)::text,
      'collateralValue', round(div(base, 10::numeric ^ ($8::int + $7::int - 2)) / 100, 2)::text,
      'outstanding', round(debt / 100, 2)::text,
      'currency', currency,
      'traceId', $6::text),
    $5
  FROM fired
  RETURNING client_id, id, type, created_at
),
${anchorDeliveriesCte}
SELECT (SELECT count(*) FROM current)::int AS lines, (SELECT count(*) FROM updated)::int AS updated,
  (SELECT count(*) FROM events_written)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries`;

type Direction = 'up' | 'down';

interface Move {
  seconds: number;
  cpu: CpuPerUnit | undefined;
}

interface SizeResult {
  size: number;
  ours: Record<Direction, Move[]>;
  anchor: Record<Direction, Move[]>;
  median: { ours: Record<Direction, number>; anchor: Record<Direction, number> };
  linesPerSecond: { ours: Record<Direction, number>; anchor: Record<Direction, number> };
  ratio: Record<Direction, number>;
  seedS: number;
}

interface State {
  url: string;
  clientId: string;
  apiKey: string;
  serverUrl: URL;
  serverPid: number;
  /** Up moves so far (ours and the anchor's), each the lines at the time. */
  expectedEvents: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** The move of median time (the middle one of an odd count), for its CPU figures. */
function medianMove(moves: readonly Move[]): Move | undefined {
  return [...moves].sort((a, b) => a.seconds - b.seconds)[Math.floor((moves.length - 1) / 2)];
}


/** The lines' crossing bits and the client's LTV events and deliveries so far. */
async function tally(url: string, clientId: string): Promise<{ lines: number; fired: number; clear: number; other: number; events: number; deliveries: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const lines = await client.query<{ lines: number; fired: number; clear: number }>(
      `SELECT count(*)::int AS lines, count(*) FILTER (WHERE ltv_fired = 1 AND status = 'ACTIVE')::int AS fired, count(*) FILTER (WHERE ltv_fired = 0 AND status = 'ACTIVE')::int AS clear
       FROM credit_lines WHERE client_id = $1`,
      [clientId],
    );
    const events = await client.query<{ events: number; deliveries: number }>(
      `SELECT (SELECT count(*) FROM events WHERE client_id = $1 AND type LIKE 'LTV\\_%')::int AS events,
              (SELECT count(*) FROM webhook_deliveries WHERE client_id = $1 AND event_type LIKE 'LTV\\_%')::int AS deliveries`,
      [clientId],
    );
    const row = lines.rows[0] ?? { lines: 0, fired: 0, clear: 0 };
    const counts = events.rows[0] ?? { events: 0, deliveries: 0 };
    return { ...row, other: row.lines - row.fired - row.clear, ...counts };
  } finally {
    await client.end();
  }
}

/** After a move: every line in the expected state, and the LTV events (and one delivery each) are lines × up-moves. */
async function check(state: State, lines: number, direction: Direction, who: string): Promise<void> {
  const now = await tally(state.url, state.clientId);
  const firedExpected = direction === 'up' ? lines : 0;
  if (now.lines !== lines || now.fired !== firedExpected || now.clear !== lines - firedExpected) {
    throw new Error(`after ${who}'s ${direction} move: ${JSON.stringify(now)}, expected ${lines} ACTIVE lines with ${firedExpected} warnings fired`);
  }
  if (now.events !== state.expectedEvents || now.deliveries !== state.expectedEvents) {
    throw new Error(`after ${who}'s ${direction} move: ${now.events} LTV events and ${now.deliveries} deliveries, expected ${state.expectedEvents} of each`);
  }
}

/** Ours: one PUT /v1/sandbox/prices/BTC-USD over HTTP, timed from send to answer. */
async function measureOurs(state: State, lines: number, direction: Direction): Promise<Move> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await checkpoint(state.url);
    const before = cpuSnapshot(state.serverPid);
    const started = performance.now();
    const answer = await sendJson(agent, state.serverUrl, 'PUT', `/v1/sandbox/prices/${symbol}`, state.apiKey, { price: direction === 'up' ? upPrice : seedPrice });
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuPerUnit(before, cpuSnapshot(state.serverPid), lines);
    if (answer.status !== 200) throw new Error(`the price change answered ${answer.status}: ${answer.body.slice(0, 2000)}`);
    if (direction === 'up') state.expectedEvents += lines;
    await check(state, lines, direction, 'ours');
    return { seconds, cpu };
  } finally {
    agent.destroy();
  }
}

/** The anchor: plain SQL in one transaction on its own connection, timed from BEGIN to the end of COMMIT. */
async function measureAnchor(state: State, lines: number, direction: Direction): Promise<Move> {
  await checkpoint(state.url);
  const price = parsePrice(direction === 'up' ? upPrice : seedPrice);
  const factor = ltvScaleFactor(btcScale, price.scale).toString();
  const client = new pg.Client({ connectionString: state.url });
  await client.connect();
  try {
    const now = new Date();
    const before = cpuSnapshot();
    const started = performance.now();
    await client.query('BEGIN');
    await client.query(anchorSetPrice, [state.clientId, symbol, direction === 'up' ? upPrice : seedPrice, now]);
    const result = await client.query<{ lines: number; updated: number; events: number; deliveries: number }>(anchorRecompute, [
      state.clientId, asset, factor, price.units.toString(), now, 'bench-anchor', price.scale, btcScale, [...ltvEventTypes],
    ]);
    await client.query('COMMIT');
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuPerUnit(before, cpuSnapshot(), lines);
    const counts = result.rows[0];
    const eventsExpected = direction === 'up' ? lines : 0;
    if (!counts || counts.lines !== lines || counts.updated !== lines || counts.events !== eventsExpected || counts.deliveries !== eventsExpected) {
      throw new Error(`the anchor's ${direction} move wrote ${JSON.stringify(counts)} for ${lines} lines`);
    }
    if (direction === 'up') state.expectedEvents += lines;
    await check(state, lines, direction, 'the anchor');
    return { seconds, cpu };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/**
 * Adds lines until the client has `size`, each opened, collateralised (0.1 BTC) and drawn
 * (2,950.00–2,999.00 USD by a credit card's forced completion) by the service functions, at the
 * seeded price (60,000.00, where every line's LTV is at most 0.50), `linesPerTransaction` to a
 * transaction.
 */
async function addLines(deps: Deps, clientId: string, wallets: readonly { id: string; customer_id: string }[], from: number, size: number): Promise<void> {
  for (let start = from; start < size; start += linesPerTransaction) {
    const end = Math.min(size, start + linesPerTransaction);
    await withTransaction(deps.db, async (tx) => {
      for (let n = start; n < end; n++) {
        const wallet = wallets[n % wallets.length];
        if (!wallet) throw new Error('no wallets');
        const context = { clientId, traceId: 'bench-setup', now: deps.clock.now() };
        const line = await createCreditLine(tx, context, { customerId: wallet.customer_id, collateralWalletId: wallet.id, collateralAsset: asset, currency: 'USD', creditLimit });
        const locked = await lockCollateral(tx, context, line.id, '0.10000000');
        if (locked.status !== 'ACTIVE') throw new Error(`a setup line is ${locked.status} after its collateral`);
        const principal = 295_000n + BigInt(n % 50) * 100n;
        await creditLineFunding(context, { credit_line_id: line.id, wallet_id: wallet.id }, 'USD').post(
          tx,
          principal,
          { force: true },
          { parentTransactionId: idAt(context.now), type: creditCardHistoryTypes.capture, traceId: context.traceId },
        );
      }
    });
  }
}

/** The client's approved customers' wallets, each holding enough BTC for its share of the lines, and one LTV webhook subscription. */
async function prepareClient(deps: Deps, clientId: string, linesMax: number): Promise<{ id: string; customer_id: string }[]> {
  // The compliance flow would approve them; the bench has no compliance provider.
  await sql`UPDATE customers SET onboarding_status = 'APPROVED' WHERE client_id = ${clientId}`.execute(deps.db);
  const wallets = (await sql<{ id: string; customer_id: string }>`SELECT id, customer_id FROM wallets WHERE client_id = ${clientId} ORDER BY id`.execute(deps.db)).rows;
  const btc = findAsset(asset, 'sandbox');
  if (!btc) throw new Error('BTC missing');
  const perWallet = BigInt(Math.ceil(linesMax / wallets.length)) * collateralSatoshi;
  for (let start = 0; start < wallets.length; start += 500) {
    const chunk = wallets.slice(start, start + 500);
    await withTransaction(deps.db, async (tx) => {
      const now = deps.clock.now();
      const batch = new LedgerBatch(tx, now);
      const operations: TransferOperation[] = chunk.map((wallet) => ({
        operation: 'transfer',
        clientId,
        now,
        asset: btc,
        legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId: wallet.id }, amount: perWallet }],
        history: { parentTransactionId: idAt(now), type: 'BENCH_FUNDING', traceId: 'bench-setup' },
      }));
      for (const operation of operations) batch.declare(operation);
      await batch.load();
      for (const operation of operations) batch.apply(operation);
      await batch.flush();
    });
  }
  await withTransaction(deps.db, (tx) =>
    createWebhook(tx, { clientId, traceId: 'bench-setup', now: deps.clock.now() }, deps, {
      name: 'bench LTV receiver',
      url: 'https://example.com/ltv',
      eventTypes: [...ltvEventTypes],
      active: true,
    }),
  );
  return wallets;
}

/** One ours event and one anchor event of the same line carry the same payload (all but the trace id). */
async function comparePayloads(url: string, clientId: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{ data: Record<string, unknown> }>(
      `(SELECT data FROM events WHERE client_id = $1 AND type = $2 AND data->>'traceId' <> 'bench-anchor' ORDER BY id DESC LIMIT 1)
       UNION ALL
       (SELECT e.data FROM events e WHERE e.client_id = $1 AND e.type = $2 AND e.data->>'traceId' = 'bench-anchor'
          AND e.data->>'creditLineId' = (SELECT data->>'creditLineId' FROM events WHERE client_id = $1 AND type = $2 AND data->>'traceId' <> 'bench-anchor' ORDER BY id DESC LIMIT 1)
        ORDER BY e.id DESC LIMIT 1)`,
      [clientId, warningType],
    );
    const [ours, anchor] = rows.rows.map((row) => ({ ...row.data, traceId: undefined }));
    if (!ours || !anchor || JSON.stringify(Object.entries(ours).sort()) !== JSON.stringify(Object.entries(anchor).sort())) {
      throw new Error(`the anchor's event payload differs from ours: ${JSON.stringify(ours)} against ${JSON.stringify(anchor)}`);
    }
  } finally {
    await client.end();
  }
}

async function runLtvReprice(): Promise<ScenarioResult> {
  if (sizes.length === 0 || sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Error(`BENCH_LTV_SIZES must list whole numbers, got ${process.env.BENCH_LTV_SIZES}`);
  if ([...sizes].sort((a, b) => a - b).join() !== sizes.join()) throw new Error('BENCH_LTV_SIZES must be ascending (lines are added to reach each size)');
  await buildOnce();
  const url = await recreateDatabase();
  const target: Target = { databaseUrl: url };
  const setupStarted = performance.now();
  const seeded = await seedWallets(target, walletCount, 1_00n);
  await runSql(url, [anchorIdFunctionSql]);
  // No workers: the deliveries the moves write stay PENDING, so no delivery runs during a measurement.
  const server = await startServer({ ...benchEnv, ...targetEnv(target) }, undefined, ['serve', '--no-workers']);
  const state: State = { url, clientId: seeded.clientId, apiKey: seeded.apiKey, serverUrl: new URL(server.url), serverPid: server.pid, expectedEvents: 0 };
  const results: SizeResult[] = [];
  let peakRssMiB: number;
  try {
    await withDeps(target, async (deps) => {
      const wallets = await prepareClient(deps, seeded.clientId, Math.max(...sizes));
      console.log(`ltv-reprice: ${wallets.length} wallets funded with BTC, one LTV webhook subscription, in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`);
      let lines = 0;
      for (const [index, size] of sizes.entries()) {
        const seedStarted = performance.now();
        await addLines(deps, seeded.clientId, wallets, lines, size);
        lines = size;
        const seedS = (performance.now() - seedStarted) / 1000;
        await check(state, lines, 'down', 'the seeding');
        await runSql(url, ['ANALYZE']);
        console.log(`ltv-reprice: ${lines} lines in ${seedS.toFixed(1)} s`);
        if (index === 0) {
          // Warm-up, not measured: the server's first price change compiles its path.
          await measureOurs(state, lines, 'up');
          await measureOurs(state, lines, 'down');
          await measureAnchor(state, lines, 'up');
          await measureAnchor(state, lines, 'down');
          await comparePayloads(url, seeded.clientId);
        }
        const ours: Record<Direction, Move[]> = { up: [], down: [] };
        const anchor: Record<Direction, Move[]> = { up: [], down: [] };
        for (let round = 0; round < Math.max(1, rounds); round++) {
          const runOurs = async () => {
            ours.up.push(await measureOurs(state, lines, 'up'));
            ours.down.push(await measureOurs(state, lines, 'down'));
          };
          const runAnchor = async () => {
            anchor.up.push(await measureAnchor(state, lines, 'up'));
            anchor.down.push(await measureAnchor(state, lines, 'down'));
          };
          if (round % 2 === 0) {
            await runOurs();
            await runAnchor();
          } else {
            await runAnchor();
            await runOurs();
          }
        }
        const med = (moves: Record<Direction, Move[]>) => ({ up: median(moves.up.map((m) => m.seconds)), down: median(moves.down.map((m) => m.seconds)) });
        const m = { ours: med(ours), anchor: med(anchor) };
        const result: SizeResult = {
          size,
          ours,
          anchor,
          median: m,
          linesPerSecond: { ours: { up: size / m.ours.up, down: size / m.ours.down }, anchor: { up: size / m.anchor.up, down: size / m.anchor.down } },
          ratio: { up: m.anchor.up / m.ours.up, down: m.anchor.down / m.ours.down },
          seedS,
        };
        results.push(result);
        const cpuOf = (moves: Move[]) => {
          const cpu = medianMove(moves)?.cpu;
          return cpu ? `server ${cpu.serverUs.toFixed(0)} + PostgreSQL ${cpu.postgresUs.toFixed(0)} us/line, ${cpu.idlePercent.toFixed(0)} % idle` : 'no CPU figures';
        };
        const ms = (moves: Move[]) => moves.map((move) => (move.seconds * 1000).toFixed(0)).join('/');
        console.log(
          `ltv-reprice: N=${size}: up: ours ${(m.ours.up * 1000).toFixed(0)} ms (${ms(ours.up)}; ${result.linesPerSecond.ours.up.toFixed(0)} lines/s; ${cpuOf(ours.up)}), ` +
            `anchor ${(m.anchor.up * 1000).toFixed(0)} ms (${ms(anchor.up)}; ${result.linesPerSecond.anchor.up.toFixed(0)} lines/s; ${cpuOf(anchor.up)}), ratio ${result.ratio.up.toFixed(3)}; ` +
            `down: ours ${(m.ours.down * 1000).toFixed(0)} ms (${ms(ours.down)}), anchor ${(m.anchor.down * 1000).toFixed(0)} ms (${ms(anchor.down)}), ratio ${result.ratio.down.toFixed(3)}`,
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
  if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((c) => c.violationCount > 0))}`);
  const final = await tally(url, seeded.clientId);
  if (final.events !== state.expectedEvents) throw new Error(`${final.events} LTV events at the end, expected ${state.expectedEvents} (lines × up-moves)`);

  const largest = results[results.length - 1];
  if (!largest) throw new Error('no sizes measured');
  const upMedianCpu = medianMove(largest.ours.up)?.cpu;
  const anchorUpCpu = medianMove(largest.anchor.up)?.cpu;
  const perSize = Object.fromEntries(
    results.flatMap((result) => [
      [`s${result.size}_up_ms`, result.median.ours.up * 1000],
      [`s${result.size}_up_anchor_ms`, result.median.anchor.up * 1000],
      [`s${result.size}_up_ratio`, result.ratio.up],
      [`s${result.size}_down_ms`, result.median.ours.down * 1000],
      [`s${result.size}_down_anchor_ms`, result.median.anchor.down * 1000],
      [`s${result.size}_down_ratio`, result.ratio.down],
    ]),
  );
  return {
    scenario: 'ltv-reprice',
    ratio: largest.ratio.up,
    figures: {
      value: largest.linesPerSecond.ours.up,
      anchor: largest.linesPerSecond.anchor.up,
      lines: largest.size,
      down_value: largest.linesPerSecond.ours.down,
      down_anchor: largest.linesPerSecond.anchor.down,
      down_ratio: largest.ratio.down,
      ...perSize,
      ...cpuFigures(upMedianCpu),
      ...cpuFigures(anchorUpCpu, 'anchor_'),
      ...(anchorUpCpu ? { anchor_cpu_postgres_us: anchorUpCpu.postgresUs } : {}),
      peak_rss_mib: peakRssMiB,
      ltv_events: final.events,
      target: targetRatio,
      ratio_check: largest.ratio.up >= targetRatio && largest.ratio.down >= targetRatio ? 'PASS' : 'FAIL',
      verify: report.ok ? 'clean' : 'FAILED',
    },
    extra: {
      machine: describeMachine(),
      asset,
      sizes,
      rounds,
      walletCount,
      prices: { seed: seedPrice, up: upPrice },
      results,
      anchorSql: anchorRecompute,
      ledgerTotals: report.totals,
    },
  };
}

export const ltvReprice: Scenario = {
  name: 'ltv-reprice',
  description: `one PUT /v1/sandbox/prices/${symbol} recomputing N open ${asset} credit lines of one client (N = ${sizes.join(', ')}), ${seedPrice} → ${upPrice} (every line writes ${warningType}) and back (re-arm), PostgreSQL; unit: a line recomputed; anchor: the same writes by plain set-based SQL in one transaction on the same lines, same run; ratio: the up move at the largest N`,
  run: runLtvReprice,
};
