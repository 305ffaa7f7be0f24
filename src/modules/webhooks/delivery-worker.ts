import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { takeClientFences } from '../../platform/db/client-fence.js';
import type { WorkerLogger } from '../../platform/workers.js';
import { deliveryBody, errorKeptChars, nextStateAfter, responseBodyKeptChars, truncate, type NextState } from './delivery-policy.js';
import { webhookHttpClient, type PostOutcome, type WebhookHttpClient } from './webhook-http.js';
import { signedHeaders } from './webhook-signing.js';
import { webhookSecretBoxOf } from './webhook-secrets.js';
import { duplicates, injectedDelayMs, webhookFaultsOf, type WebhookFaults, type WebhookFaultsCache } from './webhook-faults.js';
import { disableFailingEndpoint, workerName } from './webhooks.service.js';
import { EndpointFlowControl } from './flow-control.js';
import './webhooks.tables.js';
import './events.tables.js';

/**
 * The delivery worker. Each claim takes, for every active subscription, its due deliveries up to
 * the free part of the subscription's concurrency (requests already in flight, in any process,
 * count against it; a request that got its answer stops counting at once, before its outcome is
 * written), marks them with a lease and counts the attempt; the claim is one statement
 * with FOR UPDATE SKIP LOCKED, so concurrent workers never take the same delivery (and claims
 * also take a short advisory lock, so the concurrency bound holds across processes). The requests
 * then run outside any transaction; each outcome is written back only by the holder of the lease.
 * A worker that dies leaves its leases to expire: the deliveries are then claimed again as a new
 * attempt (the lost one is logged as such), so every delivery is made at least once and no
 * attempt number is ever sent twice.
 *
 * In sandbox mode a client may ask for injected faults (webhook-faults.ts). A delay is applied at
 * a delivery's first claim: instead of sending, the worker moves its next_attempt_at forward by
 * the delay and gives the claim back (uncounting the attempt), once per delivery, so a held
 * delivery occupies neither a worker nor a concurrency slot and other clients are not held up;
 * should the worker die before giving it back, the lease expires and the delivery goes out
 * without the delay (at least once still holds). A duplicate is sent after a successful attempt
 * has been recorded, as an attempt of its own (the next number, reserved before sending and
 * logged with injected_fault DUPLICATE) that never changes the delivery's status.
 */

/** Deliveries claimed by one statement at most. */
const claimBatchMax = 500;
/** Pending deliveries of deactivated subscriptions (left by a race with the deactivation) are swept this often. */
const sweepIntervalMs = 30_000;
/** A claim never follows the previous one sooner than this, so completions are claimed for in groups. */
const claimGapMs = 5;
/**
 * While deliveries keep coming (work found within the last busySpanMs), an idle worker looks
 * again after busyPollMs instead of the configured poll interval, so the lag stays low under
 * load without polling fast when nothing happens.
 */
const busyPollMs = 10;
const busySpanMs = 2000;
/** Outcomes written by one statement at most. */
const outcomeBatchMax = 500;
/** Read at most this much of a receiver's answer. */
const responseBodyReadMaxBytes = 16 * 1024;
const abandonedAttemptError = 'no outcome recorded: the worker stopped before recording it (its claim expired)';
const eventMissingError = 'the event is no longer available';
const duplicateUnrecordedError = 'no outcome recorded: the worker stopped before recording it';
/** Flow control (flow-control.ts): only answers within this time let an endpoint's concurrency grow. */
const growLatencyMs = 1000;
/** Flow control: an endpoint's concurrency is halved at most this often. */
const decreaseSpacingMs = 1000;
/** Flow control: the longest pause a Retry-After obtains. */
const pauseMaxMs = 3_600_000;

interface ClaimedRow {
  client_id: string;
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  test_data: Record<string, unknown> | null;
  attempt_count: number;
  final_attempt: number | null;
  created_at: Date;
  lease_token: string;
  previous_lease_expires_at: Date | null;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  event_data: Record<string, unknown> | null;
  event_created_at: Date | null;
  /** The client's clock offset (migration 0018): the delivery's schedule is in the client's time. */
  clock_offset_ms: string;
}

