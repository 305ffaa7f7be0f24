import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import { readBatchConcurrency, type Deps } from '../../../platform/deps.js';
import type { Db } from '../../../platform/db/database.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { notFound } from '../../../platform/http/errors.js';
import { isUuid } from '../../../platform/ids.js';
import { assert } from '../../../platform/assert.js';
import { formatAmount } from '../../../platform/money/amount.js';
import { findAsset } from '../../../platform/money/assets.js';
import { ReadBatcher } from '../../../platform/db/read-batcher.js';
import { walletBalancesMany } from '../ledger.service.js';

/** Answers whether the wallet exists for the client. */
export type WalletExists = (db: Db, clientId: string, walletId: string) => Promise<boolean>;

const AssetAmount = Type.Object({ asset: Type.String({ examples: ['USD'] }), amount: Type.String({ examples: ['125.50'] }) });

const BalanceSchema = Type.Object(
  {
    AVAILABLE: Type.Array(AssetAmount, { description: 'money the wallet can spend now; below zero (a negative amount) when the wallet is overdrawn in that asset, which only a forced posting does (a card completion or force post the wallet could not cover, a settled ACH deposit taken back): nothing of that asset can be spent until credits bring it back above zero' }),
    RESERVED: Type.Array(AssetAmount, { description: 'held for outgoing money not final yet (card holds, pending withdrawals, pending trades)' }),
    PENDING: Type.Array(AssetAmount, { description: 'incoming money not cleared yet' }),
  },
  { title: 'WalletBalance' },
);

/** Most wallets read by one balance query. */
const balanceReadSizeMax = 200;

export function registerWalletBalanceRoutes(app: App, deps: Deps, walletExists: WalletExists): void {
  // Concurrent balance requests share one query: one round trip to the database for many requests.
  // One query in flight by default (READ_BATCH_CONCURRENCY): on the 2-core bench machine, four
  // small queries at once served about 4,500-6,100 requests/s and one larger query at a time about
  // 8,800-9,500 (every query sent wakes a database process, which takes the CPU from the server).
  const reader = new ReadBatcher({
    fetch: (wallets: { clientId: string; walletId: string }[]) => walletBalancesMany(deps.db, wallets),
    sizeMax: balanceReadSizeMax,
    concurrency: readBatchConcurrency(deps),
  });
  app.get(
    '/v1/wallets/:id/balance',
    {
      schema: {
        operationId: 'wallets.getBalance',
        tags: ['Wallets'],
        summary: 'Wallet balance: AVAILABLE, RESERVED and PENDING per asset',
        description:
          'One entry per asset the wallet has ever held, in each of the three lists (sorted by asset). A wallet that never held ' +
          'anything has three empty lists.',
        params: Type.Object({ id: Text.id() }),
        response: { 200: Envelope(BalanceSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      const walletId = request.params.id.toLowerCase();
      if (!isUuid(walletId)) throw notFound('Wallet');
      // A wallet with ledger accounts exists; only an empty answer needs the wallet looked up.
      const balances = await reader.load({ clientId, walletId });
      if (balances.length === 0 && !(await walletExists(deps.db, clientId, walletId))) throw notFound('Wallet');
      const data: Record<'AVAILABLE' | 'RESERVED' | 'PENDING', { asset: string; amount: string }[]> = { AVAILABLE: [], RESERVED: [], PENDING: [] };
      for (const balance of balances) {
        const asset = findAsset(balance.asset, 'sandbox');
        assert(asset, `wallet ${walletId} holds an unknown asset ${balance.asset}`);
        data.AVAILABLE.push({ asset: asset.code, amount: formatAmount(balance.available, asset) });
        data.RESERVED.push({ asset: asset.code, amount: formatAmount(balance.reserved, asset) });
        data.PENDING.push({ asset: asset.code, amount: formatAmount(balance.pending, asset) });
      }
      return { message: 'Balance retrieved', data, traceId: String(request.id) };
    },
  );
}
