import net from 'node:net';
import path from 'node:path';
import { parseEncryptionKey } from './crypto/field-cipher.js';

export type Mode = 'sandbox' | 'production';

export interface Config {
  mode: Mode;
  host: string;
  port: number;
  /** PostgreSQL connection string; absent means the embedded PGlite database. */
  databaseUrl: string | undefined;
  /** Data folder of the embedded database (ignored with databaseUrl). */
  dataDir: string;
  /** Throwaway in-memory embedded database. */
  memory: boolean;
  databasePoolMax: number;
  /** How long an unused pool connection stays open (0: for ever). */
  databasePoolIdleTimeoutMs: number;
  databaseConnectTimeoutMs: number;
  /** Whether the browser console is served at /console (OPENBAAS_CONSOLE; on in sandbox mode by default). */
  console: boolean;
  /** Whether authenticated API requests are kept for the trace timeline (OPENBAAS_REQUEST_LOG; on by default). */
  requestLog: boolean;
  /** Fixed sandbox API key (sk_test_…), created at start when missing. */
  sandboxApiKey: string | undefined;
  /** Enables the /v1/admin routes when set. */
  adminKey: string | undefined;
  /** When set, GET /metrics answers only `Authorization: Bearer <token>` (OPENBAAS_METRICS_TOKEN); unset, it is public. */
  metricsToken: string | undefined;
  logLevel: string;
  rateLimitPerMinute: number;
  shutdownTimeoutMs: number;
  shutdownDrainMs: number;
  idempotencyRetentionHours: number;
  eventRetentionDays: number;
  publicBaseUrl: string;
  runWorkers: boolean;
  authCacheTtlMs: number;
  /** Webhook delivery: how long one request may take before it counts as failed. */
  webhookTimeoutMs: number;
  /** Delay before each automatic retry of a failed delivery; its length is the number of retries. */
  webhookRetryScheduleMs: number[];
  /** Each retry delay is moved by up to this share (in percent) either way, so retries spread out. */
  webhookRetryJitterPercent: number;
  /** Requests in flight at once to one subscription. */
  webhookConcurrencyPerSubscription: number;
  webhookConcurrencyPerSubscriptionMax: number;
  /** How long a worker's claim on a delivery lasts; a dead worker's claims come back after it. */
  webhookLeaseMs: number;
  /** After a secret rotation, how long deliveries are also signed with the previous secret. */
  webhookSecretOverlapMs: number;
  /** How often an idle delivery worker looks for new work. */
  webhookPollIntervalMs: number;
  /** A subscription whose endpoint failed every attempt for this long (by the client's clock) is disabled; 0 never disables. */
  webhookDisableAfterMs: number;
  /** How long a KYC SDK link stays valid, measured by the injected clock. */
  kycLinkTtlMs: number;
  /** How long a trade quote holds its price, by the client's clock (OPENBAAS_QUOTE_TTL_SECONDS). */
  quoteTtlSeconds: number;
  /** Spread taken from the mid price against the customer on every trade quote, in basis points. */
  tradeSpreadBps: number;
  /** The bank that holds the money and receives deposits: shown in deposit instructions. */
  operatingBank: OperatingBankConfig;
  /** Sandbox: how long after it starts a bank deposit or withdrawal settles (or comes back) by itself. */
  sandboxBankSettlementDelayMs: number;
  /** AES-256-GCM key for sensitive customer fields; absent means the embedded database's key file. */
  encryptionKey: Buffer | undefined;
  /** OPENBAAS_VAULT_KEY: the card vault's key; undefined derives one from the encryption key. */
  vaultKey: Buffer | undefined;
  /** OPENBAAS_BITCOIN_NETWORK: the Bitcoin network addresses are made for and checked against. */
  bitcoinNetwork: 'testnet' | 'mainnet';
  /** OPENBAAS_SANDBOX_SEED: the seed sandbox crypto addresses are derived from; undefined in production unless set. */
  sandboxSeed: string | undefined;
  /** OPENBAAS_SANDBOX_BLOCK_SECONDS: sandbox: one block per network this often by each client's clock; 0 is off. */
  sandboxBlockSeconds: number;
  /** OPENBAAS_CRYPTO_CONFIRMATIONS: confirmations required per network (NETWORK=count), checked by the crypto module. */
  cryptoConfirmations: Readonly<Record<string, string>>;
  /** OPENBAAS_CRYPTO_WITHDRAWAL_FEES: flat withdrawal fees per asset and network (ASSET/NETWORK=amount), checked by the crypto module. */
  cryptoWithdrawalFees: Readonly<Record<string, string>>;
  /** The host name the vault SDK is pointed at (GET /v1/vault/config `cname`). */
  vaultPublicHost: string;
  /** Origins allowed to call the reveal endpoints from a browser (CORS); empty allows none. */
  vaultAllowedOrigins: string[];
  /** The frame-ancestors sources of the hosted reveal frame (its Content-Security-Policy). */
  vaultFrameAncestors: string;
  /** Most concurrent write requests of one batched route (internal transfers) written in one transaction. */
  writeBatchSizeMax: number;
  /** Most such transactions in flight at once (the embedded database always uses 1). */
  writeBatchConcurrency: number;
  /** Most card message groups in flight at once per lane (the embedded database always uses 1). */
  cardGroupConcurrency: number;
  /** CARD_GROUP_OVERLAP: a card lane's next group may start while the last one sends its merged write and COMMIT. */
  cardGroupOverlap: boolean;
  /** Most shared balance queries in flight at once (the embedded database always uses 1). */
  readBatchConcurrency: number;
}