export interface DeliveryWorkerOptions {
  /** The random source of fault injection (sandbox); tests pass a fixed one. */
  random?: () => number;
  /** The outgoing HTTP client; by default the one of the configured mode. */
  http?: WebhookHttpClient;
  /** Told of the failures the worker recovers from by itself (an outcome it could not write, say); the server's logger. */
  logger?: Pick<WorkerLogger, 'error'>;
}

interface QueuedOutcome {
  row: ClaimedRow;
  attemptedAt: Date;
  /** When the outcome was known, by the client's clock: endpoint health measures runs of failures with it. */
  clientAt: Date;
  /** Whether the attempt says something about the endpoint (not a test delivery, not a missing event). */
  countsForHealth: boolean;
  outcome: PostOutcome;
  next: NextState;
  abandonedAt: Date | null;
  resolve(): void;
  reject(error: unknown): void;
}

export class DeliveryWorker {
  private readonly inflight = new Set<Promise<void>>();
  private readonly outcomes: QueuedOutcome[] = [];
  /** Deliveries of this worker whose request is over but whose outcome is not written yet. */
  private readonly answered = new Set<string>();
  private flushing: Promise<void> | undefined;
  private readonly http: WebhookHttpClient;
  private stopping = false;
  private wake: (() => void) | undefined;
  private signalled = false;
  private lastWorkMs = 0;
  private lastSweepMs = 0;
  private lastClaimMs = 0;
  /** Fault injection settings: read in sandbox mode only, so production never injects a fault. */
  private readonly faults: WebhookFaultsCache | undefined;
  private readonly random: () => number;
  private readonly logger: Pick<WorkerLogger, 'error'> | undefined;
  /** Requests in flight per subscription, learnt from the endpoints' answers. */
  private readonly flow: EndpointFlowControl;

  constructor(
    private readonly deps: Deps,
    options: DeliveryWorkerOptions = {},
  ) {
    this.http = options.http ?? webhookHttpClient(deps.config.mode);
    this.faults = deps.config.mode === 'sandbox' ? webhookFaultsOf(deps) : undefined;
    this.random = options.random ?? Math.random;
    this.logger = options.logger;
    this.flow = new EndpointFlowControl({
      initial: deps.config.webhookConcurrencyPerSubscription,
      max: deps.config.webhookConcurrencyPerSubscriptionMax,
      growLatencyMs,
      decreaseSpacingMs,
      pauseMaxMs,
    });
  }

  /**
   * The background task: claims and sends until stop() is called. Between claims it sleeps
   * until a request finishes or the poll interval passes (short while work keeps coming); the
   * poll also picks up scheduled retries and expired claims.
   */
  async run(): Promise<void> {
    while (!this.stopping) {
      await this.sweepIfDue();
      const gap = this.lastClaimMs + claimGapMs - Date.now();
      if (gap > 0) await sleep(gap);
      const { claimed } = await this.claimAndStart();
      if (claimed > 0) {
        this.lastWorkMs = Date.now();
        continue;
      }
      const busy = Date.now() - this.lastWorkMs < busySpanMs;
      await this.nextWakeOr(busy ? Math.min(busyPollMs, this.deps.config.webhookPollIntervalMs) : this.deps.config.webhookPollIntervalMs);
    }
  }

