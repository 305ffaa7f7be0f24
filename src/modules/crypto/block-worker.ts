import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import { withTransaction, type Tx } from '../../platform/db/transaction.js';
import { blocksPerCallMax, mineBlocks } from './crypto-transfers.service.js';
import type { CryptoNetworkName } from './networks.js';

/** Most (client, network) chains one pass of the block worker looks at. */
export const chainsPerPassMax = 500;

/**
 * The sandbox block worker (OPENBAAS_SANDBOX_BLOCK_SECONDS): every chain of a client that has a
 * PENDING deposit or withdrawal mines one block per period of the client's clock, so a clock
 * advance of ten periods mines ten blocks (at the next pass of the worker, or before the advance
 * answers: `POST /v1/sandbox/clock/advance` calls this for its client). A chain's period starts at
 * its last block (by the worker or by the blocks call), or at its oldest pending transfer when that
 * is later (a transfer made after the last block is not confirmed by blocks of before its time;
 * later transfers of the same chain share the chain's blocks from then on). Each block is dated at
 * its own time by the client's clock (the end of its period), not at the pass: the due blocks are
 * mined in runs that end where the next pending transfer completes or fails, each run dated at its
 * last block, so a transfer completes at the time of the block that completed it. Each chain is
 * mined in its own transaction under its row lock, so several worker processes never mine the same
 * period twice. `clientId` limits the pass to one client. Returns how many chains mined.
 */
export async function mineDueBlocks(deps: Pick<Deps, 'db' | 'clock'>, periodSeconds: number, options: { clientId?: string } = {}): Promise<number> {
  if (periodSeconds <= 0) return 0;
  const periodMs = periodSeconds * 1000;
  const ofClient = options.clientId === undefined ? sql`` : sql`AND t.client_id = ${options.clientId}::uuid`;
  const chains = await sql<{ client_id: string; network: CryptoNetworkName; offset_ms: string; oldest: Date }>`
    SELECT t.client_id, t.network, c.clock_offset_ms::text AS offset_ms, min(t.created_at) AS oldest
    FROM crypto_transfers t JOIN clients c ON c.id = t.client_id
    WHERE t.status = 'PENDING' ${ofClient}
    GROUP BY t.client_id, t.network, c.clock_offset_ms
    ORDER BY min(t.created_at)
    LIMIT ${chainsPerPassMax}
  `.execute(deps.db);
  let mined = 0;
  for (const chain of chains.rows) {
    const now = new Date(deps.clock.now().getTime() + Number(chain.offset_ms));
    const done = await withTransaction(deps.db, async (tx) => {
      // A chain that never mined gets its row (height 0), then it is locked.
      await tx
        .insertInto('crypto_chain_heights')
        .values({ client_id: chain.client_id, network: chain.network, height: 0, mined_at: null })
        .onConflict((conflict) => conflict.columns(['client_id', 'network']).doNothing())
        .execute();
      const row = await tx
        .selectFrom('crypto_chain_heights')
        .select('mined_at')
        .where('client_id', '=', chain.client_id)
        .where('network', '=', chain.network)
        .forUpdate()
        .executeTakeFirstOrThrow();
      // Blocks mined while nothing was pending there confirm nothing: the period counts from the oldest pending transfer at the earliest.
      const oldest = new Date(chain.oldest);
      let since = row.mined_at === null || row.mined_at < oldest ? oldest : row.mined_at;
      let due = Math.floor((now.getTime() - since.getTime()) / periodMs);
      if (due < 1) return false;
      const traceId = crypto.randomUUID();
      while (due > 0) {
        const next = await blocksToNextOutcome(tx, chain.client_id, chain.network);
        if (next === undefined) break;
        const run = Math.min(due, next, blocksPerCallMax);
        const at = new Date(since.getTime() + run * periodMs);
        await mineBlocks(tx, { clientId: chain.client_id, traceId, now: at }, chain.network, run);
        since = at;
        due -= run;
      }
      return true;
    });
    if (done) mined++;
  }
  return mined;
}

/** Blocks until the chain's next pending transfer completes (its confirmations reach the requirement) or fails (at its next block); undefined when none is pending. */
async function blocksToNextOutcome(tx: Tx, clientId: string, network: CryptoNetworkName): Promise<number | undefined> {
  const result = await sql<{ blocks: number | null }>`
    SELECT min(CASE WHEN planned_failure IS NOT NULL THEN 1 ELSE greatest(confirmations_required - confirmations, 1) END)::int AS blocks
    FROM crypto_transfers
    WHERE client_id = ${clientId}::uuid AND network = ${network} AND status = 'PENDING'
  `.execute(tx);
  return result.rows[0]?.blocks ?? undefined;
}
