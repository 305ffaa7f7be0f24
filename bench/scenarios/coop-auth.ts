import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import { sql } from 'kysely';
import pg from 'pg';
import type { Scenario, ScenarioResult } from '../lib.js';
import { cpuFigures } from '../support/cpu.js';
import { postJson } from '../support/http-rounds.js';
import { openLoop, percentile, sortedOf, type OpenLoopResult } from '../support/open-loop.js';
import { checkpoint, recreateDatabase } from '../support/postgres.js';
import { buildOnce, startServer, stopChild, withServerLog, type RunningServer } from '../support/server.js';
import { seedWallets, targetEnv, verify, withDeps } from '../support/setup.js';
import { benchEnv, describeMachine, durationS, warmupDefaultS } from '../support/settings.js';
import { issueProgramCards } from '../support/cards.js';

/**
 * Issue 19 item 6: cooperative card authorization. 0100 authorizations of 1.00 sent at a fixed
 * rate (open loop, BENCH_COOP_RATE, default 500/s, for BENCH_DURATION_S) through
 * POST /v1/sandbox/cards/:cardId/authorizations to "Cooperative Debit" (COOP_AUTH) cards on
 * funded wallets, whose client's COOP_AUTH_0100 subscription is a plain node:http receiver in a
 * child process on 127.0.0.1 answering {"responseCode":"00"} at once; PostgreSQL.
 *
 * Figures: the whole authorization's latency (from its due time, so queueing counts), the client
 * call alone (data.record.coopAuth.latencyMs, measured by the server, whole milliseconds), and the
 * system's own share (whole minus client call, per request). Targets (absolute): whole p99 ≤ 25 ms,
 * system share p99 ≤ 10 ms. The anchor is the STANDARD path in the same run: the same route and
 * rate for "Standard Debit" cards on the same wallets (the processor decides alone); the ratio is
 * the anchor's p99 over ours (1 = the client call costs nothing).
 *
 * Second phase, another client: its program's timeoutMs set to 250 and its receiver sleeping
 * 400 ms, 50/s for 10 s: every authorization must be answered by the stand-in ("91", STAND_IN)
 * within timeoutMs + 50 ms, none lost, and no hold left open afterwards.
 */
const rate = Number(process.env.BENCH_COOP_RATE ?? 500);
const walletCount = 2_000;
const authorizationAmount = 1;
const wholeP99TargetMs = 25;
const systemP99TargetMs = 10;
const timeoutPhase = { rate: 50, seconds: 10, walletCount: 200, timeoutMs: 250, receiverDelayMs: 400, slackMs: 50 };
/** Seconds of stand-ins at the timeout phase's rate, after the warm-up (when there is one). */
const standInWarmupS = 3;

/**
 * The client's decision endpoint: a plain node:http server in its own process (so its work does
 * not share the load generator's event loop), answering {"responseCode":"00"} after `delayMs`
 * (from the URL's query, 0 by default). Counts what it answered and what it answered too late
 * (the server had given up on the request).
 */
const receiverSource = `
const http = require('node:http');
const counts = { requests: 0, answered: 0, late: 0 };
const server = http.createServer((request, response) => {
  const delayMs = Number(new URL(request.url, 'http://x').searchParams.get('delayMs') ?? 0);
  request.on('data', () => {});
  request.on('end', () => {
    counts.requests++;
    const send = () => {
      if (response.destroyed || request.socket.destroyed) { counts.late++; return; }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"responseCode":"00"}');
      counts.answered++;
    };
    if (delayMs > 0) setTimeout(send, delayMs); else send();
  });
});
server.keepAliveTimeout = 60000;
process.on('message', () => process.send({ counts }));
process.on('SIGTERM', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

interface Receiver {
  url: string;
  child: ChildProcess;
  counts(): Promise<{ requests: number; answered: number; late: number }>;
}

async function startReceiver(): Promise<Receiver> {
  const child = spawn(process.execPath, ['-e', receiverSource], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/coop`,
    child,
    counts: () =>
      new Promise((resolve) => {
        child.once('message', (message: { counts: { requests: number; answered: number; late: number } }) => resolve(message.counts));
        child.send('counts');
      }),
  };
}