export interface OperatingBankConfig {
  name: string;
  address: string;
  routingNumber: string;
  swiftCode: string;
  /** The pooled account that takes deposits identified by a reference in the memo. */
  masterAccountNumber: string;
  intermediaryName: string;
  intermediaryRoutingNumber: string;
  intermediaryBic: string;
}

/** Fictional values for the sandbox; a production deployment sets its own bank's. */
export const sandboxOperatingBank: OperatingBankConfig = {
  name: 'OpenBaaS Sandbox Bank (fictional)',
  address: '100 Example Plaza, New York, NY 10004, US',
  routingNumber: '026009991',
  swiftCode: 'OBSBUS30',
  masterAccountNumber: '8000000001',
  intermediaryName: 'OpenBaaS Correspondent Bank (fictional)',
  intermediaryRoutingNumber: '026011112',
  intermediaryBic: 'OBCBUS30',
};

/** Every environment variable the program reads, with its default. The README table mirrors it. */
export const environmentVariables = [
  ['OPENBAAS_MODE', 'sandbox', '`sandbox` (simulation API, generated sandbox key) or `production`'],
  ['HOST', '127.0.0.1', 'address to listen on (use 0.0.0.0 to accept outside connections)'],
  ['PORT', '8080', 'HTTP port'],
  ['DATABASE_URL', '(unset)', 'PostgreSQL connection string; unset means the embedded PGlite database'],
  ['DATA_DIR', './data', 'folder of the embedded database (and its lock file)'],
  ['DB_POOL_MAX', '20', 'PostgreSQL pool size (the embedded database always uses exactly one connection)'],
  ['DB_CONNECT_TIMEOUT_MS', '10000', 'how long a request waits for a database connection'],
  ['DB_POOL_IDLE_TIMEOUT_MS', '300000', 'how long a PostgreSQL pool connection may stay unused before it is closed (0: never); a new connection prepares and plans its statements again'],
  ['OPENBAAS_API_KEY', '(unset)', 'in sandbox mode, a fixed `sk_test_…` key created at start if missing'],
  ['OPENBAAS_CONSOLE', 'on (sandbox), off (production)', '`on` or `off`: serve the browser console at `/console`'],
  ['OPENBAAS_REQUEST_LOG', 'on', '`on` or `off`: keep each authenticated API request for the trace timeline (`/v1/traces/:traceId`)'],
  ['OPENBAAS_ADMIN_KEY', '(unset)', 'enables the `/v1/admin` routes, authenticated by this value (16+ characters, no white space)'],
  ['OPENBAAS_METRICS_TOKEN', '(unset)', '`GET /metrics` then answers only this token in `Authorization` (`Bearer <token>` or the token alone; 16+ characters, no white space); unset, `/metrics` is public'],
  ['LOG_LEVEL', 'info', 'pino log level (`fatal` … `trace`, or `silent`)'],
  ['RATE_LIMIT_PER_MINUTE', '6000 (sandbox), 1200 (production)', 'requests per minute per API key, and failed authentications per minute per client address'],
  ['SHUTDOWN_TIMEOUT_MS', '10000', 'how long shutdown waits for in-flight requests'],
  ['SHUTDOWN_DRAIN_MS', '0', 'on SIGTERM, how long /health/ready answers 503 while requests are still served, before the shutdown starts (for a load balancer to stop sending traffic; up to 60000)'],
  ['IDEMPOTENCY_RETENTION_HOURS', '24', 'how long idempotency keys are kept'],
  ['EVENT_RETENTION_DAYS', '30', 'days the webhook delivery log and the request log are kept (30 at least); events stay readable through /v1/events at least as long (they are not deleted today)'],
  ['PUBLIC_BASE_URL', 'http://localhost:$PORT', 'address this server is reached at (links it hands out)'],
  ['AUTH_CACHE_TTL_MS', '2000', 'how long a process trusts a looked-up API key before checking it again'],
  ['WEBHOOK_TIMEOUT_MS', '10000', 'how long a webhook delivery request may take before it counts as failed'],
  ['WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h', 'delays before each retry of a failed delivery (units ms, s, m, h; `none` for no retries); then FAILED'],
  ['WEBHOOK_RETRY_JITTER_PERCENT', '10', 'each retry delay moves randomly by up to this percentage either way'],
  ['WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION', '10', 'webhook requests in flight at once to one subscription to begin with; grows while the endpoint answers quickly, halves when it fails or answers 429/5xx'],
  ['WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION_MAX', '100', 'the most webhook requests in flight at once to one subscription (at least WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION)'],
  ['WEBHOOK_LEASE_MS', '60000', 'how long a worker holds a claimed delivery; a crashed worker\'s claims are retried after it (more than WEBHOOK_TIMEOUT_MS)'],
  ['WEBHOOK_SECRET_OVERLAP_MS', '86400000', 'after a secret rotation, how long deliveries also carry a signature made with the previous secret'],
  ['WEBHOOK_POLL_INTERVAL_MS', '100', 'how often an idle delivery worker looks for new deliveries'],
  ['WEBHOOK_DISABLE_AFTER_MS', '259200000', 'a webhook subscription whose endpoint failed every attempt for this long (3 days; by the client\'s clock) is disabled; 0 never disables'],
  ['KYC_LINK_TTL_MINUTES', '1440', 'how long a KYC SDK link (the hosted verification page) stays valid'],
  ['OPENBAAS_QUOTE_TTL_SECONDS', '300', 'how long a trade quote holds its price and amounts, by the client\'s clock (5 to 900)'],
  ['OPENBAAS_TRADE_SPREAD_BPS', '0', 'spread taken from the mid price against the customer on every trade quote, in basis points (0 to 5000)'],
  [
    'OPENBAAS_ENCRYPTION_KEY',
    '(unset: embedded database only)',
    '32-byte key (64 hex digits or base64) encrypting SSNs, document numbers and webhook signing secrets; required with DATABASE_URL; unset on the embedded database means a key generated once into `$DATA_DIR/encryption.key`',
  ],
  [
    'OPENBAAS_VAULT_KEY',
    '(unset: derived from the encryption key)',
    '32-byte key (64 hex digits or base64) of the card vault: encrypts card numbers and keys their fingerprints and the sandbox CVV; unset, a key of its own is derived from OPENBAAS_ENCRYPTION_KEY (set it to keep the two apart)',
  ],
  ['OPENBAAS_BITCOIN_NETWORK', 'testnet in sandbox, mainnet in production', 'the Bitcoin network (testnet or mainnet) deposit addresses are made for and withdrawal addresses are checked against'],
  ['OPENBAAS_CRYPTO_CONFIRMATIONS', '(the defaults: BITCOIN=3,ETHEREUM=12,TRON=19,SOLANA=32)', 'confirmations a crypto transfer needs, per network, as NETWORK=count pairs separated by commas (1 to 1000); networks left out keep their default'],
  ['OPENBAAS_CRYPTO_WITHDRAWAL_FEES', '(the defaults of docs/crypto.md)', 'flat crypto withdrawal fees, as ASSET/NETWORK=amount pairs separated by commas (USDC/TRON=1.50), within the asset\'s decimals, 0 allowed; pairs left out keep their default'],
  ['OPENBAAS_VAULT_PUBLIC_HOST', '(the host of PUBLIC_BASE_URL)', 'the host (a name or an address, with :port or not) the vault SDK is pointed at (GET /v1/vault/config `cname`)'],
  ['OPENBAAS_VAULT_ALLOWED_ORIGINS', '(none)', 'comma-separated origins (https://app.example.com) allowed to call the vault reveal endpoints from a browser (CORS); the hosted frame needs none'],
  [
    'OPENBAAS_VAULT_FRAME_ANCESTORS',
    "* in sandbox, 'none' in production",
    'the pages that may embed the hosted reveal frame: the frame-ancestors sources of its Content-Security-Policy (space-separated, for example https://app.example.com)',
  ],
  ['OPERATING_BANK_NAME', sandboxOperatingBank.name, 'name of the bank holding the money, shown in deposit instructions'],
  ['OPERATING_BANK_ADDRESS', sandboxOperatingBank.address, 'its address, shown in deposit instructions'],
  ['OPERATING_BANK_ROUTING_NUMBER', sandboxOperatingBank.routingNumber, 'its ABA routing number (9 digits, checksum checked at start)'],
  ['OPERATING_BANK_SWIFT_CODE', sandboxOperatingBank.swiftCode, 'its SWIFT/BIC code (8 or 11 characters)'],
  ['OPERATING_BANK_MASTER_ACCOUNT_NUMBER', sandboxOperatingBank.masterAccountNumber, 'its pooled master account (4 to 17 digits), for deposits identified by a reference in the memo'],
  ['INTERMEDIARY_BANK_NAME', sandboxOperatingBank.intermediaryName, 'correspondent bank named in SWIFT deposit instructions'],
  ['INTERMEDIARY_BANK_ROUTING_NUMBER', sandboxOperatingBank.intermediaryRoutingNumber, 'its ABA routing number'],
  ['INTERMEDIARY_BANK_BIC', sandboxOperatingBank.intermediaryBic, 'its SWIFT/BIC code'],
  ['SANDBOX_BANK_SETTLEMENT_DELAY_MS', '60000', 'sandbox: time (by the sandbox clock) after which a pending bank deposit or withdrawal settles, or comes back when a magic value says so'],
  ['WRITE_BATCH_SIZE_MAX', '64', 'most concurrent requests of one batched route (internal transfers, trade quotes, trade executions, card network messages) written together in one database transaction (1 turns batching off)'],
  ['WRITE_BATCH_CONCURRENCY', '2', 'most such batched transactions of a route in flight at once on PostgreSQL (batches one behind the other on one connection); the embedded database uses 1'],
  ['CARD_GROUP_CONCURRENCY', '1', 'most transaction groups of card network messages in flight at once on PostgreSQL, each on a connection of its own, per lane (new messages; cooperative decisions being finished have a lane of their own); the embedded database uses 1'],
  ['CARD_GROUP_OVERLAP', 'on', 'on PostgreSQL, a card lane\'s next transaction group may start while the last one sends its merged write and COMMIT (so up to twice CARD_GROUP_CONCURRENCY groups per lane are in flight, that many of them still at work); off: a group starts once the last has ended'],
  ['READ_BATCH_CONCURRENCY', '1', 'most shared wallet-balance queries in flight at once on PostgreSQL; requests arriving meanwhile share the next one'],
] as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * A whole number written in decimal digits only, from min to max, else a ConfigError naming `name`
 * (a variable, or a command-line option such as `--port`) and what was given: "1e1", "0x10", "8080.0"
 * and an empty text are refused, though JavaScript's Number reads them as numbers.
 */