  /** Stops claiming and waits for the requests in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.signal();
    await Promise.allSettled([...this.inflight]);
  }

  /**
   * Delivers everything that is due now and waits for the outcomes; returns the number of
   * attempts made. Tests drive delivery with it (after moving the injected clock).
   */
  async deliverDue(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const { claimed, started } = await this.claimAndStart();
      attempts += started;
      if (claimed === 0 && this.inflight.size === 0) return attempts;
      await Promise.allSettled([...this.inflight]);
    }
  }

  /** Cancels pending deliveries whose subscription is no longer active, dated by each client's clock. */
  async sweep(): Promise<number> {
    const now = this.deps.clock.now();
    const result = await sql`
      UPDATE webhook_deliveries d
      SET status = 'CANCELLED', lease_token = NULL, lease_expires_at = NULL,
        completed_at = ${now}::timestamptz + c.clock_offset_ms * interval '1 millisecond',
        updated_at = ${now}::timestamptz + c.clock_offset_ms * interval '1 millisecond'
      FROM webhook_subscriptions s, clients c
      WHERE d.client_id = s.client_id AND d.subscription_id = s.id AND NOT s.active AND c.id = d.client_id
        AND d.status = 'PENDING' AND (d.lease_token IS NULL OR d.lease_expires_at <= ${now})
    `.execute(this.deps.db);
    return Number(result.numAffectedRows ?? 0);
  }

  private async sweepIfDue(): Promise<void> {
    if (Date.now() - this.lastSweepMs < sweepIntervalMs) return;
    this.lastSweepMs = Date.now();
    await this.sweep();
  }

  /** Something worth a new claim happened (a request finished, or stop). */
  private signal(): void {
    this.signalled = true;
    this.wake?.();
  }

  private nextWakeOr(timeoutMs: number): Promise<void> {
    if (this.signalled || this.stopping) {
      this.signalled = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        this.signalled = false;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.wake = done;
    });
  }

  /** Claims due deliveries and starts their requests: the number claimed, and of those started (the rest were held back). */
  private async claimAndStart(): Promise<{ claimed: number; started: number }> {
    this.lastClaimMs = Date.now();
    const claimed = await this.claim();
    const { rows, faults } = await this.holdBack(claimed);
    for (const row of rows) {
      const execution = this.deliver(row, faults.get(row.client_id)).catch((error: unknown) => {
        // The attempt failed before its outcome was written (the database unavailable, a secret
        // this process cannot open): the lease expires and the delivery is attempted again, which
        // is what at-least-once asks for. `err` says which (until 2026-12-05 the message blamed the
        // database whatever the cause; found by an audit).
        this.logger?.error(
          { err: error, clientId: row.client_id, deliveryId: row.id, attempt: row.attempt_count },
          'webhook delivery: an attempt failed before its outcome was written (see err); the delivery is attempted again when its claim expires',
        );
      });
      const tracked = execution.finally(() => {
        this.inflight.delete(tracked);
        this.signal();
      });
      this.inflight.add(tracked);
    }
    return { claimed: claimed.length, started: rows.length };
  }

  /**
   * Fault injection (sandbox): gives back the claims of first attempts whose client asked for a
   * delay, with next_attempt_at moved forward by it (in the client's time, like the schedule).
   * Only the holder of the claim can do so, and only once per delivery (injected_delay_ms). Returns
   * the deliveries to send now and the settings of their clients.
   */
  private async holdBack(claimed: ClaimedRow[]): Promise<{ rows: ClaimedRow[]; faults: Map<string, WebhookFaults> }> {
    if (!this.faults || claimed.length === 0) return { rows: claimed, faults: new Map() };
    const faults = await this.faults.faultsOf(claimed.map((row) => row.client_id));
    if (faults.size === 0) return { rows: claimed, faults };
    const holds: Array<{ row: ClaimedRow; delayMs: number }> = [];
    // In creation order (delivery ids keep it), so a fixed random source gives fixed delays.
    for (const row of [...claimed].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      const clientFaults = faults.get(row.client_id);
      if (!clientFaults || row.attempt_count !== 1 || row.test_data !== null) continue;
      const delayMs = injectedDelayMs(clientFaults, this.random);
      if (delayMs > 0) holds.push({ row, delayMs });
    }
    if (holds.length === 0) return { rows: claimed, faults };
    const held = await sql<{ id: string }>`
      UPDATE webhook_deliveries d
      SET next_attempt_at = d.next_attempt_at + i.delay_ms * interval '1 millisecond', injected_delay_ms = i.delay_ms,
        attempt_count = d.attempt_count - 1, lease_token = NULL, lease_expires_at = NULL
      FROM unnest(
        ${holds.map((hold) => hold.row.client_id)}::uuid[], ${holds.map((hold) => hold.row.id)}::uuid[],
        ${holds.map((hold) => hold.row.lease_token)}::uuid[], ${holds.map((hold) => hold.delayMs)}::int[]
      ) AS i(client_id, id, lease_token, delay_ms)
      WHERE d.client_id = i.client_id AND d.id = i.id AND d.lease_token = i.lease_token AND d.injected_delay_ms IS NULL
      RETURNING d.id
    `.execute(this.deps.db);
    const heldIds = new Set(held.rows.map((row) => row.id));
    return { rows: claimed.filter((row) => !heldIds.has(row.id)), faults };
  }

  /**
   * One claim (see openbaas_claim_webhook_deliveries in migrations 0004 and 0022): one statement,
   * one round trip. Each subscription gets as many deliveries as flow control allows it in flight.
   */
  private async claim(): Promise<ClaimedRow[]> {
    const { clock, config } = this.deps;
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + config.webhookLeaseMs);
    const limits = this.flow.claimLimits(now.getTime());
    const result = await sql<ClaimedRow>`
      SELECT * FROM openbaas_claim_webhook_deliveries(
        ${now}::timestamptz, ${leaseUntil}::timestamptz, ${crypto.randomUUID()}::uuid,
        ${config.webhookConcurrencyPerSubscription}::int, ${claimBatchMax}::int, ${[...this.answered]}::uuid[],
        ${limits.subscriptionIds}::uuid[], ${limits.limits}::int[])
    `.execute(this.deps.db);
    return result.rows;
  }

  /** Now by the delivery's client's clock (the sandbox offset): the time of its attempts, and what its secrets' overlap is measured by. */
  private clientNow(row: ClaimedRow): Date {
    return new Date(this.deps.clock.now().getTime() + Number(row.clock_offset_ms));
  }

  private async deliver(row: ClaimedRow, faults: WebhookFaults | undefined): Promise<void> {
    const attemptedAt = this.clientNow(row);
    const data = row.test_data ?? row.event_data;
    const createdAt = row.test_data ? row.created_at : row.event_created_at;
    let outcome: PostOutcome;
    let body: string | undefined;
    if (!data || !createdAt) {
      outcome = { ok: false, httpStatus: null, latencyMs: 0, responseBody: null, error: eventMissingError };
    } else {
      body = deliveryBody({ id: row.event_id, type: row.event_type, createdAt: createdAt.toISOString(), data });
      outcome = await this.post(row, body, row.attempt_count, attemptedAt);
    }
    // The request is over: its slot is free for the next claim even before the outcome is written.
    this.answered.add(row.id);
    this.signal();
    try {
      await this.record(row, attemptedAt, outcome);
    } finally {
      this.answered.delete(row.id);
    }
    if (outcome.ok && body !== undefined && faults && duplicates(faults, this.random)) await this.sendDuplicate(row, body);
  }

  /** Sends attempt `attempt` of a delivery, signed now. */
  private post(row: ClaimedRow, body: string, attempt: number, attemptedAt: Date): Promise<PostOutcome> {
    // The signature timestamp is the real time of sending: receivers compare it with their own
    // clock to refuse replays, so it must not follow a simulated clock. Whether the previous secret
    // still signs is the client's time (attemptedAt), as previousSecretExpiresAt is.
    const headers = signedHeaders(webhookSecretBoxOf(this.deps).signingSecrets(row.client_id, row.subscription_id, row, attemptedAt), row.event_id, Math.floor(Date.now() / 1000), body);
    return this.http.post(
      row.url,
      { ...headers, 'openbaas-delivery-id': row.id, 'openbaas-attempt': String(attempt) },
      body,
      { timeoutMs: this.deps.config.webhookTimeoutMs, responseBodyMaxBytes: responseBodyReadMaxBytes },
    );
  }

  /**
   * Fault injection (sandbox): sends a delivery that was just recorded as DELIVERED once more, as
   * the next attempt. The attempt number is taken first, together with a log entry that says the
   * outcome is unknown (so a replay never reuses the number, and a worker that dies leaves a true
   * log); nothing is sent if the delivery changed meanwhile (a manual retry, say). The outcome
   * then replaces that entry; the delivery itself stays as it is.
   */
  private async sendDuplicate(row: ClaimedRow, body: string): Promise<void> {
    const attemptedAt = this.clientNow(row);
    const reserved = await sql<{ attempt_number: number }>`
      WITH reserved AS (
        UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, updated_at = ${attemptedAt}
        WHERE client_id = ${row.client_id} AND id = ${row.id} AND status = 'DELIVERED' AND lease_token IS NULL
          AND attempt_count = ${row.attempt_count}::int
        RETURNING client_id, id, attempt_count
      )
      INSERT INTO webhook_delivery_attempts (client_id, delivery_id, attempt_number, attempted_at, succeeded, error, worker, injected_fault)
      SELECT client_id, id, attempt_count, ${attemptedAt}, false, ${duplicateUnrecordedError}, ${workerName}, 'DUPLICATE' FROM reserved
      RETURNING attempt_number
    `.execute(this.deps.db);
    const attempt = reserved.rows[0]?.attempt_number;
    if (attempt === undefined) return;
    const outcome = await this.post(row, body, attempt, attemptedAt);
    await sql`
      UPDATE webhook_delivery_attempts
      SET succeeded = ${outcome.ok}, http_status = ${outcome.httpStatus}::int, latency_ms = ${outcome.latencyMs}::int,
        response_body = ${truncate(outcome.responseBody, responseBodyKeptChars)}, error = ${truncate(outcome.error, errorKeptChars)}
      WHERE client_id = ${row.client_id} AND delivery_id = ${row.id} AND attempt_number = ${attempt}::int
    `.execute(this.deps.db);
  }

  /**
   * Queues the outcome of an attempt; outcomes are written in batches (one statement for all
   * that arrived while the previous batch was being written), so a busy worker does not pay one
   * commit per delivery. Resolves once this outcome is written.
   */
  private record(row: ClaimedRow, attemptedAt: Date, outcome: PostOutcome): Promise<void> {
    // The next attempt is scheduled by the client's clock, as the claim reads it (migration 0018).
    const now = new Date(this.deps.clock.now().getTime() + Number(row.clock_offset_ms));
    // Without its event a delivery cannot be made at all: fail it now rather than retry.
    const finalAttempt = outcome.error === eventMissingError ? row.attempt_count : row.final_attempt;
    const next = nextStateAfter(this.deps.config, outcome, row.attempt_count, finalAttempt, now);
    // The endpoint's answer tunes its concurrency; a Retry-After pauses it, and this delivery
    // is not tried again sooner.
    const pauseMs = this.flow.observe(row.subscription_id, outcome, this.deps.clock.now().getTime());
    if (pauseMs !== undefined && next.status === 'PENDING' && next.nextAttemptAt.getTime() < now.getTime() + pauseMs) {
      next.nextAttemptAt = new Date(now.getTime() + pauseMs);
    }
    return new Promise<void>((resolve, reject) => {
      this.outcomes.push({
        row,
        attemptedAt,
        clientAt: now,
        countsForHealth: row.test_data === null && outcome.error !== eventMissingError,
        outcome,
        next,
        // The lease is in real time; the attempt log in the client's.
        abandonedAt: row.previous_lease_expires_at
          ? new Date(row.previous_lease_expires_at.getTime() - this.deps.config.webhookLeaseMs + Number(row.clock_offset_ms))
          : null,
        resolve,
        reject,
      });
      if (!this.flushing) this.flushing = this.flushOutcomes().finally(() => (this.flushing = undefined));
    });
  }

  private async flushOutcomes(): Promise<void> {
    while (this.outcomes.length > 0) {
      const batch = this.outcomes.splice(0, outcomeBatchMax);
      try {
        await this.writeOutcomes(batch);
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
  }

  private async writeOutcomes(batch: readonly QueuedOutcome[]): Promise<void> {
    const real = new Set(batch.map((entry) => `${entry.row.id}#${entry.row.attempt_count}`));
    // A lost earlier attempt is logged as such, unless its slow worker records the real outcome
    // (here or later), which then wins.
    const abandoned = batch.filter(
      (entry) => entry.abandonedAt !== null && entry.row.attempt_count > 1 && !real.has(`${entry.row.id}#${entry.row.attempt_count - 1}`),
    );
    const health = batch.filter((entry) => entry.countsForHealth);
    // One statement: each delivery changes only if this worker still holds its claim; every
    // attempt is logged either way (it happened), unless its delivery no longer exists. The same statement keeps the endpoints' health
    // (see the health CTEs below) and returns the subscriptions that have now failed for
    // WEBHOOK_DISABLE_AFTER_MS; those are disabled afterwards, in a transaction of their own.
    // First the fence of the batch's clients (client-fence.ts): a sandbox reset or restore of one
    // of them is then either committed before the statement below begins, whose checks then see
    // its deliveries gone, or waits for it. Until 2026-12-08 a restore that deleted a delivery and
    // committed while the statement ran made its attempt fail the delivery's foreign key, and with
    // it the whole batch, the other clients' outcomes too (found by reading the code, then
    // reproduced: restore-during-outcome.postgres.test.ts).
    const result = await withTransaction(this.deps.db, async (tx) => {
      await takeClientFences(tx, batch.map((entry) => entry.row.client_id));
      return this.outcomesStatement(batch, abandoned, health).execute(tx);
    });
    for (const due of result.rows) await this.disableFailingEndpoint(due.client_id, due.subscription_id, Number(due.clock_offset_ms));
  }

  /** The one statement that records a batch's outcomes (writeOutcomes). */
  private outcomesStatement(batch: readonly QueuedOutcome[], abandoned: readonly QueuedOutcome[], health: readonly QueuedOutcome[]) {
    const column = <T>(pick: (entry: QueuedOutcome) => T) => batch.map(pick);
    return sql<{ client_id: string; subscription_id: string; clock_offset_ms: string }>`
      WITH input AS (
        SELECT * FROM unnest(
          ${column((entry) => entry.row.client_id)}::uuid[], ${column((entry) => entry.row.id)}::uuid[],
          ${column((entry) => entry.row.lease_token)}::uuid[], ${column((entry) => entry.next.status)}::text[],
          ${column((entry) => entry.next.nextAttemptAt.toISOString())}::timestamptz[],
          ${column((entry) => entry.next.completedAt?.toISOString() ?? null)}::timestamptz[],
          ${column((entry) => entry.row.attempt_count)}::int[], ${column((entry) => entry.attemptedAt.toISOString())}::timestamptz[],
          ${column((entry) => entry.outcome.ok)}::boolean[], ${column((entry) => entry.outcome.httpStatus)}::int[],
          ${column((entry) => entry.outcome.latencyMs)}::int[],
          ${column((entry) => truncate(entry.outcome.responseBody, responseBodyKeptChars))}::text[],
          ${column((entry) => truncate(entry.outcome.error, errorKeptChars))}::text[],
          ${column((entry) => entry.clientAt.toISOString())}::timestamptz[]
        ) AS i(client_id, id, lease_token, status, next_attempt_at, completed_at, attempt_number, attempted_at, succeeded,
               http_status, latency_ms, response_body, error, client_at)
      ), updated AS (
        UPDATE webhook_deliveries d
        -- Cancelled while this attempt was being sent (the subscription paused, deleted or no
        -- longer subscribed to the type): the cancellation kept the claim (the attempt is still
        -- being sent: a replay or a retry waits for it). An endpoint that acknowledged the attempt
        -- has the event, so the delivery is DELIVERED (a replay would otherwise send it again); a
        -- failed attempt leaves it CANCELLED as it was, its claim over (a replay may now send it).
        SET status = CASE WHEN d.status <> 'CANCELLED' THEN i.status WHEN i.succeeded THEN 'DELIVERED' ELSE 'CANCELLED' END,
          next_attempt_at = CASE WHEN d.status = 'CANCELLED' AND NOT i.succeeded THEN d.next_attempt_at ELSE i.next_attempt_at END,
          completed_at = CASE WHEN d.status = 'CANCELLED' AND NOT i.succeeded THEN d.completed_at ELSE i.completed_at END,
          lease_token = NULL, lease_expires_at = NULL, updated_at = i.client_at
        FROM input i
        WHERE d.client_id = i.client_id AND d.id = i.id
          AND (d.lease_token = i.lease_token
            -- Cancelled mid-send before 2026-12-03, when the cancellation took the claim itself.
            OR (i.succeeded AND d.status = 'CANCELLED' AND d.lease_token IS NULL AND d.attempt_count = i.attempt_number))
        RETURNING d.id
      ), abandoned AS (
        INSERT INTO webhook_delivery_attempts (client_id, delivery_id, attempt_number, attempted_at, succeeded, http_status, latency_ms, response_body, error, worker)
        SELECT a.client_id, a.id, a.attempt_number, a.attempted_at, false, NULL, NULL, NULL, ${abandonedAttemptError}, 'unknown'
        FROM unnest(
          ${abandoned.map((entry) => entry.row.client_id)}::uuid[], ${abandoned.map((entry) => entry.row.id)}::uuid[],
          ${abandoned.map((entry) => entry.row.attempt_count - 1)}::int[],
          ${abandoned.map((entry) => entry.abandonedAt?.toISOString() ?? null)}::timestamptz[]
        ) AS a(client_id, id, attempt_number, attempted_at)
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.client_id = a.client_id AND d.id = a.id)
        ON CONFLICT (client_id, delivery_id, attempt_number) DO NOTHING
      ), logged AS (
        INSERT INTO webhook_delivery_attempts (client_id, delivery_id, attempt_number, attempted_at, succeeded, http_status, latency_ms, response_body, error, worker)
        SELECT i.client_id, i.id, i.attempt_number, i.attempted_at, i.succeeded, i.http_status, i.latency_ms, i.response_body, i.error, ${workerName}
        FROM input i
        -- A delivery a sandbox reset or restore deleted while it was being sent has nothing to log
        -- its attempt against; without this, its attempt failed the whole batch, other clients'
        -- outcomes with it. One a restore brought back from before this attempt was claimed
        -- (fewer attempts than this one's number) is the snapshot's: the attempt is not its own.
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.client_id = i.client_id AND d.id = i.id AND d.attempt_count >= i.attempt_number)
        ON CONFLICT (client_id, delivery_id, attempt_number) DO UPDATE SET
          attempted_at = EXCLUDED.attempted_at, succeeded = EXCLUDED.succeeded, http_status = EXCLUDED.http_status,
          latency_ms = EXCLUDED.latency_ms, response_body = EXCLUDED.response_body, error = EXCLUDED.error, worker = EXCLUDED.worker
      ), health_input AS (
        -- Endpoint health, per subscription of the batch: did any attempt succeed, and when (by
        -- the client's clock) were the first and the last outcome.
        SELECT h.client_id, h.subscription_id, bool_or(h.succeeded) AS succeeded_any, min(h.client_at) AS first_at,
          max(h.client_at) AS last_at, max(h.clock_offset_ms) AS clock_offset_ms
        FROM unnest(
          ${health.map((entry) => entry.row.client_id)}::uuid[], ${health.map((entry) => entry.row.subscription_id)}::uuid[],
          ${health.map((entry) => entry.outcome.ok)}::boolean[], ${health.map((entry) => entry.clientAt.toISOString())}::timestamptz[],
          ${health.map((entry) => entry.row.clock_offset_ms)}::bigint[], ${health.map((entry) => entry.row.id)}::uuid[],
          ${health.map((entry) => entry.row.attempt_count)}::int[]
        ) AS h(client_id, subscription_id, succeeded, client_at, clock_offset_ms, delivery_id, attempt_number)
        -- As for the log: an attempt of a delivery a reset or restore removed or brought back from
        -- before it says nothing about the endpoint's health in the state the client now has.
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.client_id = h.client_id AND d.id = h.delivery_id AND d.attempt_count >= h.attempt_number)
        GROUP BY h.client_id, h.subscription_id
      ), health_changing AS (
        -- Only subscriptions whose record changes: a success ends a run of failures, a failure
        -- after a success starts one. Usually none, so the subscriptions are read, not written.
        -- SKIP LOCKED: never wait here for a client's change of the subscription (it locks the
        -- subscription, then its deliveries: the reverse of this statement); the change is then
        -- made by a later batch.
        SELECT s.client_id, s.id, h.succeeded_any, h.first_at
        FROM health_input h
        JOIN webhook_subscriptions s ON s.client_id = h.client_id AND s.id = h.subscription_id
        WHERE CASE WHEN h.succeeded_any THEN s.failing_since IS NOT NULL ELSE s.failing_since IS NULL END
        FOR NO KEY UPDATE OF s SKIP LOCKED
      ), health_changed AS (
        UPDATE webhook_subscriptions s
        SET failing_since = CASE WHEN c.succeeded_any THEN NULL ELSE c.first_at END
        FROM health_changing c
        WHERE s.client_id = c.client_id AND s.id = c.id
      )
      -- Due for disabling: every attempt of the batch failed, and the run began at least the
      -- period before the last of them.
      SELECT h.client_id, h.subscription_id, h.clock_offset_ms::text AS clock_offset_ms
      FROM health_input h
      JOIN webhook_subscriptions s ON s.client_id = h.client_id AND s.id = h.subscription_id
      WHERE NOT h.succeeded_any AND s.active AND ${this.deps.config.webhookDisableAfterMs}::bigint > 0
        AND h.last_at - COALESCE(s.failing_since, h.first_at) >= ${this.deps.config.webhookDisableAfterMs}::bigint * interval '1 millisecond'
    `;
  }

  /**
   * Disables a subscription whose endpoint has failed for the whole period (rare: at most once
   * per subscription until it is made active again). Its own transaction, after the outcomes are
   * written: a failure here leaves the subscription active, and the next failed attempt tries again.
   */
  private async disableFailingEndpoint(clientId: string, subscriptionId: string, clockOffsetMs: number): Promise<void> {
    try {
      const context = { clientId, traceId: crypto.randomUUID(), now: new Date(this.deps.clock.now().getTime() + clockOffsetMs) };
      await withTransaction(this.deps.db, (tx) => disableFailingEndpoint(tx, context, this.deps.config, subscriptionId));
    } catch (error) {
      // Nothing is lost: the outcomes are recorded; the endpoint is disabled at its next failure.
      this.logger?.error({ err: error, clientId, subscriptionId }, 'webhook delivery: a failing endpoint could not be disabled; tried again at its next failure');
    }
  }
}

/** Deleted by one statement at most, so the purge never holds many locks for long. */
const purgeBatchMax = 5000;

/**
 * Deletes deliveries (and their attempts) that finished longer ago than the event retention
 * (EVENT_RETENTION_DAYS, at least 30 days): the delivery log is kept as long as the events.
 * Pending deliveries are never purged. Returns the number of deliveries deleted.
 */
export async function purgeOldDeliveries(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.eventRetentionDays * 86_400_000);
  // Delivery ids are UUIDv7 from the creation time: every delivery created before the cutoff has
  // an id below this one, which lets each subscription's log index find them.
  const milliseconds = cutoff.getTime().toString(16).padStart(12, '0');
  const cutoffId = `${milliseconds.slice(0, 8)}-${milliseconds.slice(8, 12)}-7000-8000-000000000000`;
  let deleted = 0;
  for (;;) {
    const result = await sql<{ count: string }>`
      WITH old AS (
        SELECT d.client_id, d.id
        FROM webhook_subscriptions s
        CROSS JOIN LATERAL (
          SELECT d.client_id, d.id FROM webhook_deliveries d
          WHERE d.client_id = s.client_id AND d.subscription_id = s.id AND d.id < ${cutoffId}::uuid
            AND d.completed_at IS NOT NULL AND d.completed_at < ${cutoff}
          LIMIT ${purgeBatchMax}::int
        ) d
        LIMIT ${purgeBatchMax}::int
      ), attempts AS (
        DELETE FROM webhook_delivery_attempts a USING old
        WHERE a.client_id = old.client_id AND a.delivery_id = old.id
      ), removed AS (
        DELETE FROM webhook_deliveries d USING old
        WHERE d.client_id = old.client_id AND d.id = old.id
        RETURNING 1
      )
      SELECT count(*) AS count FROM removed
    `.execute(deps.db);
    const count = Number(result.rows[0]?.count ?? 0);
    deleted += count;
    if (count < purgeBatchMax) return deleted;
  }
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
