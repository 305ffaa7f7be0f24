import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { Deps } from '../../platform/deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import './webhooks.tables.js';

/**
 * Webhook fault injection (sandbox only): a client makes its own deliveries arrive twice, late
 * and out of order, so it can prove that its consumer copes with what at-least-once delivery
 * allows. The settings live in `webhook_faults` (migration 0020), one row per client; the
 * delivery worker applies them (delivery-worker.ts) and never reads them in production mode.
 */

/** Both delays are at most 10 minutes. */
export const faultDelayMaxMs = 600_000;

export interface WebhookFaults {
  /** The probability (0 to 1) that a delivery that succeeded is sent once more. */
  duplicateRate: number;
  /** Each first attempt is held back by a random delay in [0, reorderWindowMs) as well. */
  reorderWindowMs: number;
  /** Each first attempt is held back by this much. */
  extraDelayMs: number;
}

export interface WebhookFaultsView extends WebhookFaults {
  enabled: boolean;
  updatedAt: string | null;
}

const noFaults: WebhookFaults = { duplicateRate: 0, reorderWindowMs: 0, extraDelayMs: 0 };

/** True when the settings change anything. */
export function faultsEnabled(faults: WebhookFaults): boolean {
  return faults.duplicateRate > 0 || faults.reorderWindowMs > 0 || faults.extraDelayMs > 0;
}

function view(faults: WebhookFaults, updatedAt: Date | null): WebhookFaultsView {
  return { ...faults, enabled: faultsEnabled(faults), updatedAt: updatedAt?.toISOString() ?? null };
}

export async function getFaults(db: Db | Tx, clientId: string): Promise<WebhookFaultsView> {
  const row = await db.selectFrom('webhook_faults').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  if (!row) return view(noFaults, null);
  return view({ duplicateRate: Number(row.duplicate_rate), reorderWindowMs: row.reorder_window_ms, extraDelayMs: row.extra_delay_ms }, row.updated_at);
}

/** Replaces the client's settings (a field left out is 0). */
export async function putFaults(tx: Tx, context: RequestContext, input: Partial<WebhookFaults>): Promise<WebhookFaultsView> {
  const faults: WebhookFaults = {
    duplicateRate: input.duplicateRate ?? 0,
    reorderWindowMs: input.reorderWindowMs ?? 0,
    extraDelayMs: input.extraDelayMs ?? 0,
  };
  await tx
    .insertInto('webhook_faults')
    .values({
      client_id: context.clientId,
      duplicate_rate: faults.duplicateRate,
      reorder_window_ms: faults.reorderWindowMs,
      extra_delay_ms: faults.extraDelayMs,
      created_at: context.now,
      updated_at: context.now,
    })
    .onConflict((conflict) =>
      conflict.column('client_id').doUpdateSet({
        duplicate_rate: faults.duplicateRate,
        reorder_window_ms: faults.reorderWindowMs,
        extra_delay_ms: faults.extraDelayMs,
        updated_at: context.now,
      }),
    )
    .execute();
  return view(faults, context.now);
}

/** Turns fault injection off for the client (nothing to do when it was off). */
export async function deleteFaults(tx: Tx, clientId: string): Promise<{ view: WebhookFaultsView; deletedNow: boolean }> {
  const result = await tx.deleteFrom('webhook_faults').where('client_id', '=', clientId).executeTakeFirst();
  return { view: view(noFaults, null), deletedNow: Number(result.numDeletedRows) > 0 };
}

/** How long a process trusts the settings it read; a change made by this process is seen at once. */
export const faultsCacheTtlMs = 1000;
const cachedClientsMax = 10_000;

/**
 * The settings of the clients whose deliveries a worker claims, read once per client and second
 * (one query for all the clients of a claim that are not cached), so deliveries of clients without
 * faults cost nothing more than that. The routes of this process drop a client's entry when they
 * change its settings; other processes see a change within faultsCacheTtlMs.
 */
export class WebhookFaultsCache {
  readonly #entries = new Map<string, { faults: WebhookFaults | null; expiresAtMs: number }>();

  constructor(private readonly db: Db) {}

  /** The enabled settings of each client of `clientIds` that has some. */
  async faultsOf(clientIds: Iterable<string>): Promise<Map<string, WebhookFaults>> {
    const nowMs = Date.now();
    const found = new Map<string, WebhookFaults>();
    const missing: string[] = [];
    for (const clientId of new Set(clientIds)) {
      const entry = this.#entries.get(clientId);
      if (entry && entry.expiresAtMs > nowMs) {
        if (entry.faults) found.set(clientId, entry.faults);
      } else {
        missing.push(clientId);
      }
    }
    if (missing.length === 0) return found;
    const rows = await sql<{ client_id: string; duplicate_rate: number; reorder_window_ms: number; extra_delay_ms: number }>`
      SELECT client_id, duplicate_rate, reorder_window_ms, extra_delay_ms FROM webhook_faults WHERE client_id = ANY(${missing}::uuid[])
    `.execute(this.db);
    const read = new Map<string, WebhookFaults>();
    for (const row of rows.rows) {
      const faults = { duplicateRate: Number(row.duplicate_rate), reorderWindowMs: row.reorder_window_ms, extraDelayMs: row.extra_delay_ms };
      if (faultsEnabled(faults)) read.set(row.client_id, faults);
    }
    if (this.#entries.size + missing.length > cachedClientsMax) this.#entries.clear();
    for (const clientId of missing) {
      const faults = read.get(clientId) ?? null;
      this.#entries.set(clientId, { faults, expiresAtMs: nowMs + faultsCacheTtlMs });
      if (faults) found.set(clientId, faults);
    }
    return found;
  }

  /** Forgets what was read for the client (its settings just changed). */
  forget(clientId: string): void {
    this.#entries.delete(clientId);
  }
}

const caches = new WeakMap<Db, WebhookFaultsCache>();

/** The cache of a running program (one per database handle, shared by its routes and workers). */
export function webhookFaultsOf(deps: Pick<Deps, 'db'>): WebhookFaultsCache {
  let cache = caches.get(deps.db);
  if (!cache) {
    cache = new WebhookFaultsCache(deps.db);
    caches.set(deps.db, cache);
  }
  return cache;
}

/** The delay a delivery's first attempt is held back by: the extra delay plus a random share of the reorder window. */
export function injectedDelayMs(faults: WebhookFaults, random: () => number): number {
  const spread = faults.reorderWindowMs > 0 ? Math.floor(random() * faults.reorderWindowMs) : 0;
  return faults.extraDelayMs + Math.min(spread, Math.max(0, faults.reorderWindowMs - 1));
}

/** Whether a delivery that just succeeded is sent once more (no random draw at rates 0 and 1). */
export function duplicates(faults: WebhookFaults, random: () => number): boolean {
  if (faults.duplicateRate <= 0) return false;
  if (faults.duplicateRate >= 1) return true;
  return random() < faults.duplicateRate;
}