export function wholeNumber(name: string, raw: string, min: number, max: number): number {
  // One message for both refusals, with the range: "-1" is a whole number too, just below it.
  const refused = () => new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  if (!/^\d+$/.test(raw)) throw refused();
  const value = Number(raw);
  if (value < min || value > max) throw refused();
  return value;
}

/** The variable `name` as wholeNumber reads it; `fallback` when it is unset or empty. */
function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return wholeNumber(name, raw, min, max);
}

/** The HTTP port's range, for the PORT variable and the `--port` option alike. */
export const portMin = 0;
export const portMax = 65535;

const durationUnitsMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** Retries at most this many times, each at most a week later. */
const retryScheduleLengthMax = 20;
const retryDelayMaxMs = 7 * 24 * 3_600_000;

/** Parses a comma-separated list of durations such as "5s,5m,30m,2h" into milliseconds. */
export function parseDurationList(name: string, raw: string): number[] {
  if (raw.trim() === 'none') return [];
  const values = raw.split(',').map((part) => {
    const match = /^\s*(\d{1,9})\s*(ms|s|m|h)\s*$/.exec(part);
    if (!match?.[1] || !match[2]) {
      throw new ConfigError(`${name} must list durations such as 5s,5m,30m,2h (units ms, s, m, h), got "${raw}"`);
    }
    const milliseconds = Number(match[1]) * (durationUnitsMs[match[2]] ?? 1);
    if (milliseconds < 1 || milliseconds > retryDelayMaxMs) throw new ConfigError(`${name}: each delay must be between 1 ms and 7 days`);
    return milliseconds;
  });
  if (values.length > retryScheduleLengthMax) throw new ConfigError(`${name} may hold at most ${retryScheduleLengthMax} delays`);
  return values;
}

