import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../platform/deps.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { blocksPerCallMax, mineBlocks } from './crypto-transfers.service.js';
import type { CryptoNetworkName } from './networks.js';

/** Most (client, network) chains one pass of the block worker looks at. */
export const chainsPerPassMax = 500;

/**
 * The sandbox block worker (OPENBAAS_SANDBOX_BLOCK_SECONDS): every chain of a client that has a
 * PENDING deposit or withdrawal mines one block per period of the client's clock, so a clock
 * advance of ten periods mines ten blocks at the next pass (at most 1,000 per pass). A chain's
 * period starts at its last block (by the worker or by the blocks call), or at its oldest pending
 * transfer when that is later (a transfer made after the last block is not confirmed by blocks
 * of before its time; later transfers of the same chain share the chain's blocks from then on). Each chain is mined in its own transaction under
 * its row lock, so several worker processes never mine the same period twice. Returns how many
 * chains mined.
 */
export async function mineDueBlocks(deps: Pick<Deps, 'db' | 'clock'>, periodSeconds: number): Promise<number> {
  if (periodSeconds <= 0) return 0;
  const periodMs = periodSeconds * 1000;
  const chains = await sql<{ client_id: string; network: CryptoNetworkName; offset_ms: string; oldest: Date }>`
    SELECT t.client_id, t.network, c.clock_offset_ms::text AS offset_ms, min(t.created_at) AS oldest
    FROM crypto_transfers t JOIN clients c ON c.id = t.client_id
    WHERE t.status = 'PENDING'
    GROUP BY t.client_id, t.network, c.clock_offset_ms
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
      const since = row.mined_at === null || row.mined_at < oldest ? oldest : row.mined_at;
      const due = Math.floor((now.getTime() - since.getTime()) / periodMs);
      if (due < 1) return false;
      await mineBlocks(tx, { clientId: chain.client_id, traceId: crypto.randomUUID(), now }, chain.network, Math.min(due, blocksPerCallMax));
      return true;
    });
    if (done) mined++;
  }
  return mined;
}
