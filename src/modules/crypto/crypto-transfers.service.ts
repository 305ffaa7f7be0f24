import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import { datedAfter, type RequestContext } from '../../platform/http/context.js';
import { AppError, notFound, requireLinkFilterId, validationError } from '../../platform/http/errors.js';
import { KeptRefusal } from '../../platform/http/idempotency.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { formatAmount, parseAmount } from '../../platform/money/amount.js';
import { requireAsset, type Asset } from '../../platform/money/assets.js';
import type { Mode } from '../../platform/config.js';
import { assert } from '../../platform/assert.js';
import { findWallet } from '../customers/index.js';
import { captureHold, failPendingCredit, lockWalletAccounts, runLedgerOperations, placeHold, postTransfer, recordPendingCredit, releaseHold, type HistoryInput } from '../ledger/index.js';
import { recordEvent, recordEvents } from '../webhooks/index.js';
import { deriveSandboxAddress } from './address-derivation.js';
import { bitcoinNetworkOfAddress, checkSenderAddress, requireValidWithdrawalDestination } from './address-validation.js';
import {
  cryptoAssetOf,
  cryptoEventData,
  cryptoEvents,
  cryptoHistoryTypes,
  cryptoTransactionTypes,
  cryptoTransactionView,
  cryptoTransferGroupView,
  withdrawalFeePurpose,
  type CryptoTransactionRow,
  type CryptoTransactionView,
  type CryptoTransferGroupView,
  type CryptoTransferRow,
} from './crypto-transfer.js';
import type { CryptoDirection, CryptoStatus } from './crypto.tables.js';
import './crypto.tables.js';
import {
  assetNetworks,
  confirmationsRequiredMax,
  cryptoNetworkNames,
  describeCryptoNetwork,
  isCryptoNetworkName,
  requireAssetNetwork,
  withdrawalFeeOf,
  type CryptoNetworkOverrides,
  type BitcoinNetwork,
  type CryptoNetworkName,
} from './networks.js';
import { generateSandboxTxHash, requireValidTxHash } from './tx-hash.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { assertPlainText } from '../../platform/text.js';

type Queryable = Db | Tx;

/** What the crypto services need from configuration. */
export interface CryptoSettings {
  mode: Mode;
  bitcoinNetwork: BitcoinNetwork;
  /** Undefined in production unless OPENBAAS_SANDBOX_SEED is set: no address can be made. */
  sandboxSeed: string | undefined;
  /** OPENBAAS_CRYPTO_CONFIRMATIONS and OPENBAAS_CRYPTO_WITHDRAWAL_FEES, checked at start-up. */
  overrides: CryptoNetworkOverrides;
}

function confirmationsRequiredOf(settings: CryptoSettings, network: CryptoNetworkName): number {
  return describeCryptoNetwork(network, { bitcoinNetwork: settings.bitcoinNetwork, confirmationsRequired: settings.overrides.confirmationsRequired }).confirmationsRequired;
}

/** A crypto asset (BTC, ETH, USDC, USDT) of the registry; 400 naming the field otherwise. */
function requireCryptoAsset(code: string, mode: Mode, field = 'asset'): Asset {
  const asset = requireAsset(code, mode, field);
  if (assetNetworks[asset.code] === undefined) {
    throw validationError(field, `${asset.code} is not a crypto asset; crypto assets are ${Object.keys(assetNetworks).join(', ')}`);
  }
  return asset;
}

// ---------------------------------------------------------------------------------------------
// Addresses

export interface CryptoAddressView {
  id: string;
  walletId: string;
  asset: string;
  network: CryptoNetworkName;
  address: string;
  memo: null;
  createdAt: string;
}

interface AddressRow {
  client_id: string;
  id: string;
  wallet_id: string;
  asset: string;
  network: CryptoNetworkName;
  address: string;
  created_at: Date;
}

function addressView(row: AddressRow, asset = row.asset): CryptoAddressView {
  return { id: row.id, walletId: row.wallet_id, asset, network: row.network, address: row.address, memo: null, createdAt: row.created_at.toISOString() };
}

async function requireWallet(db: Queryable, clientId: string, walletId: string): Promise<{ id: string }> {
  const wallet = await findWallet(db, clientId, walletId);
  if (!wallet) throw notFound('Wallet', 'walletId');
  return wallet;
}

/**
 * POST /v1/digital/addresses: the wallet's address on the asset's network (its default network
 * without one), made on first request. One address per (wallet, network), shared by the assets
 * of that network; `created` says whether this call made it. The answer echoes the asked asset.
 */