export interface ConfigOverrides {
  memory?: boolean;
  port?: number;
  runWorkers?: boolean;
}

function bitcoinNetworkOf(raw: string | undefined, mode: Mode): 'testnet' | 'mainnet' {
  const value = raw || (mode === 'sandbox' ? 'testnet' : 'mainnet');
  if (value !== 'testnet' && value !== 'mainnet') throw new ConfigError(`OPENBAAS_BITCOIN_NETWORK must be testnet or mainnet, got "${value}"`);
  return value;
}

/**
 * The fixed, published seed of sandbox crypto addresses: every sandbox derives the same address
 * for the same (client, wallet, network), which is what a test network wants. Never a secret.
 */
export const sandboxSeedDefault = 'openbaas-public-sandbox-seed';

function sandboxSeedOf(raw: string | undefined, mode: Mode): string | undefined {
  if (raw !== undefined && raw !== '') {
    if (raw.length < 8 || raw.length > 512) throw new ConfigError('OPENBAAS_SANDBOX_SEED must be 8 to 512 characters');
    return raw;
  }
  return mode === 'sandbox' ? sandboxSeedDefault : undefined;
}

/**
 * A comma-separated list of KEY=VALUE pairs, each key once. What the keys and values may be is
 * the owning module's rule (platform code does not import modules); it checks them at start-up.
 */
