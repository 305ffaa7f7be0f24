import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from './schema.js';
import { acquireDataFolderLock, DataFolderUnusableError } from './lock-file.js';
import { PreparingClient } from './prepared-statements.js';
import { nextTurn } from '../next-turn.js';
import { defaultEmbeddedCheckpoints, embeddedWalStartParams, startEmbeddedCheckpoints, type EmbeddedCheckpointOptions } from './embedded-checkpoints.js';

export type Db = Kysely<Database>;

/**
 * In a data folder while its database is being created (PGlite's initdb), removed once it is: a
 * first start interrupted then (a Ctrl-C, a SIGTERM) left a folder PGlite could never open, failing
 * with a stack from inside it (until 2026-12-07; found by an audit). Such a folder is now refused
 * in one line saying it holds no data and can be deleted. A folder made before the marker existed
 * has none, and opens as before.
 */
const creatingMarkerName = 'openbaas.creating';

/** The pool's answer when no connection came within its connection timeout (node-postgres's pg-pool). */
export const poolConnectTimeoutMessage = 'timeout exceeded when trying to connect';

export function isPoolConnectTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === poolConnectTimeoutMessage;
}

/**
 * The first connection to DATABASE_URL failed (PostgreSQL not running or not reachable, a database
 * or role that does not exist, a wrong password, a connection timeout): the command says so in
 * one line naming the URL without its password (until 2026-12-07 node-postgres's error with its
 * stack, without naming DATABASE_URL; found by an audit). Only the first connection at start:
 * once running, a lost database is answered 503 and retried.
 */
export class DatabaseConnectError extends Error {
  override name = 'DatabaseConnectError';
}

/** A PostgreSQL connection string as it may be shown: without its password (in the URL or as a `password` parameter). */
export function databaseUrlForDisplay(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    url.password = '';
    url.searchParams.delete('password');
    return url.toString();
  } catch {
    // Not a URL (node-postgres also takes "/socket/folder database"): it has no password to hide.
    return databaseUrl.startsWith('/') ? databaseUrl : '(a connection string that is not a URL)';
  }
}

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
  /** Embedded database only: its data folder as an uncompressed tar (PGlite's dumpDataDir). */
  dumpDataDir?: () => Promise<Blob>;
}

export interface DatabaseOptions {
  /** PostgreSQL server; when absent the embedded PGlite database is used. */
  databaseUrl?: string | undefined;
  /** PGlite data folder (ignored when memory is true). */
  dataDir?: string | undefined;
  memory?: boolean | undefined;
  /**
   * In-memory embedded database only: start from this data folder (a dumpDataDir tar) instead of
   * creating a new one, which takes seconds (initdb). Tests start each file from a migrated one.
   */
  memoryDataDump?: Blob | undefined;
  poolMax: number;
  connectTimeoutMs: number;
  /**
   * PostgreSQL only: how long an unused connection stays open (0: for ever). The server passes
   * DB_POOL_IDLE_TIMEOUT_MS (5 minutes by default): a new connection costs the database a process
   * and the planning of every prepared statement again (prepared-statements.ts), so the server's
   * pool keeps its connections through quiet spells. Absent: node-postgres's 10 s, for the pools
   * of tests and tools, many of which are open at once.
   */
  idleTimeoutMs?: number | undefined;
  /** PostgreSQL only: the schema every connection works in (tests give each file its own). */
  searchPath?: string | undefined;
  /** Told when a slow step starts (creating a new embedded database), for the start-up output. */
  onProgress?: ((message: string) => void) | undefined;
  /** Embedded database only: when it checkpoints (embedded-checkpoints.ts); tests make it sooner. */
  checkpoints?: EmbeddedCheckpointOptions | undefined;
}

const numericArrayOid = 1231;
const textArrayOid = 1009;

/**
 * The result parsers of both pools. node-postgres returns numeric as a string (exact) but parses
 * numeric[] into JavaScript numbers, which silently drops digits past about 16
 * (12345678901234567890.12 comes back as 12345678901234567000). Amounts are decimal strings until
 * they become bigint minor units, so numeric[] comes back as strings too, through node-postgres's
 * own text[] parser.
 */
