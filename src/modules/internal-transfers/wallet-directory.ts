import type { WalletExists, WalletsExist } from '../ledger/index.js';
import { findWallet } from '../customers/index.js';
import { isUuid } from '../../platform/ids.js';

/**
 * Which wallets exist for which client: the ledger asks before it opens an account for a wallet,
 * and the read routes ask before answering. A wallet of another client, an unknown id and a
 * malformed id are all "does not exist", so each answers the same 404.
 */
export const walletsExist: WalletsExist = async (tx, wallets) => {
  const wanted = wallets.filter((wallet) => isUuid(wallet.walletId) && isUuid(wallet.clientId));
  if (wanted.length === 0) return new Set();
  const rows = await tx
    .selectFrom('wallets')
    .select(['client_id', 'id'])
    .where((eb) => eb.or(wanted.map((wallet) => eb.and([eb('client_id', '=', wallet.clientId), eb('id', '=', wallet.walletId)]))))
    .execute();
  return new Set(rows.map((row) => `${row.client_id}/${row.id}`));
};

export const walletExists: WalletExists = async (db, clientId, walletId) => (await findWallet(db, clientId, walletId)) !== undefined;