function pairList(env: NodeJS.ProcessEnv, name: string): Record<string, string> {
  const raw = env[name];
  const pairs: Record<string, string> = {};
  if (!raw?.trim()) return pairs;
  for (const entry of raw.split(',')) {
    const match = /^\s*([^=\s]+)\s*=\s*(\S+)\s*$/.exec(entry);
    if (!match) throw new ConfigError(`${name} must be KEY=VALUE pairs separated by commas; "${entry.trim()}" is not one`);
    const [, key = '', value = ''] = match;
    if (Object.hasOwn(pairs, key)) throw new ConfigError(`${name} names ${key} twice`);
    pairs[key] = value;
  }
  return pairs;
}

/** OPENBAAS_VAULT_ALLOWED_ORIGINS: each an origin (scheme, host, port), nothing more. */
function originList(raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  return raw.split(',').map((entry) => {
    const text = entry.trim();
    let origin: string | undefined;
    try {
      origin = new URL(text).origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || origin === 'null' || origin !== text.replace(/\/+$/, '')) {
      throw new ConfigError(`OPENBAAS_VAULT_ALLOWED_ORIGINS: "${text}" is not an origin (scheme, host and port, like https://app.example.com)`);
    }
    return origin;
  });
}

/** An on/off variable; unset or empty means the default. */
function switchOf(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
}

/** OPENBAAS_VAULT_FRAME_ANCESTORS: CSP source expressions, without the characters that would end the directive. */
function frameAncestors(raw: string | undefined, mode: Mode): string {
  const value = raw?.trim() || (mode === 'sandbox' ? '*' : "'none'");
  if (/[;,\r\n]/.test(value)) throw new ConfigError('OPENBAAS_VAULT_FRAME_ANCESTORS: space-separated CSP sources only (no ";" or ",")');
  return value;
}

/** A secret sent as the Authorization header's one token (the admin key, the metrics token): 16+ characters, no white space; undefined when unset. */
function bearerTokenOf(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name] || undefined;
  if (value !== undefined && value.length < 16) throw new ConfigError(`${name} must be at least 16 characters long`);
  // The Authorization header carries one token: a key with white space could never be sent.
  if (value !== undefined && /\s/.test(value)) throw new ConfigError(`${name} must not contain white space (it is sent as one token in the Authorization header)`);
  return value;
}

/**
 * DATABASE_URL as node-postgres reads it: a postgres:// (or postgresql://, socket:) URL, or a
 * socket folder path. Until 2026-12-07 anything was taken: "not a url" was the host "base" and a
 * mysql:// URL a PostgreSQL server, each failing at the first connection with a stack (found by
 * an audit). The value is not repeated in the message: it may hold a password.
 */
function databaseUrlOf(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.startsWith('/')) return raw;
  // node-postgres encodes spaces and stray % signs, and takes a URL with no host (postgres://u@/db).
  const encoded = /\s|%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(raw) ? encodeURI(raw) : raw;
  let protocol: string;
  try {
    protocol = new URL(encoded.replace('@/', '@host/')).protocol;
  } catch {
    throw new ConfigError('DATABASE_URL cannot be read as a URL: it must look like postgres://user:password@host:5432/database');
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:' && protocol !== 'socket:') {
    throw new ConfigError(`DATABASE_URL must be a postgres:// (or postgresql://) URL, got a ${protocol}// URL`);
  }
  return raw;
}

