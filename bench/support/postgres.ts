import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runCommand } from './server.js';
import { cpuPerUnit, cpuSnapshot, type CpuPerUnit } from './cpu.js';

/** The PostgreSQL server the benchmarks use; each scenario works in its own database on it. */
export const benchServerUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
export const benchDatabaseName = process.env.BENCH_DATABASE ?? 'openbaas_bench';

export function databaseUrl(database: string): string {
  const url = new URL(benchServerUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Drops and creates the bench database, so every scenario starts empty. */
export async function recreateDatabase(database = benchDatabaseName): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`unsafe database name ${database}`);
  const admin = new pg.Client({ connectionString: databaseUrl('postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  return databaseUrl(database);
}

export async function runSql(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

export interface PgbenchResult {
  tps: number;
  /** CPU per transaction over the run (the whole machine's figures only; undefined without /proc). */
  cpu: CpuPerUnit | undefined;
  latencyAverageMs: number;
  transactions: number;
  command: string;
}

/**
 * Writes every dirty page now, so the measurement that follows does not pay for a checkpoint the
 * previous phase (the anchor's writes, the seeding) made due. Called before the anchor and before
 * our own load, so both start from the same state.
 */
export async function checkpoint(url: string): Promise<void> {
  await runSql(url, ['CHECKPOINT']);
}

/** Runs pgbench with a custom script and reads its transactions per second. */
export async function runPgbench(url: string, script: string, clients: number, durationS: number): Promise<PgbenchResult> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-pgbench-')), 'script.sql');
  fs.writeFileSync(file, script);
  const target = new URL(url);
  const args = [
    '-h', target.hostname,
    '-p', target.port || '5432',
    '-U', decodeURIComponent(target.username || 'postgres'),
    '-n', '-c', String(clients), '-j', '2', '-T', String(durationS), '-f', file,
    target.pathname.slice(1),
  ];
  const pgbench = process.env.PGBENCH ?? '/usr/bin/pgbench';
  const before = cpuSnapshot();
  const output = await runCommand(pgbench, args);
  const after = cpuSnapshot();
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  const tps = /tps = ([\d.]+)/.exec(output)?.[1];
  const latency = /latency average = ([\d.]+) ms/.exec(output)?.[1];
  const transactions = /number of transactions actually processed: (\d+)/.exec(output)?.[1];
  if (!tps) throw new Error(`could not read pgbench output:\n${output}`);
  return {
    tps: Number(tps),
    cpu: cpuPerUnit(before, after, Number(transactions ?? 0)),
    latencyAverageMs: Number(latency ?? Number.NaN),
    transactions: Number(transactions ?? 0),
    command: `pgbench -n -c ${clients} -j 2 -T ${durationS} -f <script>`,
  };
}

/**
 * A SQL function for the plain-SQL anchors, `bench_anchor_id(moment, seq)`: a time-ordered id like
 * the application's (UUIDv7: the moment's milliseconds, then a counter, then random bits).
 */
export const anchorIdFunctionSql = `
CREATE OR REPLACE FUNCTION bench_anchor_id(moment timestamptz, seq bigint) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    substring(int8send((extract(epoch FROM moment) * 1000)::bigint) FROM 3)
    || substring(int4send((28672 | ((seq >> 14) & 4095))::int) FROM 3)
    || substring(int4send((32768 | (seq & 16383))::int) FROM 3)
    || substring(uuid_send(gen_random_uuid()) FROM 11),
    'hex')::uuid
$$`;

/**
 * The anchors' webhook deliveries, as recordEvents writes them: one PENDING delivery per active
 * subscription of the event's client that takes its type, for the rows of a preceding
 * `events_written` CTE (INSERT INTO events … RETURNING client_id, id, type, created_at).
 */
export const anchorDeliveriesCte = `deliveries AS (
  INSERT INTO webhook_deliveries (client_id, id, subscription_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
  SELECT s.client_id, openbaas_delivery_id(e.id, (row_number() OVER (PARTITION BY e.id ORDER BY s.id))::int), s.id, e.id, e.type, 'PENDING',
    e.created_at, e.created_at, e.created_at
  FROM events_written e
  JOIN webhook_subscriptions s ON s.client_id = e.client_id AND s.active AND (e.type = ANY (s.event_types) OR '*' = ANY (s.event_types))
  RETURNING 1
)`;
