import type { Tx } from '../../platform/db/transaction.js';
import type { WriteStatement } from '../../platform/db/write-statement.js';
import type { Mode } from '../../platform/config.js';
import { AppError, validationError } from '../../platform/http/errors.js';
import type { BatchItem, BatchOutcome } from '../../platform/http/write-batcher.js';
import { formatAmount, parseAmount } from '../../platform/money/amount.js';
import { requireAsset, type Asset } from '../../platform/money/assets.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { assertPlainText } from '../../platform/text.js';
import { LedgerBatch, type TransferOperation, type WalletsExist } from '../ledger/index.js';
import { recordEvents, type EventToRecord } from '../webhooks/index.js';

/** The request body, as the route schema lets it through. */
export interface InternalTransferRequest {
  sourceWalletId: string;
  destinationWalletId?: string;
  referenceWalletId?: string;
  amount: string;
  asset: string;
  note?: string | null;
}

/** The response data, exactly the specification's shape. */
export interface InternalTransferData {
  parentTransactionId: string;
  type: 'INTERNAL_TRANSFER';
  status: 'COMPLETED';
  amount: string;
  asset: string;
  source: { walletId: string; transactionId: string };
  destination: { walletId: string; transactionId: string };
  createdAt: string;
}

interface ValidTransfer {
  sourceWalletId: string;
  destinationWalletId: string;
  asset: Asset;
  amountMinor: bigint;
  note: string | null;
}

const walletNotFound = (field: string) => new AppError('NOT_FOUND', 'Wallet not found', { details: [{ field, message: 'no such wallet' }] });

/**
 * The rules that need no database, in the documented order (the first failing rule wins):
 * destination given once, known asset, amount within the asset's scale, two different wallets,
 * a note without control or invisible formatting characters that shows something (it is shown on
 * both wallets' records; leave it out or send null for none), well-formed wallet ids. Then, in the ledger: source wallet exists, destination wallet exists,
 * enough AVAILABLE money.
 */
export function validateInternalTransfer(body: InternalTransferRequest, mode: Mode): ValidTransfer {
  // Ids are read without regard to letter case, here as everywhere (the same wallet in capitals is the same wallet).
  if (body.destinationWalletId !== undefined && body.referenceWalletId !== undefined && body.destinationWalletId.toLowerCase() !== body.referenceWalletId.toLowerCase()) {
    throw validationError('referenceWalletId', 'is another name for destinationWalletId; send one of them');
  }
  const destination = body.destinationWalletId ?? body.referenceWalletId;
  if (destination === undefined) throw validationError('destinationWalletId', 'is required (or referenceWalletId)');
  const asset = requireAsset(body.asset, mode);
  const amountMinor = parseAmount(body.amount, asset);
  const sourceWalletId = body.sourceWalletId.toLowerCase();
  const destinationWalletId = destination.toLowerCase();
  if (sourceWalletId === destinationWalletId) {
    throw validationError(body.destinationWalletId === undefined ? 'referenceWalletId' : 'destinationWalletId', 'must be a different wallet than sourceWalletId');
  }
  assertPlainText(body.note, 'note', { notBlank: true });
  // A malformed id answers exactly like an unknown one.
  if (!isUuid(sourceWalletId)) throw walletNotFound('sourceWalletId');
  if (!isUuid(destinationWalletId)) throw walletNotFound('destinationWalletId');
  return { sourceWalletId, destinationWalletId, asset, amountMinor, note: body.note ?? null };
}

interface PlannedTransfer {
  transfer: ValidTransfer;
  parentTransactionId: string;
  operation: TransferOperation;
}

/** A batch of internal transfers once checked and once their wallets' accounts are locked. */
export interface LoadedTransfers {
  items: BatchItem<InternalTransferRequest>[];
  /** Per item: its plan, or the refusal found without the database. */
  plans: (PlannedTransfer | AppError)[];
  ledger: LedgerBatch | undefined;
}

/**
 * Checks every transfer of a batch and locks, in one ledger batch, the accounts of all of them
 * (in a fixed order). Writes nothing: the batcher may learn afterwards that some items are
 * replays, and those are then not processed.
 */
export async function loadInternalTransfers(
  tx: Tx,
  items: BatchItem<InternalTransferRequest>[],
  mode: Mode,
  walletsExist: WalletsExist,
): Promise<LoadedTransfers> {
  const loaded = planInternalTransfers(tx, items, mode);
  await loaded.ledger?.load({ walletsExist });
  return loaded;
}