/** pino's levels: LOG_LEVEL is one of them (in any case), or the log is silent. */
const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * LOG_LEVEL, checked before anything is made: until 2026-12-07 pino refused an unknown level when
 * the app was built, after the database and the sandbox client were made, with its stack and
 * without naming the setting (found by an audit).
 */
function logLevelOf(raw: string | undefined): string {
  const level = (raw?.trim() || 'info').toLowerCase();
  if (!logLevels.includes(level)) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${raw ?? ''}"`);
  return level;
}

/**
 * HOST: an IP address or a host name in form (its resolution and whether it is an address of this
 * machine are checked by `serve` before it opens the database). Until 2026-12-07 it was not checked
 * until the listener opened, after the sandbox client was made (found by an audit).
 */
function hostOf(raw: string | undefined): string {
  const host = raw?.trim() || '127.0.0.1';
  if (net.isIP(host) === 0 && !isHostName(host)) throw new ConfigError(`HOST must be an IP address (such as 127.0.0.1 or 0.0.0.0) or a host name, got "${host}"`);
  return host;
}

/**
 * A host name in form: labels of letters, digits, hyphens and underscores (container service
 * names may have them). Four dot-separated numbers that are no IPv4 address (256.1.1.1) are not
 * one: they would be looked up as a name.
 */
function isHostName(host: string): boolean {
  const hostName = /^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;
  return !/^[0-9.]+$/.test(host) && hostName.test(host);
}

/**
 * OPENBAAS_VAULT_PUBLIC_HOST: a host name or IP address (IPv6 in brackets), with a port or not,
 * as the host of a URL is written; by default the host of PUBLIC_BASE_URL. Until 2026-12-08 any
 * text was taken and handed to the vault SDK as its `cname` ("bad host/x"; found by an audit).
 */
function vaultPublicHostOf(raw: string | undefined, publicBaseUrl: string): string {
  if (!raw) return new URL(publicBaseUrl).host;
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(raw);
  const [, host = '', port] = match ?? [];
  const hostOk = host.startsWith('[') ? net.isIPv6(host.slice(1, -1)) : net.isIPv4(host) || isHostName(host);
  const portOk = port === undefined || (Number(port) >= 1 && Number(port) <= 65_535);
  if (!match || !hostOk || !portOk) {
    throw new ConfigError(`OPENBAAS_VAULT_PUBLIC_HOST must be a host name or IP address, with :port or not (such as vault.example.com or vault.example.com:8443), got "${raw}"`);
  }
  return raw.toLowerCase();
}

/**
 * PUBLIC_BASE_URL: an http or https URL (the links the server hands out). Until 2026-12-07 a value
 * that is no URL failed with new URL's TypeError and its stack, and ftp://x was taken (found by an audit).
 */
