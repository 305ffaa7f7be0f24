import crypto from 'node:crypto';
import http from 'node:http';
import { sql } from 'kysely';
import type { Scenario, ScenarioResult } from '../lib.js';
import { combineCpu, cpuFigures, cpuPerUnit, cpuSnapshot, type CpuPerUnit } from '../support/cpu.js';
import { checkpoint, recreateDatabase, runPgbench } from '../support/postgres.js';
import { buildOnce, startServer } from '../support/server.js';
import { seedWallets, targetEnv, verify, withDeps } from '../support/setup.js';
import { benchEnv, describeMachine, durationS, roundsDefault, warmupDefaultS } from '../support/settings.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { cardVaultOf, createDebitCard, listCardPrograms } from '../../src/modules/cards/index.js';
import { buildSandboxMessage, type CardOfMessage } from '../../src/modules/cards/sandbox/sandbox-messages.js';
import { newNetworkDataRef, toKeyedIsoMessage } from '../../src/modules/cards/network/index.js';
import { connections, createAnchorTables, transferAnchorScript, walletCount } from './transfers.js';

/**
 * Issue 18 item 8: 0100 authorizations each followed by its 0220 completion, sent to the
 * message-level endpoint (POST /v1/sandbox/iso8583), for cards spread over 10,000 funded wallets,
 * 32 connections, PostgreSQL; the anchor is the transfers scenario's pgbench script in the same
 * run. One unit is one message (an authorization: a hold, two records and an event; a completion:
 * a capture, two records and an event). Target: 0.5 of the anchor.
 */
const targetRatio = 0.5;
const authorizationMinor = 100n;

interface CardRef {
  card: CardOfMessage;
}

interface Load {
  messages: number;
  seconds: number;
  failures: Record<string, number>;
  latenciesMs: number[];
  cpu: CpuPerUnit | undefined;
}