export async function getOrCreateAddress(
  tx: Tx,
  context: RequestContext,
  settings: CryptoSettings,
  body: { walletId: string; asset: string; network?: string | null | undefined },
): Promise<{ created: boolean; address: CryptoAddressView }> {
  const asset = requireCryptoAsset(body.asset, settings.mode);
  const network = requireAssetNetwork(asset.code, body.network ?? undefined);
  const wallet = await requireWallet(tx, context.clientId, body.walletId);
  const existing = await tx
    .selectFrom('crypto_addresses')
    .selectAll()
    .where('client_id', '=', context.clientId)
    .where('wallet_id', '=', wallet.id)
    .where('network', '=', network)
    .executeTakeFirst();
  if (existing) return { created: false, address: addressView(existing, asset.code) };
  if (settings.sandboxSeed === undefined) {
    throw new AppError('SERVICE_UNAVAILABLE', 'No custody provider is connected: crypto addresses are made only in sandbox mode or with OPENBAAS_SANDBOX_SEED set.');
  }
  const row: AddressRow = {
    client_id: context.clientId,
    id: idAt(context.now),
    wallet_id: wallet.id,
    asset: asset.code,
    network,
    address: deriveSandboxAddress({ sandboxSeed: settings.sandboxSeed, clientId: context.clientId, walletId: wallet.id, network, bitcoinNetwork: settings.bitcoinNetwork }),
    created_at: context.now,
  };
  // Two concurrent first requests: the second waits on the unique key and then finds the first's row.
  const inserted = await tx
    .insertInto('crypto_addresses')
    .values(row)
    .onConflict((conflict) => conflict.columns(['client_id', 'wallet_id', 'network']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { created: true, address: addressView(inserted) };
  const winner = await tx
    .selectFrom('crypto_addresses')
    .selectAll()
    .where('client_id', '=', context.clientId)
    .where('wallet_id', '=', wallet.id)
    .where('network', '=', network)
    .executeTakeFirstOrThrow();
  return { created: false, address: addressView(winner, asset.code) };
}

/** GET /v1/digital/addresses?walletId=: the wallet's addresses, one per network, oldest first (404 for a wallet not of the client). */
export async function listAddresses(db: Db, clientId: string, walletId: string): Promise<CryptoAddressView[]> {
  const wallet = await requireWallet(db, clientId, walletId);
  const rows = await db.selectFrom('crypto_addresses').selectAll().where('client_id', '=', clientId).where('wallet_id', '=', wallet.id).orderBy('id').execute();
  return rows.map((row) => addressView(row));
}

/** The client's deposit address with this text (Bech32 and hex addresses in any case). */
async function findAddress(db: Queryable, clientId: string, address: string): Promise<AddressRow | undefined> {
  const query = db
    .selectFrom('crypto_addresses')
    .selectAll()
    .where('client_id', '=', clientId)
    .where(sql<string>`lower(address)`, '=', address.toLowerCase());
  const rows = await query.orderBy('id').execute();
  // Base58 addresses are case-sensitive: of the case-insensitive candidates, only an exact one counts for them.
  return rows.find((row) => row.address === address || row.network === 'BITCOIN' || row.network === 'ETHEREUM');
}

// ---------------------------------------------------------------------------------------------
// Records

function historyOf(context: RequestContext, transfer: CryptoTransferRow, childId: string): HistoryInput {
  return {
    parentTransactionId: transfer.id,
    type: cryptoHistoryTypes[transfer.direction],
    traceId: context.traceId,
    note: transfer.note,
    links: { cryptoTransactionId: childId, parentCryptoTransactionId: transfer.id },
  };
}

async function insertTransfer(tx: Tx, row: CryptoTransferRow): Promise<void> {
  await tx.insertInto('crypto_transfers').values(row).execute();
}

function lockTransfer(tx: Tx, clientId: string, id: string): Promise<CryptoTransferRow | undefined> {
  return tx.selectFrom('crypto_transfers').selectAll().where('client_id', '=', clientId).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Locks the crypto transfer named by its own id or by one of its children's (404 otherwise). */
async function lockTransferByAnyId(tx: Tx, clientId: string, id: string): Promise<CryptoTransferRow> {
  if (!isUuid(id)) throw notFound('Crypto transaction');
  const child = await tx.selectFrom('crypto_transactions').select('crypto_transfer_id').where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
  const transfer = await lockTransfer(tx, clientId, child?.crypto_transfer_id ?? id);
  if (!transfer) throw notFound('Crypto transaction');
  return transfer;
}

// ---------------------------------------------------------------------------------------------
// Deposits

export interface CryptoDepositRequest {
  address: string;
  asset: string;
  network?: string | null | undefined;
  amount: string;
  fromAddress?: string | null | undefined;
  txHash?: string | null | undefined;
  confirmations?: number | undefined;
}

/**
 * The 422 of a deposit whose asset does not move on the address's network. It carries the
 * FAILED record to keep: the request's own transaction rolls back, so the route writes it after
 * (recordRefusedDeposit), in a transaction of its own.
 */
export class AssetNetworkMismatch extends KeptRefusal {
  constructor(readonly refused: CryptoTransferRow, readonly childId: string) {
    const reason = `${refused.asset} does not move on ${refused.network}, the network of address ${refused.address}; the deposit is lost on chain and was recorded as crypto transaction ${refused.id} for support`;
    super('ASSET_NETWORK_MISMATCH', `asset: ${reason}`, { details: [{ field: 'asset', message: reason }] });
  }

  /**
   * Keeps the refused deposit. The same refused chain transaction sent twice at the same moment:
   * the one kept second answers as a later repeat does, 409 naming the record kept (until
   * 2026-12-07 a second 422 naming a record never kept; found by a re-audit).
   */
  override async keepRecord(tx: Tx): Promise<AppError | undefined> {
    const keptFirst = await recordRefusedDeposit(tx, this);
    return keptFirst === undefined ? undefined : alreadyReceived(this.refused.address, keptFirst);
  }
}

/**
 * Holds the lock of one chain transaction's deposits at one address until `tx` ends, whatever the
 * spelling of its hash (hexSpellings): two deposits of it at the same moment, one spelt `0x…` and
 * the other without, each found no record of the other and both were kept, since the unique index
 * compares the hash as stored (until 2026-12-07). The second now waits for the first and finds it.
 */
async function lockChainTransaction(tx: Tx, clientId: string, network: CryptoTransferRow['network'], address: string, txHash: string): Promise<void> {
  const spelling = hexHash.test(txHash) ? txHash.toLowerCase().replace(/^0x/, '') : txHash;
  const lockId = crypto.createHash('sha256').update(`crypto deposit\n${clientId}\n${network}\n${address}\n${spelling}`).digest().readBigInt64BE(0);
  await sql`SELECT pg_advisory_xact_lock(${lockId.toString()}::bigint)`.execute(tx);
}

/** The deposit an address already received for a chain transaction (its hash in any of its spellings, hexSpellings), if any. */
async function depositOfChainTransaction(tx: Tx, clientId: string, network: CryptoTransferRow['network'], address: string, txHash: string): Promise<{ id: string } | undefined> {
  return tx
    .selectFrom('crypto_transfers')
    .select('id')
    .where('client_id', '=', clientId)
    .where('network', '=', network)
    .where('direction', '=', 'DEPOSIT')
    .where('tx_hash', 'in', hexSpellings(txHash))
    .where('address', '=', address)
    .executeTakeFirst();
}

/** The 409 of a chain transaction already received at the address, naming the record it made. */
function alreadyReceived(address: string, recordId: string): AppError {
  return new AppError('CONFLICT', `txHash: this chain transaction was already received at ${address} (crypto transaction ${recordId})`, {
    details: [{ field: 'txHash', message: 'already deposited' }],
  });
}

/**
 * Keeps a refused deposit (FAILED, no ledger movement, no event). A repeat of the same chain
 * transaction is kept once: when another request kept it first (two sent at the same moment, both
 * refused before either was kept), answers that record's id, and nothing is written.
 */
async function recordRefusedDeposit(tx: Tx, refusal: AssetNetworkMismatch): Promise<string | undefined> {
  const { refused } = refusal;
  await lockChainTransaction(tx, refused.client_id, refused.network, refused.address, refused.tx_hash);
  const keptFirst = await depositOfChainTransaction(tx, refused.client_id, refused.network, refused.address, refused.tx_hash);
  if (keptFirst) return keptFirst.id;
  await tx.insertInto('crypto_transfers').values(refused).execute();
  await tx
    .insertInto('crypto_transactions')
    .values({
      client_id: refusal.refused.client_id,
      id: refusal.childId,
      crypto_transfer_id: refusal.refused.id,
      type: 'CRYPTO_DEPOSIT_FAILURE',
      status: 'FAILED',
      confirmations: refusal.refused.confirmations,
      failure_reason: refusal.refused.failure_reason,
      created_at: refusal.refused.created_at,
    })
    .execute();
  return undefined;
}

/** A hash of 32 bytes of hex, with or without 0x (Bitcoin and Tron write none, Ethereum writes it). */
const hexHash = /^(0x)?[0-9a-f]{64}$/i;

/** A hash of another chain that is hexHash: in lower case (hex has no case), else as sent. */
function hexInLowerCase(hash: string): string {
  return hexHash.test(hash) ? hash.toLowerCase() : hash;
}

/**
 * The spellings of one hex hash (hexInLowerCase, or a network's own format), with and without 0x:
 * a refused deposit sent again under the other spelling, or in another case, is the same chain
 * transaction (409), not a second FAILED record (until 2026-12-03 it was one; found by an audit),
 * nor, sent as a deposit the address takes, a credit (until 2026-12-03 only a refused deposit's
 * hash was looked up under both spellings; found by an audit).
 */
function hexSpellings(hash: string): string[] {
  if (!hexHash.test(hash)) return [hash];
  return hash.startsWith('0x') ? [hash, hash.slice(2)] : [hash, `0x${hash}`];
}

/**
 * A deposit seen on chain (the sandbox's POST /v1/sandbox/crypto-deposits). Checks, in order:
 * asset, amount, network, confirmations, the address (404 when it is not one of the client's),
 * the sender's address and the transaction hash in the network's format (letters and digits only
 * when the asset is not on the address's network), a chain transaction already received (409),
 * the asset on the address's network (422 ASSET_NETWORK_MISMATCH, a FAILED record kept). The amount becomes a pending credit (PENDING
 * balance) with CRYPTO_DEPOSIT_TRANSACTION_PENDING; with the required confirmations already it
 * completes at once.
 */
export async function receiveCryptoDeposit(tx: Tx, context: RequestContext, settings: CryptoSettings, body: CryptoDepositRequest): Promise<CryptoTransactionView> {
  const asset = requireCryptoAsset(body.asset, settings.mode);
  const amount = parseAmount(body.amount, asset, 'amount');
  let network: CryptoNetworkName | undefined;
  if (body.network != null) {
    if (!isCryptoNetworkName(body.network)) throw validationError('network', `unknown network "${body.network}"; networks are ${cryptoNetworkNames.join(', ')}`);
    network = body.network;
  }
  const confirmations = body.confirmations ?? 0;
  if (!Number.isInteger(confirmations) || confirmations < 0 || confirmations > confirmationsRequiredMax) {
    throw validationError('confirmations', `must be a whole number from 0 to ${confirmationsRequiredMax}`);
  }
  const address = await findAddress(tx, context.clientId, body.address);
  if (!address) throw notFound('Crypto address', 'address');
  if (network !== undefined && network !== address.network) throw validationError('network', `the address is on ${address.network}, not ${network}`);
  // An asset the address's network does not carry came from another chain, whose sender and hash
  // are in that chain's format: they are kept as sent (letters and digits) on the FAILED record
  // below, rather than checked in the address's network's format and refused with nothing kept
  // (until 2026-12-02; found by an audit).
  const mismatched = !(assetNetworks[asset.code] ?? []).includes(address.network);
  const asSent = (value: string, field: string) => {
    if (!/^[A-Za-z0-9]+$/.test(value)) throw validationError(field, 'holds only letters and digits');
    return value;
  };
  let fromAddress: string | null = null;
  if (body.fromAddress != null && mismatched) fromAddress = asSent(body.fromAddress, 'fromAddress');
  else if (body.fromAddress != null) {
    // A sender is on the Bitcoin network of the address it pays, which is the server's at the time
    // the address was made: a server restarted with another OPENBAAS_BITCOIN_NETWORK keeps crediting
    // its earlier addresses, from senders of their network (until the thirty-fourth session the
    // server's current network was asked; found by an audit).
    const check = checkSenderAddress(address.network, body.fromAddress, bitcoinNetworkOfAddress(address.network, address.address) ?? settings.bitcoinNetwork);
    if (!check.ok && check.code !== 'ADDRESS_NOT_ALLOWED') throw new AppError(check.code, `fromAddress: ${check.reason}`, { details: [{ field: 'fromAddress', message: check.reason }] });
    fromAddress = check.ok ? check.address : body.fromAddress;
  }
  const txHash =
    body.txHash == null ? generateSandboxTxHash(address.network) : mismatched ? hexInLowerCase(asSent(body.txHash, 'txHash')) : requireValidTxHash(address.network, body.txHash, 'txHash');
  const required = confirmationsRequiredOf(settings, address.network);
  const base: CryptoTransferRow = {
    client_id: context.clientId,
    id: idAt(context.now),
    direction: 'DEPOSIT',
    wallet_id: address.wallet_id,
    address_id: address.id,
    status: 'PENDING',
    asset: asset.code,
    network: address.network,
    amount: amount.toString(),
    net_amount: amount.toString(),
    fee: '0',
    gross_amount: false,
    address: address.address,
    from_address: fromAddress,
    memo: null,
    off_curve: false,
    tx_hash: txHash,
    confirmations,
    confirmations_required: required,
    block_number: null,
    hold_id: null,
    pending_credit_id: null,
    planned_failure: null,
    failure_reason: null,
    reference_number: null,
    note: null,
    created_at: context.now,
    updated_at: context.now,
  };
  await lockChainTransaction(tx, context.clientId, address.network, address.address, txHash);
  const duplicate = await depositOfChainTransaction(tx, context.clientId, address.network, address.address, txHash);
  if (duplicate) throw alreadyReceived(address.address, duplicate.id);
  // After the duplicate check: a refused deposit sent again is that same chain transaction (409
  // naming the FAILED record kept the first time), not a second refusal naming a record never kept.
  if (mismatched) {
    throw new AssetNetworkMismatch({ ...base, status: 'FAILED', failure_reason: 'ASSET_NETWORK_MISMATCH' }, idAt(context.now));
  }

  if (confirmations > 0) base.block_number = String(Math.max(1, (await chainHeight(tx, context.clientId, address.network)) - confirmations + 1));
  const childId = idAt(context.now);
  const credit = await recordPendingCredit(tx, {
    clientId: context.clientId,
    now: context.now,
    wallet: { walletId: address.wallet_id },
    asset,
    amount,
    source: 'CRYPTO_CUSTODY',
    history: historyOf(context, base, childId),
  });
  const transfer: CryptoTransferRow = { ...base, pending_credit_id: credit.pendingCreditId };
  await insertTransfer(tx, transfer);
  const child: CryptoTransactionRow = {
    client_id: context.clientId,
    id: childId,
    crypto_transfer_id: transfer.id,
    type: 'CRYPTO_DEPOSIT_INITIATED',
    status: 'PENDING',
    confirmations,
    failure_reason: null,
    created_at: context.now,
  };
  await tx.insertInto('crypto_transactions').values(child).execute();
  await recordEvent(tx, context, cryptoEvents.DEPOSIT.PENDING, cryptoEventData(transfer, childId));
  if (confirmations >= required) return completeTransfer(tx, context, transfer);
  return cryptoTransactionView(transfer, child);
}

// ---------------------------------------------------------------------------------------------
// Withdrawals

export interface CryptoWithdrawalRequest {
  walletId: string;
  asset: string;
  network?: string | null | undefined;
  amount: string;
  address: string;
  memo?: string | null | undefined;
  grossAmount?: boolean | undefined;
  referenceNumber?: string | null | undefined;
  note?: string | null | undefined;
}

/** Sandbox magic amounts (contract §12.8): the network rejects these withdrawals. */
export const magicRejectedAmounts: Readonly<Record<string, string>> = { BTC: '0.00099900', USDC: '9.99', USDT: '9.99' };
export const rejectedByNetwork = 'REJECTED_BY_NETWORK';

function isMagicRejected(asset: Asset, amount: bigint): boolean {
  const magic = magicRejectedAmounts[asset.code];
  return magic !== undefined && parseAmount(magic, asset) === amount;
}

/**
 * POST /v1/digital/withdrawal. Checks, in order: asset, network, amount, wallet (404), the
 * destination address and memo (400 INVALID_ADDRESS, ADDRESS_WRONG_NETWORK, ADDRESS_NOT_ALLOWED,
 * MEMO_NOT_SUPPORTED), the fee (422 AMOUNT_BELOW_FEE with grossAmount when nothing would reach
 * the recipient), then reserves amount + fee (or amount with grossAmount) from AVAILABLE
 * (422 INSUFFICIENT_FUNDS). The withdrawal is broadcast at once: it has its txHash and waits for
 * confirmations. CRYPTO_WITHDRAWAL_TRANSACTION_PENDING is recorded.
 */
export async function createCryptoWithdrawal(tx: Tx, context: RequestContext, settings: CryptoSettings, body: CryptoWithdrawalRequest): Promise<CryptoTransactionView> {
  const asset = requireCryptoAsset(body.asset, settings.mode);
  const network = requireAssetNetwork(asset.code, body.network ?? undefined);
  const amount = parseAmount(body.amount, asset, 'amount');
  const wallet = await requireWallet(tx, context.clientId, body.walletId);
  const destination = requireValidWithdrawalDestination({ network, address: body.address, memo: body.memo ?? null, bitcoinNetwork: settings.bitcoinNetwork });
  assertPlainText(body.referenceNumber, 'referenceNumber', { notBlank: true });
  assertPlainText(body.note, 'note', { notBlank: true });
  const fee = withdrawalFeeOf(asset.code, network, settings.overrides.withdrawalFees);
  assert(fee !== undefined, `no withdrawal fee for ${asset.code} on ${network}`);
  const gross = body.grossAmount === true;
  const netAmount = gross ? amount - fee.feeMinor : amount;
  if (netAmount <= 0n) {
    const reason = `with grossAmount the fee (${formatAmount(fee.feeMinor, asset)} ${asset.code}) comes out of the amount, which must exceed it`;
    throw new AppError('AMOUNT_BELOW_FEE', `amount: ${reason}`, { details: [{ field: 'amount', message: reason }] });
  }
  const debit = gross ? amount : amount + fee.feeMinor;
  const id = idAt(context.now);
  const childId = idAt(context.now);
  const base: CryptoTransferRow = {
    client_id: context.clientId,
    id,
    direction: 'WITHDRAWAL',
    wallet_id: wallet.id,
    address_id: null,
    status: 'PENDING',
    asset: asset.code,
    network,
    amount: amount.toString(),
    net_amount: netAmount.toString(),
    fee: fee.feeMinor.toString(),
    gross_amount: gross,
    address: destination.address,
    from_address: null,
    memo: destination.memo,
    off_curve: destination.offCurve === true,
    tx_hash: generateSandboxTxHash(network),
    confirmations: 0,
    confirmations_required: confirmationsRequiredOf(settings, network),
    block_number: null,
    hold_id: null,
    pending_credit_id: null,
    planned_failure: settings.mode === 'sandbox' && isMagicRejected(asset, amount) ? rejectedByNetwork : null,
    failure_reason: null,
    reference_number: body.referenceNumber ?? null,
    note: body.note ?? null,
    created_at: context.now,
    updated_at: context.now,
  };
  const hold = await placeHold(tx, {
    clientId: context.clientId,
    now: context.now,
    wallet: { walletId: wallet.id, field: 'walletId' },
    asset,
    amount: debit,
    history: historyOf(context, base, childId),
  });
  const transfer: CryptoTransferRow = { ...base, hold_id: hold.holdId };
  await insertTransfer(tx, transfer);
  const child: CryptoTransactionRow = {
    client_id: context.clientId,
    id: childId,
    crypto_transfer_id: id,
    type: 'CRYPTO_WITHDRAWAL_INITIATED',
    status: 'PENDING',
    confirmations: 0,
    failure_reason: null,
    created_at: context.now,
  };
  await tx.insertInto('crypto_transactions').values(child).execute();
  await recordEvent(tx, context, cryptoEvents.WITHDRAWAL.PENDING, cryptoEventData(transfer, childId));
  return cryptoTransactionView(transfer, child);
}

// ---------------------------------------------------------------------------------------------
// Completion and failure

function notPending(transfer: CryptoTransferRow): AppError {
  return new AppError('CRYPTO_TRANSACTION_NOT_PENDING', `The crypto transaction is already ${transfer.status}; only a PENDING one can be confirmed or failed.`);
}

/**
 * The required confirmations are reached. A deposit's pending credit clears into AVAILABLE; a
 * withdrawal's hold is captured: what the recipient gets goes to the custody account, the fee to
 * the fee-revenue account (purpose WITHDRAWAL_FEE_REVENUE). The caller holds the row lock.
 */
async function completeTransfer(tx: Tx, context: RequestContext, transfer: CryptoTransferRow): Promise<CryptoTransactionView> {
  if (transfer.status !== 'PENDING') throw notPending(transfer);
  if (transfer.direction === 'DEPOSIT') {
    const [completed] = await completeDeposits(tx, context, [transfer]);
    assert(completed, `deposit ${transfer.id} did not complete`);
    return completed;
  }
  const childId = idAt(context.now);
  const history = historyOf(context, transfer, childId);
  assert(transfer.hold_id !== null, `withdrawal ${transfer.id} has no hold`);
  // Capturing the net amount closes the hold and hands the rest (the fee) back to AVAILABLE, which
  // pays it at once: that release is part of a completed withdrawal, so its record is COMPLETED
  // (CANCELLED listed completed withdrawals under status=CANCELLED).
  await captureHold(tx, { clientId: context.clientId, now: context.now, holdId: transfer.hold_id, amount: BigInt(transfer.net_amount), to: { system: 'CRYPTO_CUSTODY' }, final: true, history: { ...history, status: 'COMPLETED' } });
  const fee = BigInt(transfer.fee);
  if (fee > 0n) {
    await postTransfer(tx, {
      clientId: context.clientId,
      now: context.now,
      asset: cryptoAssetOf(transfer.asset),
      legs: [{ from: { walletId: transfer.wallet_id }, to: { system: 'FEES' }, amount: fee, purpose: withdrawalFeePurpose }],
      history,
      description: `network fee of crypto withdrawal ${transfer.id}`,
    });
  }
  const updated: CryptoTransferRow = { ...transfer, status: 'COMPLETED', updated_at: context.now };
  await tx.updateTable('crypto_transfers').set({ status: 'COMPLETED', confirmations: transfer.confirmations, block_number: transfer.block_number, updated_at: context.now }).where('client_id', '=', context.clientId).where('id', '=', transfer.id).execute();
  const child = await insertChildWithId(tx, context, updated, childId, cryptoTransactionTypes[transfer.direction].success, 'COMPLETED');
  await recordEvent(tx, context, cryptoEvents[transfer.direction].COMPLETED, cryptoEventData(updated, childId));
  return cryptoTransactionView(updated, child);
}

async function insertChildWithId(
  tx: Tx,
  context: RequestContext,
  transfer: CryptoTransferRow,
  id: string,
  type: CryptoTransactionRow['type'],
  status: CryptoStatus,
  failureReason: string | null = null,
): Promise<CryptoTransactionRow> {
  const child: CryptoTransactionRow = { client_id: context.clientId, id, crypto_transfer_id: transfer.id, type, status, confirmations: transfer.confirmations, failure_reason: failureReason, created_at: context.now };
  await tx.insertInto('crypto_transactions').values(child).execute();
  return child;
}

/** The transfer failed (reorg, rejection): a deposit's pending credit is removed, a withdrawal's hold released in full. */
async function failTransfer(tx: Tx, context: RequestContext, transfer: CryptoTransferRow, reason: string): Promise<CryptoTransactionView> {
  if (transfer.status !== 'PENDING') throw notPending(transfer);
  const childId = idAt(context.now);
  const history = historyOf(context, transfer, childId);
  if (transfer.direction === 'DEPOSIT') {
    assert(transfer.pending_credit_id !== null, `deposit ${transfer.id} has no pending credit`);
    await failPendingCredit(tx, { clientId: context.clientId, now: context.now, pendingCreditId: transfer.pending_credit_id, history });
  } else {
    assert(transfer.hold_id !== null, `withdrawal ${transfer.id} has no hold`);
    // FAILED, as a failed deposit's PENDING_FAILURE record is: the withdrawal failed.
    await releaseHold(tx, { clientId: context.clientId, now: context.now, holdId: transfer.hold_id, history: { ...history, status: 'FAILED' } });
  }
  const updated: CryptoTransferRow = { ...transfer, status: 'FAILED', failure_reason: reason, updated_at: context.now };
  await tx
    .updateTable('crypto_transfers')
    .set({ status: 'FAILED', failure_reason: reason, confirmations: transfer.confirmations, block_number: transfer.block_number, updated_at: context.now })
    .where('client_id', '=', context.clientId)
    .where('id', '=', transfer.id)
    .execute();
  const child = await insertChildWithId(tx, context, updated, childId, cryptoTransactionTypes[transfer.direction].failure, 'FAILED', reason);
  await recordEvent(tx, context, cryptoEvents[transfer.direction].FAILED, cryptoEventData(updated, childId));
  return cryptoTransactionView(updated, child);
}

/**
 * Gives a locked PENDING transfer more confirmations: a withdrawal the network rejects fails at
 * its first one; a transfer that reaches its requirement completes; otherwise only the count
 * (and the block it was included in) changes. Returns the record written, if any.
 */
async function addConfirmations(tx: Tx, context: RequestContext, transfer: CryptoTransferRow, added: number, includedIn: number): Promise<CryptoTransactionView | undefined> {
  const confirmed: CryptoTransferRow = {
    ...transfer,
    confirmations: Math.min(transfer.confirmations + added, 1_000_000_000),
    block_number: transfer.block_number ?? String(includedIn),
  };
  if (transfer.planned_failure !== null) return failTransfer(tx, context, { ...confirmed, confirmations: transfer.confirmations, block_number: transfer.block_number }, transfer.planned_failure);
  if (confirmed.confirmations >= confirmed.confirmations_required) return completeTransfer(tx, context, confirmed);
  await tx
    .updateTable('crypto_transfers')
    .set({ confirmations: confirmed.confirmations, block_number: confirmed.block_number, updated_at: context.now })
    .where('client_id', '=', context.clientId)
    .where('id', '=', transfer.id)
    .execute();
  return undefined;
}

async function chainHeight(db: Queryable, clientId: string, network: CryptoNetworkName): Promise<number> {
  const row = await db.selectFrom('crypto_chain_heights').select('height').where('client_id', '=', clientId).where('network', '=', network).executeTakeFirst();
  return row === undefined ? 0 : Number(row.height);
}

/** Raises the client's chain on the network by `count` blocks (locking its row) and returns the height before. */
async function raiseChain(tx: Tx, context: RequestContext, network: CryptoNetworkName, count: number): Promise<number> {
  const row = await tx
    .insertInto('crypto_chain_heights')
    .values({ client_id: context.clientId, network, height: count, mined_at: context.now })
    .onConflict((conflict) =>
      conflict.columns(['client_id', 'network']).doUpdateSet({ height: sql`crypto_chain_heights.height + ${count}`, mined_at: context.now }),
    )
    .returning('height')
    .executeTakeFirstOrThrow();
  return Number(row.height) - count;
}

export interface BlocksOutcome {
  network: CryptoNetworkName;
  height: number;
  /** Pending transfers that gained confirmations (including those that completed or failed). */
  confirmed: number;
  completed: number;
  failed: number;
}

export const blocksPerCallMax = 1000;

/**
 * Mines `count` blocks on the client's chain of the network: every PENDING deposit and
 * broadcast withdrawal there gains `count` confirmations, and those that reach their
 * requirement complete (or, for rejected withdrawals, fail) in the same transaction. The rows
 * are locked together in id order; one completed meanwhile by a confirm call is skipped. Deposits
 * that complete and transfers that only count up are written in bulk (a fixed number of
 * statements, however many), the rare rest one by one.
 */
export async function mineBlocks(
  tx: Tx,
  blocksContext: RequestContext,
  network: CryptoNetworkName,
  count: number,
  options: { createdUpTo?: Date } = {},
): Promise<BlocksOutcome> {
  if (!Number.isInteger(count) || count < 1 || count > blocksPerCallMax) throw validationError('count', `must be a whole number from 1 to ${blocksPerCallMax}`);
  const before = await raiseChain(tx, blocksContext, network, count);
  let query = tx.selectFrom('crypto_transfers').selectAll().where('client_id', '=', blocksContext.clientId).where('network', '=', network).where('status', '=', 'PENDING');
  // The block worker's blocks are dated in the past: they confirm only the transfers made by then.
  if (options.createdUpTo !== undefined) query = query.where('created_at', '<=', options.createdUpTo);
  const pending = await query.orderBy('id').forUpdate().execute();
  // FOR UPDATE re-reads a row another transaction changed while we waited: only the still pending count.
  const stillPending = pending.filter((transfer) => transfer.status === 'PENDING');
  // What the blocks change is dated at their moment, or 1 ms after the last change of the
  // transfers they change when that is later (datedAfter): a call that waited for their row locks
  // while another process's confirm counted one up is not dated before that change, which a client
  // may have read already (until 2026-12-06 a deposit's updatedAt could go back, and its SUCCESS
  // record and event come before it; found by an audit with two processes).
  const context = stillPending.reduce((dated, transfer) => datedAfter(dated, transfer.updated_at), blocksContext);
  const confirmedBy = (transfer: CryptoTransferRow): CryptoTransferRow => ({
    ...transfer,
    confirmations: Math.min(transfer.confirmations + count, 1_000_000_000),
    block_number: transfer.block_number ?? String(before + 1),
  });
  // The wallet accounts this call moves money on (transfers that complete or fail), locked first and
  // in the ledger's lock order: completed one by one in transfer order, withdrawals of two wallets
  // locked their accounts in another order than a ledger batch moving money between the same
  // wallets, and each waited for the other (a deadlock, run again up to eight times and then a
  // 500; until 2026-12-07, found by a money audit on PostgreSQL).
  const moving = stillPending.filter((transfer) => transfer.planned_failure !== null || confirmedBy(transfer).confirmations >= transfer.confirmations_required);
  await lockWalletAccounts(
    tx,
    context.clientId,
    moving.map((transfer) => ({ walletId: transfer.wallet_id, asset: transfer.asset })),
  );
  // The common case in bulk: deposits that reach their requirement, and transfers that only count up.
  const depositsCompleting: CryptoTransferRow[] = [];
  const countingUp: CryptoTransferRow[] = [];
  let completed = 0;
  let failed = 0;
  for (const transfer of stillPending) {
    const next = confirmedBy(transfer);
    if (transfer.planned_failure === null && next.confirmations < next.confirmations_required) countingUp.push(next);
    else if (transfer.planned_failure === null && transfer.direction === 'DEPOSIT') depositsCompleting.push(next);
    else {
      // Withdrawals that complete or fail, and deposits that fail: one by one (few).
      const record = await addConfirmations(tx, context, transfer, count, before + 1);
      if (record?.status === 'COMPLETED') completed++;
      if (record?.status === 'FAILED') failed++;
    }
  }
  await updateConfirmations(tx, context, countingUp);
  completed += (await completeDeposits(tx, context, depositsCompleting)).length;
  return { network, height: before + count, confirmed: stillPending.length, completed, failed };
}

/** Sets the new confirmation count (and inclusion block) of transfers that stay PENDING, in one statement. */
async function updateConfirmations(tx: Tx, context: RequestContext, transfers: readonly CryptoTransferRow[]): Promise<void> {
  if (transfers.length === 0) return;
  await sql`
    UPDATE crypto_transfers AS t
    SET confirmations = u.confirmations, block_number = u.block_number, updated_at = ${context.now}
    FROM unnest(${transfers.map((transfer) => transfer.id)}::uuid[], ${transfers.map((transfer) => transfer.confirmations)}::int[],
      ${transfers.map((transfer) => transfer.block_number)}::bigint[]) AS u (id, confirmations, block_number)
    WHERE t.client_id = ${context.clientId} AND t.id = u.id
  `.execute(tx);
}

/**
 * Completes locked PENDING deposits that reached their requirement (`transfers` carry their new
 * confirmations), one or many, in a fixed number of statements whatever their number: one ledger
 * batch clearing every pending credit (PENDING → AVAILABLE), one update of the transfers, one
 * insert of their SUCCESS records, one insert of their events. Returns the records written.
 */
async function completeDeposits(tx: Tx, context: RequestContext, transfers: readonly CryptoTransferRow[]): Promise<CryptoTransactionView[]> {
  if (transfers.length === 0) return [];
  const completedRows = transfers.map((transfer): CryptoTransferRow => ({ ...transfer, status: 'COMPLETED', updated_at: context.now }));
  const childIds = completedRows.map(() => idAt(context.now));
  const clearances = completedRows.map((transfer, index) => {
    assert(transfer.pending_credit_id !== null, `deposit ${transfer.id} has no pending credit`);
    return { operation: 'clearPendingCredit' as const, clientId: context.clientId, now: context.now, pendingCreditId: transfer.pending_credit_id, history: historyOf(context, transfer, childIds[index] ?? '') };
  });
  await runLedgerOperations(tx, context.now, clearances);
  await sql`
    UPDATE crypto_transfers AS t
    SET status = 'COMPLETED', confirmations = u.confirmations, block_number = u.block_number, updated_at = ${context.now}
    FROM unnest(${completedRows.map((transfer) => transfer.id)}::uuid[], ${completedRows.map((transfer) => transfer.confirmations)}::int[],
      ${completedRows.map((transfer) => transfer.block_number)}::bigint[]) AS u (id, confirmations, block_number)
    WHERE t.client_id = ${context.clientId} AND t.id = u.id
  `.execute(tx);
  await sql`
    INSERT INTO crypto_transactions (client_id, id, crypto_transfer_id, type, status, confirmations, failure_reason, created_at)
    SELECT ${context.clientId}::uuid, u.id, u.transfer_id, ${cryptoTransactionTypes.DEPOSIT.success}, 'COMPLETED', u.confirmations, NULL, ${context.now}::timestamptz
    FROM unnest(${childIds}::uuid[], ${completedRows.map((transfer) => transfer.id)}::uuid[], ${completedRows.map((transfer) => transfer.confirmations)}::int[])
      AS u (id, transfer_id, confirmations)
  `.execute(tx);
  await recordEvents(
    tx,
    completedRows.map((transfer, index) => ({ context, type: cryptoEvents.DEPOSIT.COMPLETED, data: cryptoEventData(transfer, childIds[index] ?? '') })),
  );
  return completedRows.map((transfer, index) =>
    cryptoTransactionView(transfer, {
      client_id: context.clientId,
      id: childIds[index] ?? '',
      crypto_transfer_id: transfer.id,
      type: cryptoTransactionTypes.DEPOSIT.success,
      status: 'COMPLETED',
      confirmations: transfer.confirmations,
      failure_reason: null,
      created_at: context.now,
    }),
  );
}

/**
 * Sandbox: confirm one pending transfer (parent or child id). `confirmations` are added to what it
 * has; without it, as many as it still needs. 409 CRYPTO_TRANSACTION_NOT_PENDING once it is final.
 * Answers the record it wrote (SUCCESS or FAILURE), or the transfer's current state.
 */
export async function confirmCryptoTransaction(tx: Tx, requestContext: RequestContext, id: string, confirmations: number | undefined): Promise<CryptoTransactionView> {
  const transfer = await lockTransferByAnyId(tx, requestContext.clientId, id);
  if (transfer.status !== 'PENDING') throw notPending(transfer);
  // After the transfer's last change (a call that waited for the row lock while another process
  // counted confirmations up is not dated before it; datedAfter).
  const context = datedAfter(requestContext, transfer.updated_at);
  const added = confirmations ?? Math.max(1, transfer.confirmations_required - transfer.confirmations);
  if (!Number.isInteger(added) || added < 1 || added > confirmationsRequiredMax) throw validationError('confirmations', `must be a whole number from 1 to ${confirmationsRequiredMax}`);
  const height = await chainHeight(tx, context.clientId, transfer.network);
  const record = await addConfirmations(tx, context, transfer, added, height + 1);
  if (record) return record;
  return getCryptoTransaction(tx, context.clientId, transfer.id);
}

/** Sandbox: fail one pending transfer now (a reorg, a rejection), with an optional reason. */
export async function failCryptoTransaction(tx: Tx, context: RequestContext, id: string, reason: string | undefined): Promise<CryptoTransactionView> {
  // The text rule of every reason, as the bank fail control's (checkNameOrAddress).
  assertPlainText(reason, 'reason', { notBlank: true });
  const transfer = await lockTransferByAnyId(tx, context.clientId, id);
  return failTransfer(tx, datedAfter(context, transfer.updated_at), transfer, reason ?? (transfer.direction === 'DEPOSIT' ? 'DROPPED_BY_REORG' : rejectedByNetwork));
}

// ---------------------------------------------------------------------------------------------
// Reading

async function childrenOf(db: Queryable, clientId: string, transferIds: readonly string[]): Promise<CryptoTransactionRow[]> {
  if (transferIds.length === 0) return [];
  return db.selectFrom('crypto_transactions').selectAll().where('client_id', '=', clientId).where('crypto_transfer_id', 'in', transferIds).orderBy('id').execute();
}

/** One record by its id; a parent id answers the transfer's latest record. 404 for anything else. */
export async function getCryptoTransaction(db: Queryable, clientId: string, id: string): Promise<CryptoTransactionView> {
  if (!isUuid(id)) throw notFound('Crypto transaction');
  const child = await db.selectFrom('crypto_transactions').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
  const transfer = await db.selectFrom('crypto_transfers').selectAll().where('client_id', '=', clientId).where('id', '=', child?.crypto_transfer_id ?? id).executeTakeFirst();
  if (!transfer) throw notFound('Crypto transaction');
  if (child) return cryptoTransactionView(transfer, child);
  const children = await childrenOf(db, clientId, [transfer.id]);
  const latest = children[children.length - 1];
  if (!latest) throw notFound('Crypto transaction');
  return cryptoTransactionView(transfer, latest);
}

export interface CryptoTransferFilters extends ListQuery {
  walletId?: string | undefined;
  cryptoTransactionId?: string | undefined;
  direction?: CryptoDirection | undefined;
  status?: CryptoStatus | undefined;
  network?: CryptoNetworkName | undefined;
}

/**
 * Crypto transfers, newest first, each with its current state and its records (oldest first).
 * `cryptoTransactionId` (a parent or a child id) selects the one transfer it belongs to; an id
 * that is not the client's gives an empty page, a value that is not an id a 400. A walletId not of the client answers 404.
 */
export async function listCryptoTransfers(db: Db, clientId: string, filters: CryptoTransferFilters): Promise<{ data: CryptoTransferGroupView[]; pagination: Pagination }> {
  let query = db.selectFrom('crypto_transfers').selectAll().where('client_id', '=', clientId);
  if (filters.walletId !== undefined) {
    const wallet = await requireWallet(db, clientId, filters.walletId);
    query = query.where('wallet_id', '=', wallet.id);
  }
  if (filters.cryptoTransactionId !== undefined) {
    // A link, not a resource of its own (docs/api-design.md, Lists): an id nothing links to
    // matches nothing, as on GET /v1/transactions; a value that is not an id is a 400 naming it.
    const id = requireLinkFilterId('cryptoTransactionId', filters.cryptoTransactionId).toLowerCase();
    const child = await db.selectFrom('crypto_transactions').select('crypto_transfer_id').where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
    query = query.where('id', '=', child?.crypto_transfer_id ?? id);
  }
  if (filters.direction !== undefined) query = query.where('direction', '=', filters.direction);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.network !== undefined) query = query.where('network', '=', filters.network);
  const { rows, pagination } = await paginate(db, query, filters, { id: 'crypto_transfers.id', createdAt: 'crypto_transfers.created_at' });
  const children = await childrenOf(
    db,
    clientId,
    rows.map((row) => row.id),
  );
  const byTransfer = new Map<string, CryptoTransactionRow[]>();
  for (const child of children) {
    const list = byTransfer.get(child.crypto_transfer_id) ?? [];
    list.push(child);
    byTransfer.set(child.crypto_transfer_id, list);
  }
  return { data: rows.map((row) => cryptoTransferGroupView(row, byTransfer.get(row.id) ?? [])), pagination };
}