export const resultTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    pg.types.getTypeParser(oid === numericArrayOid && format !== 'binary' ? textArrayOid : oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * One code path for both databases: a pg.Pool, backed either by a PostgreSQL server or by PGlite
 * through its node-postgres adapter. PGlite has exactly one connection, so the pool size is 1
 * and a connection timeout turns an accidental nested use into an error instead of a hang.
 */
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      Client: PreparingClient,
      types: resultTypes,
      // Queries are sent without waiting for the previous answer (pipelined-transaction.ts).
      pipeline: true,
      max: options.poolMax,
      ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMillis: options.idleTimeoutMs }),
      connectionTimeoutMillis: options.connectTimeoutMs,
      ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
    });
    pool.on('error', () => {
      // An idle client lost its connection; the pool replaces it. Requests see their own errors.
    });
    // The first connection is made now, so a database that cannot be reached is named as such
    // (DatabaseConnectError), not as the failure of whatever query came first. It stays in the pool.
    try {
      (await pool.connect()).release();
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new DatabaseConnectError(`cannot connect to the database of DATABASE_URL (${databaseUrlForDisplay(options.databaseUrl)}): ${(error as Error).message}`, { cause: error });
    }
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, pool, kind: 'postgres', close: () => db.destroy() };
  }

  const releaseLock = options.memory ? () => {} : acquireDataFolderLock(requireDataDir(options));
  const creatingMarker = options.memory ? undefined : path.join(requireDataDir(options), creatingMarkerName);
  let lite: PGlite;
  try {
    const creating = options.memory || !fs.existsSync(path.join(requireDataDir(options), 'PG_VERSION'));
    if (creatingMarker !== undefined && !creating && fs.existsSync(creatingMarker)) {
      throw new DataFolderUnusableError(
        `The data folder ${requireDataDir(options)} (DATA_DIR) was left half-made by a first start that was interrupted while it created the database: ` +
          'it holds no data yet. Delete the folder (or everything in it) and start again.',
      );
    }
    // A new embedded database takes seconds to create (PGlite runs initdb): say so.
    if (creating) options.onProgress?.(options.memory ? 'creating an in-memory database…' : `creating the embedded database in ${requireDataDir(options)}…`);
    if (creating && creatingMarker !== undefined) fs.writeFileSync(creatingMarker, `${new Date().toISOString()}\n`);
    const startParams = [...PGlite.defaultStartParams, ...embeddedWalStartParams];
    lite = options.memory
      ? await PGlite.create({ dataDir: 'memory://', startParams, ...(options.memoryDataDump ? { loadDataDir: options.memoryDataDump } : {}) })
      : await PGlite.create(requireDataDir(options), { startParams });
    if (creating && creatingMarker !== undefined) fs.rmSync(creatingMarker, { force: true });
  } catch (error) {
    releaseLock();
    throw error;
  }
  const pool = new pg.Pool({
    ...(createPgConfig(lite) as unknown as pg.PoolConfig),
    Client: PreparingClient,
    types: resultTypes,
    // As on PostgreSQL: statements issued without awaiting (pipelined-transaction.ts) go out in
    // order, rather than through the query queue node-postgres deprecates (a DeprecationWarning).
    pipeline: true,
    max: 1,
    connectionTimeoutMillis: options.connectTimeoutMs,
  });
  pool.on('error', () => {});
  yieldBeforeConnect(pool);
  const checkpoints = startEmbeddedCheckpoints(pool, options.checkpoints ?? defaultEmbeddedCheckpoints);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    kind: 'pglite',
    dumpDataDir: () => lite.dumpDataDir('none'),
    close: async () => {
      try {
        await checkpoints.stop();
        await db.destroy();
        await lite.close();
      } finally {
        releaseLock();
      }
    },
  };
}

/**
 * The embedded database answers a query without any I/O (PGlite runs in this process), so a loop
 * of transactions that only awaits the database (an advance of the clock through hundreds of
 * timers, a reset, a restore) never lets the event loop read a socket: every other request, of
 * every client, waited until the loop ended. Each taking of the one connection therefore waits
 * for the next turn of the event loop first (setImmediate: after the pending I/O callbacks), so
 * the requests that arrived meanwhile queue for the connection between two transactions. The
 * pool takes its connection with a callback (pool.query) or a promise (Kysely): both wait.
 */
type ConnectCallback = (error: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void;
function yieldBeforeConnect(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => unknown;
  const yielding = (callback?: ConnectCallback): unknown => {
    if (callback) {
      setImmediate(() => connect(callback));
      return undefined;
    }
    return nextTurn().then(() => connect());
  };
  pool.connect = yielding as typeof pool.connect;
}

function requireDataDir(options: DatabaseOptions): string {
  if (!options.dataDir) throw new Error('dataDir is required for the embedded database');
  return options.dataDir;
}