async function api(agent: http.Agent, server: RunningServer, apiKey: string, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<{ data: unknown }> {
  const url = new URL(server.url);
  if (method === 'POST') {
    const answer = await postJson(agent, url, path, apiKey, body);
    if (answer.status !== 201 && answer.status !== 200) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body}`);
    return JSON.parse(answer.body) as { data: unknown };
  }
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as { data: unknown };
}

/** What one authorization answered, as the load keeps it. */
interface Answer {
  responseCode: string;
  decisionSource: string;
  /** The client call as the server measured it (ms, whole), or null when none was made. */
  clientMs: number | null;
  standInReason: string | null;
}

interface AuthorizationBody {
  data: { responseCode: string; decisionSource: string; record: { coopAuth: { latencyMs: number | null; standInReason: string | null } | null } };
}

function authorizer(agent: http.Agent, server: RunningServer, apiKey: string, cards: readonly string[]) {
  const url = new URL(server.url);
  return async (): Promise<Answer> => {
    const cardId = cards[crypto.randomInt(cards.length)] ?? '';
    const answer = await postJson(agent, url, `/v1/sandbox/cards/${cardId}/authorizations`, apiKey, { amount: authorizationAmount });
    if (answer.status !== 201) throw new Error(`HTTP ${answer.status}`);
    const data = (JSON.parse(answer.body) as AuthorizationBody).data;
    return { responseCode: data.responseCode, decisionSource: data.decisionSource, clientMs: data.record.coopAuth?.latencyMs ?? null, standInReason: data.record.coopAuth?.standInReason ?? null };
  };
}

function countBy(samples: OpenLoopResult<Answer>['samples'], key: (answer: Answer) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { value } of samples) counts[key(value)] = (counts[key(value)] ?? 0) + 1;
  return counts;
}

/** p50/p99/max of the whole latency, the client call and the system's share over a run's answers. */
/** Which seconds of the run the slowest 1% of requests were due in (stalls cluster; a uniformly slow path does not). */
function slowestSeconds(run: OpenLoopResult<Answer>): Record<string, number> {
  const sorted = [...run.samples].sort((a, b) => b.latencyMs - a.latencyMs);
  const slowest = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 100)));
  const seconds: Record<string, number> = {};
  for (const sample of slowest) seconds[String(Math.floor(sample.dueS))] = (seconds[String(Math.floor(sample.dueS))] ?? 0) + 1;
  return seconds;
}

function latencyFigures(run: OpenLoopResult<Answer>) {
  const whole = sortedOf(run.samples.map((sample) => sample.latencyMs));
  const withCall = run.samples.filter((sample) => sample.value.clientMs !== null);
  const client = sortedOf(withCall.map((sample) => sample.value.clientMs ?? 0));
  const system = sortedOf(withCall.map((sample) => sample.latencyMs - (sample.value.clientMs ?? 0)));
  return {
    wholeP50: percentile(whole, 0.5),
    wholeP99: percentile(whole, 0.99),
    wholeMax: whole[whole.length - 1] ?? Number.NaN,
    clientP50: percentile(client, 0.5),
    clientP99: percentile(client, 0.99),
    systemP50: percentile(system, 0.5),
    systemP99: percentile(system, 0.99),
  };
}

const databaseCounters = ['xact_commit', 'tup_fetched', 'tup_inserted', 'tup_updated', 'tup_deleted', 'blks_hit'] as const;
type DatabaseCounters = Record<(typeof databaseCounters)[number], number>;

/** The bench database's activity counters (pg_stat_database), to compare what one authorization costs PostgreSQL on either path. */
async function databaseCountersOf(url: string): Promise<DatabaseCounters> {
  // Statistics reach pg_stat_database within a second of a backend's last transaction.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const result = await client.query<Record<string, string>>(`SELECT ${databaseCounters.join(', ')} FROM pg_stat_database WHERE datname = current_database()`);
    const row = result.rows[0] ?? {};
    return Object.fromEntries(databaseCounters.map((name) => [name, Number(row[name] ?? 0)])) as DatabaseCounters;
  } finally {
    await client.end();
  }
}

function perRequest(before: DatabaseCounters, after: DatabaseCounters, requests: number): Record<string, number> {
  return Object.fromEntries(databaseCounters.map((name) => [name, Math.round(((after[name] - before[name]) / Math.max(1, requests)) * 10) / 10]));
}

async function runCoopAuth(): Promise<ScenarioResult> {
  await buildOnce();
  const url = await recreateDatabase();
  const target = { databaseUrl: url };
  const setupStarted = performance.now();
  const seeded = await seedWallets(target, walletCount, 1_000_000_00n);
  const coopCards = await issueProgramCards(target, seeded.clientId, 'Cooperative Debit');
  const standardCards = await issueProgramCards(target, seeded.clientId, 'Standard Debit');
  // The timeout phase's client: its own wallets, cards, program settings and subscription.
  const slow = await seedWallets(target, timeoutPhase.walletCount, 1_000_00n);
  const slowCards = await issueProgramCards(target, slow.clientId, 'Cooperative Debit');
  const setupS = (performance.now() - setupStarted) / 1000;

  const receiver = await startReceiver();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  let server: RunningServer | undefined;
  try {
    server = await startServer({ ...benchEnv, ...targetEnv(target) });
    await api(agent, server, seeded.apiKey, 'POST', '/v1/webhooks', { name: 'Decisions', url: receiver.url, subscribedEventTypes: ['COOP_AUTH_0100'] });
    await api(agent, server, slow.apiKey, 'POST', '/v1/webhooks', { name: 'Decisions', url: `${receiver.url}?delayMs=${timeoutPhase.receiverDelayMs}`, subscribedEventTypes: ['COOP_AUTH_0100'] });
    const programs = (await api(agent, server, slow.apiKey, 'GET', '/v1/cards/programs')).data as { id: string; name: string; coopAuth: Record<string, unknown> | null }[];
    const program = programs.find((candidate) => candidate.name === 'Cooperative Debit');
    if (!program?.coopAuth) throw new Error('the timeout client has no Cooperative Debit program with coopAuth settings');
    await api(agent, server, slow.apiKey, 'PATCH', `/v1/cards/programs/${program.id}`, { coopAuth: { ...program.coopAuth, timeoutMs: timeoutPhase.timeoutMs } });

    const coop = authorizer(agent, server, seeded.apiKey, coopCards);
    const standard = authorizer(agent, server, seeded.apiKey, standardCards);
    const serverPid = server.pid;
    if (warmupDefaultS > 0) {
      const warmup = await openLoop({ rate, seconds: warmupDefaultS, serverPid, send: (index) => (index % 2 === 0 ? coop() : standard()) });
      if (Object.keys(warmup.failures).length > 0) throw new Error(`failures during the warm-up: ${JSON.stringify(warmup.failures)}`);
      // The timeout phase's path (a stand-in after a client too slow to answer) runs nowhere else
      // before that phase: warmed up too, at its rate, on its client's cards, uncounted.
      const standIns = await openLoop({ rate: timeoutPhase.rate, seconds: standInWarmupS, serverPid, send: authorizer(agent, server, slow.apiKey, slowCards) });
      if (Object.keys(standIns.failures).length > 0) throw new Error(`failures during the stand-in warm-up: ${JSON.stringify(standIns.failures)}`);
    }
    await checkpoint(url);
    const anchorCountersBefore = await databaseCountersOf(url);
    const anchorRun = await openLoop({ rate, seconds: durationS, serverPid, send: standard });
    const anchorDatabase = perRequest(anchorCountersBefore, await databaseCountersOf(url), anchorRun.answered);
    await checkpoint(url);
    const coopCountersBefore = await databaseCountersOf(url);
    const receivedBefore = (await receiver.counts()).requests;
    const coopRun = await openLoop({ rate, seconds: durationS, serverPid, send: coop });
    const receivedDuring = (await receiver.counts()).requests - receivedBefore;
    const coopDatabase = perRequest(coopCountersBefore, await databaseCountersOf(url), coopRun.answered);

    const slowRun = await openLoop({ rate: timeoutPhase.rate, seconds: timeoutPhase.seconds, serverPid, send: authorizer(agent, server, slow.apiKey, slowCards) });
    // Let the late answers arrive (and be ignored) before looking for holds.
    await new Promise((resolve) => setTimeout(resolve, timeoutPhase.receiverDelayMs + 500));
    const receiverCounts = await receiver.counts();
    const peakRssMiB = server.peakRssMiB();
    await server.stop();
    server = undefined;

    const leftOpen = await withDeps(target, async (deps) => {
      const swipes = await sql<{ count: string }>`SELECT count(*) AS count FROM card_swipes WHERE client_id = ${slow.clientId} AND status = 'PENDING' AND held_minor > 0`.execute(deps.db);
      const reserved = await sql<{ reserved: string | null }>`SELECT sum(reserved) AS reserved FROM ledger_accounts WHERE client_id = ${slow.clientId} AND kind = 'WALLET'`.execute(deps.db);
      return { openHolds: Number(swipes.rows[0]?.count ?? 0), reservedMinor: Number(reserved.rows[0]?.reserved ?? 0) };
    });
    const report = await verify(target);

    const ours = latencyFigures(coopRun);
    const anchor = latencyFigures(anchorRun);
    const slowFigures = latencyFigures(slowRun);
    const coopDecisions = countBy(coopRun.samples, (answer) => answer.decisionSource);
    const coopCodes = countBy(coopRun.samples, (answer) => answer.responseCode);
    const standInReasons = countBy(coopRun.samples.filter((sample) => sample.value.standInReason !== null), (answer) => answer.standInReason ?? '');
    const anchorCodes = countBy(anchorRun.samples, (answer) => answer.responseCode);
    const slowAnswers = countBy(slowRun.samples, (answer) => `${answer.decisionSource}/${answer.responseCode}/${answer.standInReason ?? '-'}`);
    const slowLimitMs = timeoutPhase.timeoutMs + timeoutPhase.slackMs;
    const slowAllStandIn = slowRun.samples.every((sample) => sample.value.decisionSource === 'STAND_IN' && sample.value.responseCode === '91');
    const slowOverLimit = slowRun.samples.filter((sample) => sample.latencyMs > slowLimitMs).length;
    const coopErrors = Object.values(coopRun.failures).reduce((sum, count) => sum + count, 0);
    const anchorErrors = Object.values(anchorRun.failures).reduce((sum, count) => sum + count, 0);
    const coopNotApproved = coopRun.samples.filter((sample) => sample.value.responseCode !== '00').length;

    const checks = {
      whole_p99: ours.wholeP99 <= wholeP99TargetMs ? 'PASS' : 'FAIL',
      system_p99: ours.systemP99 <= systemP99TargetMs ? 'PASS' : 'FAIL',
      all_answered: coopRun.answered === coopRun.sent && coopErrors === 0 && coopNotApproved === 0 ? 'PASS' : 'FAIL',
      timeout_stand_in: slowAllStandIn && slowOverLimit === 0 && slowRun.answered === slowRun.sent ? 'PASS' : 'FAIL',
      timeout_no_open_hold: leftOpen.openHolds === 0 && leftOpen.reservedMinor === 0 ? 'PASS' : 'FAIL',
      verify: report.ok ? 'PASS' : 'FAIL',
    };
    console.log(`coop-auth: setup ${setupS.toFixed(1)} s; ${coopCards.length} coop + ${standardCards.length} standard cards on ${walletCount} wallets; timeout phase ${slowCards.length} cards`);
    console.log(`coop-auth: COOP ${rate}/s offered for ${durationS} s: sent ${coopRun.sent}, answered ${coopRun.answered}, ${coopRun.achievedRate.toFixed(1)}/s, failures ${JSON.stringify(coopRun.failures)}, decisions ${JSON.stringify(coopDecisions)}, codes ${JSON.stringify(coopCodes)}, stand-in reasons ${JSON.stringify(standInReasons)}, receiver saw ${receivedDuring}`);
    console.log(`coop-auth: COOP whole p50 ${ours.wholeP50.toFixed(2)} p99 ${ours.wholeP99.toFixed(2)} max ${ours.wholeMax.toFixed(1)} ms; client call p50 ${ours.clientP50} p99 ${ours.clientP99} ms; system share p50 ${ours.systemP50.toFixed(2)} p99 ${ours.systemP99.toFixed(2)} ms; load send lag p99 ${coopRun.sendLagP99Ms.toFixed(2)} max ${coopRun.sendLagMaxMs.toFixed(1)} ms`);
    console.log(`coop-auth: STANDARD anchor ${rate}/s: sent ${anchorRun.sent}, answered ${anchorRun.answered}, failures ${JSON.stringify(anchorRun.failures)}, codes ${JSON.stringify(anchorCodes)}, whole p50 ${anchor.wholeP50.toFixed(2)} p99 ${anchor.wholeP99.toFixed(2)} max ${anchor.wholeMax.toFixed(1)} ms`);
    console.log(`coop-auth: slowest 1% by second of the run: COOP ${JSON.stringify(slowestSeconds(coopRun))}, STANDARD ${JSON.stringify(slowestSeconds(anchorRun))}, TIMEOUT ${JSON.stringify(slowestSeconds(slowRun))}`);
    console.log(`coop-auth: PostgreSQL per authorization (pg_stat_database): COOP ${JSON.stringify(coopDatabase)}, STANDARD ${JSON.stringify(anchorDatabase)}; CPU per authorization (us): COOP server ${coopRun.cpu?.serverUs.toFixed(0)} postgres ${coopRun.cpu?.postgresUs.toFixed(0)} machine ${coopRun.cpu?.machineUs.toFixed(0)}, STANDARD server ${anchorRun.cpu?.serverUs.toFixed(0)} postgres ${anchorRun.cpu?.postgresUs.toFixed(0)} machine ${anchorRun.cpu?.machineUs.toFixed(0)}`);
    console.log(`coop-auth: TIMEOUT ${timeoutPhase.rate}/s for ${timeoutPhase.seconds} s (timeoutMs ${timeoutPhase.timeoutMs}, receiver ${timeoutPhase.receiverDelayMs} ms): sent ${slowRun.sent}, answered ${slowRun.answered}, failures ${JSON.stringify(slowRun.failures)}, answers ${JSON.stringify(slowAnswers)}, whole p50 ${slowFigures.wholeP50.toFixed(1)} p99 ${slowFigures.wholeP99.toFixed(1)} max ${slowFigures.wholeMax.toFixed(1)} ms (limit ${slowLimitMs}), over limit ${slowOverLimit}; open holds ${leftOpen.openHolds}, RESERVED ${leftOpen.reservedMinor}; receiver ${JSON.stringify(receiverCounts)}`);
    console.log(`coop-auth: checks ${JSON.stringify(checks)}`);

    return {
      scenario: 'coop-auth',
      ratio: anchor.wholeP99 / ours.wholeP99,
      figures: {
        offered_per_s: rate,
        value: coopRun.achievedRate,
        p50_ms: ours.wholeP50,
        p99_ms: ours.wholeP99,
        client_p50_ms: ours.clientP50,
        client_p99_ms: ours.clientP99,
        system_p50_ms: ours.systemP50,
        system_p99_ms: ours.systemP99,
        anchor_p50_ms: anchor.wholeP50,
        anchor_p99_ms: anchor.wholeP99,
        sent: coopRun.sent,
        errors: coopErrors + (coopRun.sent - coopRun.answered - coopErrors),
        not_approved: coopNotApproved,
        client_decided: coopDecisions.CLIENT ?? 0,
        stand_in: coopDecisions.STAND_IN ?? 0,
        anchor_errors: anchorErrors,
        ...cpuFigures(coopRun.cpu),
        ...cpuFigures(anchorRun.cpu, 'anchor_'),
        ...(anchorRun.cpu ? { anchor_cpu_postgres_us: anchorRun.cpu.postgresUs } : {}),
        xacts_per_auth: coopDatabase.xact_commit ?? Number.NaN,
        anchor_xacts_per_auth: anchorDatabase.xact_commit ?? Number.NaN,
        timeout_sent: slowRun.sent,
        timeout_answered: slowRun.answered,
        timeout_p99_ms: slowFigures.wholeP99,
        timeout_max_ms: slowFigures.wholeMax,
        timeout_over_limit: slowOverLimit,
        open_holds: leftOpen.openHolds,
        reserved_minor: leftOpen.reservedMinor,
        peak_rss_mib: peakRssMiB,
        whole_p99_target_ms: wholeP99TargetMs,
        system_p99_target_ms: systemP99TargetMs,
        whole_p99_check: checks.whole_p99,
        system_p99_check: checks.system_p99,
        timeout_check: checks.timeout_stand_in,
        no_open_hold_check: checks.timeout_no_open_hold,
        verify: report.ok ? 'clean' : 'FAILED',
      },
      extra: {
        machine: describeMachine(),
        rate,
        durationS,
        warmupS: warmupDefaultS,
        walletCount,
        setupS,
        checks,
        coop: { ...ours, sent: coopRun.sent, answered: coopRun.answered, failures: coopRun.failures, decisions: coopDecisions, codes: coopCodes, standInReasons, receivedDuring, sendLagP99Ms: coopRun.sendLagP99Ms, sendLagMaxMs: coopRun.sendLagMaxMs },
        database: { coop: coopDatabase, anchor: anchorDatabase },
        cpu: { coop: coopRun.cpu, anchor: anchorRun.cpu },
        anchor: { ...anchor, sent: anchorRun.sent, answered: anchorRun.answered, failures: anchorRun.failures, codes: anchorCodes },
        timeoutPhase: { ...timeoutPhase, ...slowFigures, sent: slowRun.sent, answered: slowRun.answered, failures: slowRun.failures, answers: slowAnswers, overLimit: slowOverLimit, leftOpen, receiverCounts },
        ledgerTotals: report.totals,
      },
    };
  } catch (error) {
    if (server) throw withServerLog(error, server);
    throw error;
  } finally {
    agent.destroy();
    await server?.stop();
    await stopChild(receiver.child);
  }
}

export const coopAuth: Scenario = {
  name: 'coop-auth',
  description: `0100 authorizations of 1.00 through POST /v1/sandbox/cards/:cardId/authorizations to ${walletCount} Cooperative Debit cards (client receiver on 127.0.0.1 answering "00" at once), open loop at ${rate}/s for ${durationS} s, PostgreSQL; then a ${timeoutPhase.timeoutMs} ms timeout with a ${timeoutPhase.receiverDelayMs} ms receiver at ${timeoutPhase.rate}/s for ${timeoutPhase.seconds} s; anchor: the STANDARD path (Standard Debit cards on the same wallets), same route and rate, measured just before; ratio: anchor p99 / ours`,
  run: runCoopAuth,
};
