import type { WalletExists, WalletsExist } from '../ledger/index.js';

/**
 * Which wallets exist. TEMPORARY: until the customers module (wallets) is merged, every wallet
 * id is taken to exist. Replaced by a lookup through customers' findWallet.
 */
export const walletsExist: WalletsExist = async (_tx, wallets) => new Set(wallets.map((wallet) => `${wallet.clientId}/${wallet.walletId}`));

export const walletExists: WalletExists = async () => true;