/**
 * Like `loadInternalTransfers`, but reads nothing: the ledger batch assumes that every wallet
 * exists and holds enough, and its write succeeds only if so (`LedgerBatch.assumeLoaded`). Used
 * first by the batcher, which runs the batch again with `loadInternalTransfers` when that write
 * fails.
 */
export function assumeInternalTransfers(tx: Tx, items: BatchItem<InternalTransferRequest>[], mode: Mode): LoadedTransfers {
  const loaded = planInternalTransfers(tx, items, mode);
  loaded.ledger?.assumeLoaded();
  return loaded;
}

/** Checks every transfer of a batch without the database and declares the valid ones to a new ledger batch. */
function planInternalTransfers(tx: Tx, items: BatchItem<InternalTransferRequest>[], mode: Mode): LoadedTransfers {
  const plans = items.map((item): PlannedTransfer | AppError => {
    try {
      const transfer = validateInternalTransfer(item.input, mode);
      const parentTransactionId = idAt(item.context.now);
      return {
        transfer,
        parentTransactionId,
        operation: {
          operation: 'transfer',
          clientId: item.context.clientId,
          now: item.context.now,
          asset: transfer.asset,
          legs: [
            {
              from: { walletId: transfer.sourceWalletId, field: 'sourceWalletId' },
              to: { walletId: transfer.destinationWalletId, field: item.input.destinationWalletId === undefined ? 'referenceWalletId' : 'destinationWalletId' },
              amount: transfer.amountMinor,
            },
          ],
          history: { parentTransactionId, type: 'INTERNAL_TRANSFER', traceId: item.context.traceId, note: transfer.note },
          description: transfer.note,
        },
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return error;
    }
  });
  const planned = plans.filter((plan): plan is PlannedTransfer => !(plan instanceof AppError));
  if (planned.length === 0) return { items, plans, ledger: undefined };
  const latest = planned.reduce((moment, entry) => (entry.operation.now > moment ? entry.operation.now : moment), new Date(0));
  const ledger = new LedgerBatch(tx, latest);
  for (const entry of planned) ledger.declare(entry.operation);
  return { items, plans, ledger };
}

/**
 * Writes the fresh transfers of a loaded batch (`fresh` holds their positions) into `write`: the
 * ledger's changes, then two INTERNAL_TRANSACTION_COMPLETED events per transfer. A refused
 * transfer leaves nothing behind. Answers one outcome per fresh item, in order.
 */
export async function processInternalTransfers(
  tx: Tx,
  loaded: LoadedTransfers,
  fresh: readonly number[],
  write: WriteStatement,
): Promise<BatchOutcome<InternalTransferData>[]> {
  const events: EventToRecord[] = [];
  const outcomes = fresh.map((index): BatchOutcome<InternalTransferData> => {
    const item = loaded.items[index];
    const plan = loaded.plans[index];
    if (!item || !plan) return { ok: false, error: new AppError('INTERNAL_ERROR', 'Internal error: a transfer was left without an outcome.') };
    if (plan instanceof AppError) return { ok: false, error: plan };
    if (!loaded.ledger) throw new Error('a planned transfer has no ledger batch');
    try {
      const result = loaded.ledger.apply(plan.operation);
      const leg = result.legs[0];
      if (!leg?.debitTransactionId || !leg.creditTransactionId) throw new Error('an internal transfer writes two wallet records');
      const { transfer } = plan;
      events.push(
        { context: item.context, type: 'INTERNAL_TRANSACTION_COMPLETED', data: { walletId: transfer.sourceWalletId, transactionId: leg.debitTransactionId } },
        { context: item.context, type: 'INTERNAL_TRANSACTION_COMPLETED', data: { walletId: transfer.destinationWalletId, transactionId: leg.creditTransactionId } },
      );
      return {
        ok: true,
        result: {
          statusCode: 201,
          message: 'Internal transfer completed',
          data: {
            parentTransactionId: plan.parentTransactionId,
            type: 'INTERNAL_TRANSFER',
            status: 'COMPLETED',
            amount: formatAmount(transfer.amountMinor, transfer.asset),
            asset: transfer.asset.code,
            source: { walletId: transfer.sourceWalletId, transactionId: leg.debitTransactionId },
            destination: { walletId: transfer.destinationWalletId, transactionId: leg.creditTransactionId },
            createdAt: item.context.now.toISOString(),
          },
        },
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return { ok: false, error };
    }
  });
  if (loaded.ledger) await loaded.ledger.flush(write);
  await recordEvents(tx, events, write);
  return outcomes;
}
