import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import { writeBatchSizing, type Deps } from '../../../platform/deps.js';
import type { Metrics } from '../../../platform/http/metrics.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { WriteBatcher } from '../../../platform/http/write-batcher.js';
import type { WalletsExist } from '../../ledger/index.js';
import {
  assumeInternalTransfers,
  loadInternalTransfers,
  processInternalTransfers,
  type InternalTransferData,
  type InternalTransferRequest,
  type LoadedTransfers,
} from '../internal-transfers.service.js';

/** The path the specification lists, then the two forms the provider also accepts. */
export const internalTransferPaths = ['/internal-transfer', '/v1/internal-transfer', '/v1/baas/transactions/internal-transfer'] as const;
/** The path new integrations use; the two others are aliases, marked deprecated in the OpenAPI document. */
export const canonicalInternalTransferPath = '/v1/internal-transfer';
/** Each path's operationId: the canonical one is internalTransfers.create. */
const internalTransferOperationIds: Record<(typeof internalTransferPaths)[number], string> = {
  '/internal-transfer': 'internalTransfers.createUnversioned',
  '/v1/internal-transfer': 'internalTransfers.create',
  '/v1/baas/transactions/internal-transfer': 'baas.internalTransfers.create',
};

export const noteLengthMax = 500;

const exampleWalletA = '019c8f2e-6b1a-7c3d-9e4f-0a1b2c3d4e5f';
const exampleWalletB = '019c8f2e-7d2b-7e4f-8a5b-1c2d3e4f5a6b';

const InternalTransferBody = Type.Object(
  {
    sourceWalletId: Text.id({ description: 'wallet the money leaves (debit side)', examples: [exampleWalletA] }),
    destinationWalletId: Type.Optional(Text.id({ description: 'wallet the money goes to (credit side); required unless referenceWalletId is sent (400 naming this field otherwise)', examples: [exampleWalletB] })),
    referenceWalletId: Type.Optional(Text.id({ description: 'accepted in place of destinationWalletId; if both are sent they must be equal' })),
    amount: Text.amount({ examples: ['25.00'] }),
    asset: Type.String({ minLength: 1, maxLength: 16, description: 'asset code from GET /v1/assets', examples: ['USD'] }),
    note: Type.Optional(Type.Union([Type.String({ maxLength: noteLengthMax }), Type.Null()], { description: 'free text kept on both wallet transaction records, without control characters, line breaks, invisible formatting characters (Unicode Cc, Cf) or noncharacters, and not empty or only white space; null is the same as absent' })),
  },
  {
    additionalProperties: false,
    title: 'InternalTransferRequest',
    examples: [{ sourceWalletId: exampleWalletA, destinationWalletId: exampleWalletB, amount: '25.00', asset: 'USD', note: 'Rent share' }],
  },
);

const Side = (description: string) =>
  Type.Object({ walletId: Type.String(), transactionId: Type.String({ description: 'the wallet transaction record of this side' }) }, { description });

const InternalTransferSchema = Type.Object(
  {
    parentTransactionId: Type.String({ description: 'groups both wallet transaction records; filter GET /v1/transactions by it' }),
    type: Type.Literal('INTERNAL_TRANSFER'),
    status: Type.Literal('COMPLETED'),
    amount: Type.String({ examples: ['25.00'] }),
    asset: Type.String({ examples: ['USD'] }),
    source: Side('debit side'),
    destination: Side('credit side'),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'InternalTransfer' },
);

export function registerInternalTransferRoutes(app: App, deps: Deps, walletsExist: WalletsExist, metrics: Metrics): void {
  const batcher = new WriteBatcher<InternalTransferRequest, InternalTransferData, LoadedTransfers>(deps, {
    ...writeBatchSizing(deps),
    load: (tx, items) => loadInternalTransfers(tx, items, deps.config.mode, walletsExist),
    assume: (tx, items) => assumeInternalTransfers(tx, items, deps.config.mode),
    observe: (path, committed) => metrics.writeBatch(internalTransferPaths[0], path, committed),
    process: processInternalTransfers,
  });
  for (const path of internalTransferPaths) {
    app.post(
      path,
      {
        config: { oneOfRequired: [['destinationWalletId', 'referenceWalletId']] },
        schema: {
          operationId: internalTransferOperationIds[path],
          tags: ['Internal transfers'],
          summary: path === canonicalInternalTransferPath ? 'Move money between two wallets of the client' : `Alias of POST ${canonicalInternalTransferPath}`,
          // New integrations use the versioned path; the two others stay for existing integrations.
          ...(path === canonicalInternalTransferPath ? {} : { deprecated: true }),
          description:
            'Debits the source wallet and credits the destination wallet in one ledger transfer, writes one wallet transaction ' +
            'record per side under one parentTransactionId, and records two INTERNAL_TRANSACTION_COMPLETED events (one per wallet). ' +
            'Rules, first failing wins: destination given once (400), known asset (400 UNKNOWN_ASSET), amount within the asset scale ' +
            '(400 INVALID_AMOUNT), two different wallets (400), a note without control or invisible characters and not blank (400), source wallet exists (404), destination wallet exists (404), ' +
            'enough AVAILABLE money in the source wallet (422 INSUFFICIENT_FUNDS). Honours Idempotency-Key.',
          body: InternalTransferBody,
          response: { 201: Envelope(InternalTransferSchema) },
        },
      },
      async (request, reply) => {
        await batcher.submit(request, reply, request.body);
      },
    );
  }
}