function publicBaseUrlOf(raw: string | undefined, port: number): string {
  const value = (raw?.trim() || `http://localhost:${port}`).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http:// or https:// URL (such as https://baas.example.com), got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http:// or https:// URL (such as https://baas.example.com), got "${value}"`);
  }
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): Config {
  const modeRaw = env.OPENBAAS_MODE ?? 'sandbox';
  if (modeRaw !== 'sandbox' && modeRaw !== 'production') {
    throw new ConfigError(`OPENBAAS_MODE must be sandbox or production, got "${modeRaw}"`);
  }
  const mode: Mode = modeRaw;
  const port = overrides.port ?? integer(env, 'PORT', 8080, portMin, portMax);
  const sandboxApiKey = env.OPENBAAS_API_KEY || undefined;
  if (sandboxApiKey !== undefined) {
    if (mode !== 'sandbox') throw new ConfigError('OPENBAAS_API_KEY is only for sandbox mode');
    if (!/^sk_test_[A-Za-z0-9]{16,96}$/.test(sandboxApiKey)) {
      throw new ConfigError('OPENBAAS_API_KEY must look like sk_test_ followed by 16 to 96 letters or digits');
    }
  }
  const adminKey = bearerTokenOf(env, 'OPENBAAS_ADMIN_KEY');
  const metricsToken = bearerTokenOf(env, 'OPENBAAS_METRICS_TOKEN');
  const webhookTimeoutMs = integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 50, 120_000);
  const webhookConcurrencyPerSubscription = integer(env, 'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION', 10, 1, 1000);
  const webhookLeaseMs = integer(env, 'WEBHOOK_LEASE_MS', 60_000, 100, 3_600_000);
  if (webhookLeaseMs <= webhookTimeoutMs) {
    throw new ConfigError(`WEBHOOK_LEASE_MS (${webhookLeaseMs}) must be longer than WEBHOOK_TIMEOUT_MS (${webhookTimeoutMs})`);
  }
  const databaseUrl = databaseUrlOf(env.DATABASE_URL || undefined);
  const encryptionKeyRaw = env.OPENBAAS_ENCRYPTION_KEY || undefined;
  const encryptionKey = encryptionKeyRaw === undefined ? undefined : parseEncryptionKey(encryptionKeyRaw);
  if (encryptionKeyRaw !== undefined && !encryptionKey) {
    throw new ConfigError('OPENBAAS_ENCRYPTION_KEY must be 32 bytes written as 64 hex digits or in base64 (make one with: openssl rand -hex 32)');
  }
  const publicBaseUrl = publicBaseUrlOf(env.PUBLIC_BASE_URL, port);
  const vaultKeyRaw = env.OPENBAAS_VAULT_KEY || undefined;
  const vaultKey = vaultKeyRaw === undefined ? undefined : parseEncryptionKey(vaultKeyRaw);
  if (vaultKeyRaw !== undefined && !vaultKey) {
    throw new ConfigError('OPENBAAS_VAULT_KEY must be 32 bytes written as 64 hex digits or in base64 (make one with: openssl rand -hex 32)');
  }
  if (databaseUrl && !encryptionKey) {
    // Several processes share a PostgreSQL database, so they must share one key: it has to come from configuration.
    throw new ConfigError('OPENBAAS_ENCRYPTION_KEY is required with DATABASE_URL (make one with: openssl rand -hex 32, and keep it safe)');
  }
  return {
    mode,
    host: hostOf(env.HOST),
    port,
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    memory: overrides.memory ?? false,
    databasePoolMax: integer(env, 'DB_POOL_MAX', 20, 1, 1000),
    databaseConnectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_MS', 10_000, 100, 600_000),
    databasePoolIdleTimeoutMs: integer(env, 'DB_POOL_IDLE_TIMEOUT_MS', 300_000, 0, 86_400_000),
    console: switchOf(env, 'OPENBAAS_CONSOLE', mode === 'sandbox'),
    requestLog: switchOf(env, 'OPENBAAS_REQUEST_LOG', true),
    sandboxApiKey,
    adminKey,
    metricsToken,
    logLevel: logLevelOf(env.LOG_LEVEL),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', mode === 'sandbox' ? 6000 : 1200, 1, 10_000_000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 0, 0, 60_000),
    idempotencyRetentionHours: integer(env, 'IDEMPOTENCY_RETENTION_HOURS', 24, 24, 24 * 365),
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 30, 30, 3650),
    publicBaseUrl,
    runWorkers: overrides.runWorkers ?? true,
    authCacheTtlMs: integer(env, 'AUTH_CACHE_TTL_MS', 2000, 0, 60_000),
    webhookTimeoutMs,
    webhookRetryScheduleMs: parseDurationList('WEBHOOK_RETRY_SCHEDULE', env.WEBHOOK_RETRY_SCHEDULE || '5s,5m,30m,2h,5h,10h,10h'),
    webhookRetryJitterPercent: integer(env, 'WEBHOOK_RETRY_JITTER_PERCENT', 10, 0, 50),
    webhookConcurrencyPerSubscription,
    webhookConcurrencyPerSubscriptionMax: integer(env, 'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION_MAX', Math.max(100, webhookConcurrencyPerSubscription), webhookConcurrencyPerSubscription, 1000),
    webhookLeaseMs,
    webhookSecretOverlapMs: integer(env, 'WEBHOOK_SECRET_OVERLAP_MS', 86_400_000, 0, 30 * 86_400_000),
    webhookPollIntervalMs: integer(env, 'WEBHOOK_POLL_INTERVAL_MS', 100, 5, 60_000),
    webhookDisableAfterMs: integer(env, 'WEBHOOK_DISABLE_AFTER_MS', 3 * 86_400_000, 0, 365 * 86_400_000),
    kycLinkTtlMs: integer(env, 'KYC_LINK_TTL_MINUTES', 1440, 1, 60 * 24 * 90) * 60_000,
    // The bounds are the trades module's (quoteTtlSecondsMin/Max, spreadBpsMax); platform code does not import modules.
    quoteTtlSeconds: integer(env, 'OPENBAAS_QUOTE_TTL_SECONDS', 300, 5, 900),
    tradeSpreadBps: integer(env, 'OPENBAAS_TRADE_SPREAD_BPS', 0, 0, 5000),
    encryptionKey,
    vaultKey,
    bitcoinNetwork: bitcoinNetworkOf(env.OPENBAAS_BITCOIN_NETWORK, mode),
    sandboxSeed: sandboxSeedOf(env.OPENBAAS_SANDBOX_SEED, mode),
    sandboxBlockSeconds: integer(env, 'OPENBAAS_SANDBOX_BLOCK_SECONDS', 0, 0, 86_400),
    cryptoConfirmations: pairList(env, 'OPENBAAS_CRYPTO_CONFIRMATIONS'),
    cryptoWithdrawalFees: pairList(env, 'OPENBAAS_CRYPTO_WITHDRAWAL_FEES'),
    vaultPublicHost: vaultPublicHostOf(env.OPENBAAS_VAULT_PUBLIC_HOST, publicBaseUrl),
    vaultAllowedOrigins: originList(env.OPENBAAS_VAULT_ALLOWED_ORIGINS),
    vaultFrameAncestors: frameAncestors(env.OPENBAAS_VAULT_FRAME_ANCESTORS, mode),
    writeBatchSizeMax: integer(env, 'WRITE_BATCH_SIZE_MAX', 64, 1, 1000),
    writeBatchConcurrency: integer(env, 'WRITE_BATCH_CONCURRENCY', 2, 1, 64),
    cardGroupConcurrency: integer(env, 'CARD_GROUP_CONCURRENCY', 1, 1, 64),
    cardGroupOverlap: switchOf(env, 'CARD_GROUP_OVERLAP', true),
    readBatchConcurrency: integer(env, 'READ_BATCH_CONCURRENCY', 1, 1, 64),
    operatingBank: operatingBankFrom(env),
    sandboxBankSettlementDelayMs: integer(env, 'SANDBOX_BANK_SETTLEMENT_DELAY_MS', 60_000, 0, 30 * 24 * 3600_000),
  };
}

