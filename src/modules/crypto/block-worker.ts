import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import type { Tx } from '../../platform/db/transaction.js';
import { withClientTransaction } from '../../platform/db/client-fence.js';
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
 * last block, so a transfer completes at the time of the block that completed it. A block confirms
 * only the transfers made by its time: a run also ends before the first block dated at or after a
 * transfer made since, so a catch-up (blocks due while the worker was off, or a clock advance)
 * never completes a transfer before it was made. Each chain is
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
    // One of the client's writers: waits for a sandbox reset or restore of the client (client-fence.ts).
    const done = await withClientTransaction(deps.db, chain.client_id, async (tx) => {
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
      let minedAny = false;
      while (due > 0) {
        const firstBlockAt = new Date(since.getTime() + periodMs);
        const { blocks, newer } = await nextBlocks(tx, chain.client_id, chain.network, firstBlockAt);
        if (blocks === undefined) {
          // Nothing pending yet at the next block: the period starts again at the next transfer made.
          if (newer === undefined) break;
          since = newer;
          due = Math.floor((now.getTime() - since.getTime()) / periodMs);
          continue;
        }
        // A run ends before the first block dated at or after a transfer made since: that transfer
        // counts the blocks of its own time only, never one dated before it was made.
        const beforeNewer = newer === undefined ? Infinity : Math.ceil((newer.getTime() - since.getTime()) / periodMs) - 1;
        const run = Math.min(due, blocks, blocksPerCallMax, beforeNewer);
        const at = new Date(since.getTime() + run * periodMs);
        await mineBlocks(tx, { clientId: chain.client_id, traceId, now: at }, chain.network, run, { createdUpTo: at });
        minedAny = true;
        since = at;
        due -= run;
      }
      return minedAny;
    });
    if (done) mined++;
  }
  return mined;
}

/**
 * Among the chain's pending transfers made by `firstBlockAt` (the next block's time): blocks until
 * the next of them completes (its confirmations reach the requirement) or fails (at its next
 * block), undefined when none; and when the first pending transfer made after it was made.
 */
async function nextBlocks(tx: Tx, clientId: string, network: CryptoNetworkName, firstBlockAt: Date): Promise<{ blocks: number | undefined; newer: Date | undefined }> {
  const result = await sql<{ blocks: number | null; newer: Date | null }>`
    SELECT
      min(CASE WHEN planned_failure IS NOT NULL THEN 1 ELSE greatest(confirmations_required - confirmations, 1) END)
        FILTER (WHERE created_at <= ${firstBlockAt})::int AS blocks,
      min(created_at) FILTER (WHERE created_at > ${firstBlockAt}) AS newer
    FROM crypto_transfers
    WHERE client_id = ${clientId}::uuid AND network = ${network} AND status = 'PENDING'
  `.execute(tx);
  const row = result.rows[0];
  return { blocks: row?.blocks ?? undefined, newer: row?.newer ? new Date(row.newer) : undefined };
}