function post(agent: http.Agent, url: URL, apiKey: string, body: unknown): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/v1/sandbox/iso8583',
        headers: { authorization: apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** Issues one virtual Standard Debit card per wallet and returns what the network needs to address each. */
async function issueCards(target: { databaseUrl: string }, clientId: string): Promise<CardRef[]> {
  return withDeps(target, async (deps) => {
    // The seeded customers skipped KYC: approve them, as the compliance flow would.
    await sql`UPDATE customers SET onboarding_status = 'APPROVED' WHERE client_id = ${clientId}`.execute(deps.db);
    const program = (await listCardPrograms(deps.db, clientId)).find((candidate) => candidate.name === 'Standard Debit');
    if (!program) throw new Error('the bench client has no Standard Debit program');
    const wallets = await sql<{ id: string; customer_id: string }>`SELECT id, customer_id FROM wallets WHERE client_id = ${clientId}`.execute(deps.db);
    const vault = cardVaultOf(deps);
    const cards: CardRef[] = [];
    for (const wallet of wallets.rows) {
      const context = { clientId, traceId: 'bench-setup', now: deps.clock.now() };
      const created = await withTransaction(deps.db, (tx) =>
        createDebitCard(tx, context, deps, { customerId: wallet.customer_id, cardProgramId: program.id, walletId: wallet.id, isVirtual: true, isPrimary: false }),
      );
      const row = await deps.db.selectFrom('cards').select(['pan_encrypted', 'expiry_month', 'expiry_year']).where('client_id', '=', clientId).where('id', '=', created.id).executeTakeFirstOrThrow();
      cards.push({
        card: { pan: vault.decryptPan(row.pan_encrypted, clientId, created.id), expiry: { expiryMonth: row.expiry_month, expiryYear: row.expiry_year }, network: program.network },
      });
    }
    return cards;
  });
}

/** Closed loop: each worker authorizes 1.00 on a random card and completes it with a new RRN, then starts again. */
async function runLoad(serverUrl: string, apiKey: string, cards: readonly CardRef[], seconds: number, serverPid: number): Promise<Load> {
  const url = new URL(serverUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const failures: Record<string, number> = {};
  const latenciesMs: number[] = [];
  let messages = 0;
  const fail = (what: string) => (failures[what] = (failures[what] ?? 0) + 1);
  const before = cpuSnapshot(serverPid);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const send = async (message: ReturnType<typeof buildSandboxMessage>, what: string): Promise<boolean> => {
    const sent = performance.now();
    const answer = await post(agent, url, apiKey, { format: 'json', message: toKeyedIsoMessage(message) });
    if (answer.status !== 201 && answer.status !== 200) {
      fail(`${what} HTTP ${answer.status}`);
      return false;
    }
    const code = (JSON.parse(answer.body) as { data: { response: Record<string, string> } }).data.response['39'];
    if (code !== '00') {
      fail(`${what} ${code}`);
      return false;
    }
    messages++;
    latenciesMs.push(performance.now() - sent);
    return true;
  };
  const worker = async () => {
    while (performance.now() < deadline) {
      const target = cards[crypto.randomInt(cards.length)];
      if (!target) continue;
      const reference = newNetworkDataRef();
      const now = new Date();
      const authorized = await send(buildSandboxMessage(target.card, now, { mti: '0100', processingCode: '000000', amountMinor: authorizationMinor, networkDataRef: reference }), '0100');
      if (!authorized) continue;
      await send(buildSandboxMessage(target.card, new Date(), { mti: '0220', processingCode: '000000', amountMinor: authorizationMinor, networkDataRef: reference }), '0220');
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  agent.destroy();
  return { messages, seconds: elapsedS, failures, latenciesMs, cpu: cpuPerUnit(before, cpuSnapshot(serverPid), messages) };
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
}

async function runCardAuth(): Promise<ScenarioResult> {
  await buildOnce();
  const url = await recreateDatabase();
  await createAnchorTables(url);
  const target = { databaseUrl: url };
  const seeded = await seedWallets(target, walletCount, 1_000_000_00n);
  const cards = await issueCards(target, seeded.clientId);
  const server = await startServer({ ...benchEnv, ...targetEnv(target) });
  const rounds: { ours: number; anchor: number }[] = [];
  const loads: Load[] = [];
  const anchorRuns: { cpu: CpuPerUnit | undefined; units: number; seconds: number }[] = [];
  let anchorCommand = '';
  let peakRssMiB: number;
  try {
    if (warmupDefaultS > 0) {
      const warmup = await runLoad(server.url, seeded.apiKey, cards, warmupDefaultS, server.pid);
      if (Object.keys(warmup.failures).length > 0) throw new Error(`failures during the warm-up: ${JSON.stringify(warmup.failures)}`);
    }
    for (let round = 0; round < Math.max(1, roundsDefault); round++) {
      await checkpoint(url);
      const anchor = await runPgbench(url, transferAnchorScript, connections, durationS);
      anchorCommand = anchor.command;
      anchorRuns.push({ cpu: anchor.cpu, units: anchor.transactions, seconds: durationS });
      await checkpoint(url);
      const load = await runLoad(server.url, seeded.apiKey, cards, durationS, server.pid);
      loads.push(load);
      rounds.push({ ours: load.messages / load.seconds, anchor: anchor.tps });
    }
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nserver log (last lines):\n${server.logTail().split('\n').slice(-20).join('\n')}`, { cause: error });
  } finally {
    peakRssMiB = server.peakRssMiB();
    await server.stop();
  }
  const report = await verify(target);
  if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);
  const failures: Record<string, number> = {};
  for (const load of loads) for (const [what, count] of Object.entries(load.failures)) failures[what] = (failures[what] ?? 0) + count;
  if (Object.keys(failures).length > 0) throw new Error(`unexpected answers: ${JSON.stringify(failures)}`);

  const messages = loads.reduce((sum, load) => sum + load.messages, 0);
  const seconds = loads.reduce((sum, load) => sum + load.seconds, 0);
  const ours = messages / seconds;
  const anchor = rounds.reduce((sum, round) => sum + round.anchor, 0) / rounds.length;
  const latencies = loads.flatMap((load) => load.latenciesMs).sort((a, b) => a - b);
  return {
    scenario: 'card-auth',
    ratio: ours / anchor,
    figures: {
      value: ours,
      anchor,
      lifecycles_per_s: ours / 2,
      p50_ms: percentile(latencies, 0.5),
      p99_ms: percentile(latencies, 0.99),
      ...cpuFigures(combineCpu(anchorRuns), 'anchor_'),
      ...cpuFigures(combineCpu(loads.map((load) => ({ cpu: load.cpu, units: load.messages, seconds: load.seconds })))),
      round_ratios: rounds.map((round) => (round.ours / round.anchor).toFixed(3)).join('/'),
      peak_rss_mib: peakRssMiB,
      messages,
      cards: cards.length,
      target: targetRatio,
      verify: report.ok ? 'clean' : 'FAILED',
    },
    extra: { machine: describeMachine(), anchorCommand, anchorScript: transferAnchorScript, connections, durationS, rounds, walletCount },
  };
}

export const cardAuth: Scenario = {
  name: 'card-auth',
  description: `0100 authorizations of 1.00, each followed by its 0220 completion, through POST /v1/sandbox/iso8583 for ${walletCount} cards on ${walletCount} funded wallets, ${connections} connections, PostgreSQL; unit: one message; anchor: the transfers scenario's pgbench script, ${connections} clients, measured in turn`,
  run: runCardAuth,
};