function text(env: NodeJS.ProcessEnv, name: string, fallback: string, pattern: RegExp, rule: string): string {
  const value = env[name] || fallback;
  if (!pattern.test(value)) throw new ConfigError(`${name} must be ${rule}, got "${value}"`);
  return value;
}

/**
 * The operating bank's details. Only their form is checked here; the bank-accounts module checks
 * the routing numbers' ABA checksums when it starts.
 */
function operatingBankFrom(env: NodeJS.ProcessEnv): OperatingBankConfig {
  const defaults = sandboxOperatingBank;
  const name = /^\P{Cc}{1,140}$/u;
  const routing = /^[0-9]{9}$/;
  const bic = /^[A-Z0-9]{8}([A-Z0-9]{3})?$/;
  const masterAccountNumber = text(env, 'OPERATING_BANK_MASTER_ACCOUNT_NUMBER', defaults.masterAccountNumber, /^[0-9]{4,17}$/, '4 to 17 digits');
  // The master account must never be mistaken for a wallet's own number (12 digits starting 70, 71 or 72).
  if (/^7[0-2][0-9]{10}$/.test(masterAccountNumber)) {
    throw new ConfigError('OPERATING_BANK_MASTER_ACCOUNT_NUMBER must not have the form of a wallet\'s account number (12 digits starting with 70, 71 or 72)');
  }
  return {
    name: text(env, 'OPERATING_BANK_NAME', defaults.name, name, '1 to 140 characters'),
    address: text(env, 'OPERATING_BANK_ADDRESS', defaults.address, name, '1 to 140 characters'),
    routingNumber: text(env, 'OPERATING_BANK_ROUTING_NUMBER', defaults.routingNumber, routing, '9 digits'),
    swiftCode: text(env, 'OPERATING_BANK_SWIFT_CODE', defaults.swiftCode, bic, '8 or 11 capital letters and digits'),
    masterAccountNumber,
    intermediaryName: text(env, 'INTERMEDIARY_BANK_NAME', defaults.intermediaryName, name, '1 to 140 characters'),
    intermediaryRoutingNumber: text(env, 'INTERMEDIARY_BANK_ROUTING_NUMBER', defaults.intermediaryRoutingNumber, routing, '9 digits'),
    intermediaryBic: text(env, 'INTERMEDIARY_BANK_BIC', defaults.intermediaryBic, bic, '8 or 11 capital letters and digits'),
  };
}
