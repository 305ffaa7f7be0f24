import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { runWrite } from '../../platform/http/idempotency.js';
import { listQueryProperties } from '../../platform/http/pagination.js';
import { addressLengthMax, memoLengthMax } from './address-validation.js';
import {
  blocksPerCallMax,
  confirmCryptoTransaction,
  createCryptoWithdrawal,
  failCryptoTransaction,
  getCryptoTransaction,
  getOrCreateAddress,
  listAddresses,
  listCryptoTransfers,
  mineBlocks,
  receiveCryptoDeposit,
  type CryptoSettings,
} from './crypto-transfers.service.js';
import { confirmationsRequiredMax, cryptoNetworkOverrides } from './networks.js';
import { txHashLengthMax } from './tx-hash.js';
import { jsonBodyLimitBytes } from '../../platform/http/validation.js';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

export const CryptoNetworkNameSchema = Type.Union([Type.Literal('BITCOIN'), Type.Literal('ETHEREUM'), Type.Literal('TRON'), Type.Literal('SOLANA')], {
  description: 'BITCOIN, ETHEREUM, TRON or SOLANA',
});
export const CryptoStatusSchema = Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED')]);
export const CryptoTransactionTypeSchema = Type.Union([
  Type.Literal('CRYPTO_DEPOSIT_INITIATED'),
  Type.Literal('CRYPTO_DEPOSIT_SUCCESS'),
  Type.Literal('CRYPTO_DEPOSIT_FAILURE'),
  Type.Literal('CRYPTO_WITHDRAWAL_INITIATED'),
  Type.Literal('CRYPTO_WITHDRAWAL_SUCCESS'),
  Type.Literal('CRYPTO_WITHDRAWAL_FAILURE'),
]);

const cryptoTransactionProperties = {
  id: Type.String({ description: 'this record (cryptoTransactionId of events and of the wallet history)' }),
  parentCryptoTransactionId: Type.String({ description: 'the deposit or withdrawal this record belongs to' }),
  parentTransactionId: Type.String({ description: 'the parent of its records in the unified wallet history (the same id)' }),
  walletId: Type.String(),
  direction: Type.Union([Type.Literal('DEPOSIT'), Type.Literal('WITHDRAWAL')]),
  operation: Type.Union([Type.Literal('CREDIT'), Type.Literal('DEBIT')]),
  type: CryptoTransactionTypeSchema,
  status: CryptoStatusSchema,
  asset: Type.String({ examples: ['USDC'] }),
  network: CryptoNetworkNameSchema,
  amount: Type.String({ description: 'the amount the request named, a decimal string' }),
  netAmount: Type.String({ description: 'what the recipient gets: amount, or amount − fee with grossAmount' }),
  grossAmount: Type.Boolean({ description: 'withdrawals: whether the fee came out of the amount' }),
  fee: Type.String({ description: 'the network fee of the withdrawal ("0…" for deposits): charged when it completes, nothing when it fails' }),
  feeAsset: Type.String(),
  address: Type.String({ description: 'deposits: the receiving address; withdrawals: the destination' }),
  fromAddress: nullable(Type.String(), 'deposits: the sender, when known'),
  memo: nullable(Type.String(), 'TRON and SOLANA withdrawals only'),
  offCurve: Type.Boolean({ description: 'a Solana destination that is not an ed25519 public key (a program-derived address)' }),
  txHash: Type.String({ description: 'the chain transaction, in the network\'s format' }),
  confirmations: Type.Integer({ description: 'confirmations when this record was written (the group: now)' }),
  confirmationsRequired: Type.Integer(),
  blockNumber: nullable(Type.Integer(), 'the block that included the transaction, once mined'),
  failureReason: nullable(Type.String()),
  referenceNumber: nullable(Type.String()),
  note: nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
};

export const CryptoTransactionSchema = Type.Object(cryptoTransactionProperties, { title: 'CryptoTransaction' });
export const CryptoTransferGroupSchema = Type.Object(
  {
    ...cryptoTransactionProperties,
    id: Type.String({ description: 'the deposit or withdrawal (the same as parentCryptoTransactionId)' }),
    type: Type.Union(CryptoTransactionTypeSchema.anyOf, { description: 'type of the latest record' }),
    children: Type.Array(CryptoTransactionSchema, { description: 'every record, oldest first' }),
  },
  { title: 'CryptoTransferGroup' },
);

const CryptoAddressSchema = Type.Object(
  {
    id: Type.String(),
    walletId: Type.String(),
    asset: Type.String({ description: 'the asset asked for (any asset of the network can be sent to the address)' }),
    network: CryptoNetworkNameSchema,
    address: Type.String({ description: 'in the chain\'s own format, passing its checksum' }),
    memo: Type.Null({ description: 'deposit addresses are per wallet and need no memo' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'CryptoAddress' },
);

const assetField = Type.String({ minLength: 1, maxLength: 16, examples: ['USDC'] });
const networkField = Type.Optional(nullable(Type.String({ minLength: 1, maxLength: 20, examples: ['TRON'] }), 'the asset\'s default network when absent'));

/** The most a withdrawal's address or memo may hold before the destination checks read it. */
// The destination rules judge the lengths, in their order (address, then memo): the schema's
// bound is the body's own, so no length reaches the schema first (4096 did, answering a generic
// 400 instead of INVALID_ADDRESS or MEMO_NOT_SUPPORTED).
const destinationTextMax = jsonBodyLimitBytes;

const WithdrawalBody = Type.Object(
  {
    walletId: Text.id(),
    asset: assetField,
    network: networkField,
    amount: Text.amount(),
    // Lengths are the destination checks' own rules (address, then memo, in their documented
    // order); the schema only bounds what is read.
    address: Type.String({
      maxLength: destinationTextMax,
      description: `the destination, checked by the network's own rules: at most ${addressLengthMax} characters (a longer one is 400 INVALID_ADDRESS; maxLength is only the body's bound, so that the destination rules answer first)`,
    }),
    memo: Type.Optional(
      nullable(
        Type.String({ maxLength: destinationTextMax }),
        `TRON and SOLANA only; 1 to ${memoLengthMax} characters (a longer one is 400 VALIDATION_ERROR; maxLength is only the body's bound)`,
      ),
    ),
    grossAmount: Type.Optional(Type.Boolean({ description: 'true: the fee comes out of amount; false (default): the wallet pays amount + fee' })),
    referenceNumber: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: 100 }))),
    note: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: 500 }))),
  },
  { additionalProperties: false, examples: [{ walletId: '0190f1f2-0000-7000-8000-000000000000', asset: 'USDC', network: 'TRON', amount: '25.00', address: 'TLeUZDGLWnyiJVFcp3m3M1782uBsGWa8uf' }] },
);

const DepositBody = Type.Object(
  {
    address: Type.String({ minLength: 1, maxLength: addressLengthMax, description: 'one of your deposit addresses' }),
    asset: assetField,
    network: Type.Optional(
      nullable(
        Type.String({ minLength: 1, maxLength: 20, examples: ['TRON'] }),
        "the address's network when absent; when sent it must be the address's (400 naming network otherwise)",
      ),
    ),
    amount: Text.amount(),
    fromAddress: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: addressLengthMax }), 'the sender, checked in the network\'s format')),
    txHash: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: txHashLengthMax }), 'generated in the network\'s format when absent')),
    confirmations: Type.Optional(Type.Integer({ minimum: 0, maximum: confirmationsRequiredMax, description: 'already on chain (default 0)' })),
  },
  { additionalProperties: false, examples: [{ address: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', asset: 'BTC', amount: '0.01000000', confirmations: 0 }] },
);

const idParams = Type.Object({ id: Text.id({ description: 'the deposit or withdrawal (parentCryptoTransactionId) or any of its records' }) });

const listFilters = {
  walletId: Type.Optional(Text.id()),
  cryptoTransactionId: Type.Optional(Text.id({ description: 'a parent or child id: the one deposit or withdrawal it belongs to' })),
  direction: Type.Optional(Type.Union([Type.Literal('DEPOSIT'), Type.Literal('WITHDRAWAL')])),
  status: Type.Optional(CryptoStatusSchema),
  network: Type.Optional(CryptoNetworkNameSchema),
};

/** The crypto settings of the server; called when routes are registered, so a bad setting stops the start (ConfigError). */
export function cryptoSettingsOf(deps: Deps): CryptoSettings {
  return {
    mode: deps.config.mode,
    bitcoinNetwork: deps.config.bitcoinNetwork,
    sandboxSeed: deps.config.sandboxSeed,
    overrides: cryptoNetworkOverrides(deps.config.cryptoConfirmations, deps.config.cryptoWithdrawalFees),
  };
}

/** Addresses, withdrawals and the crypto transaction records (contract §7, §12.7). */
export function registerCryptoTransferRoutes(app: App, deps: Deps): void {
  const tags = ['Digital assets'];
  const settings = cryptoSettingsOf(deps);

  app.post(
    '/v1/digital/addresses',
    {
      schema: {
        operationId: 'digital.createAddress',
        tags,
        summary: 'Get or create the deposit address of a wallet on a network',
        description:
          'One address per wallet and network, shared by every asset of the network; network defaults to the asset\'s first network. ' +
          '201 when this call created it, 200 with the existing address otherwise.',
        body: Type.Object(
          { walletId: Text.id(), asset: assetField, network: networkField },
          { additionalProperties: false, examples: [{ walletId: '0190f1f2-0000-7000-8000-000000000000', asset: 'USDC', network: 'TRON' }] },
        ),
        response: { 200: Envelope(CryptoAddressSchema), 201: Envelope(CryptoAddressSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => {
        const { created, address } = await getOrCreateAddress(tx, context, settings, request.body);
        return { statusCode: created ? 201 : 200, message: created ? 'Address created' : 'Address retrieved', data: address };
      }),
  );

  app.get(
    '/v1/digital/addresses',
    {
      schema: {
        operationId: 'digital.listAddresses',
        tags,
        summary: 'List the deposit addresses of a wallet',
        querystring: Type.Object({ walletId: Text.id() }, { additionalProperties: false }),
        response: { 200: Envelope(Type.Array(CryptoAddressSchema)) },
      },
    },
    async (request) => ({
      message: 'Addresses retrieved',
      data: await listAddresses(deps.db, authOf(request).clientId, request.query.walletId),
      traceId: String(request.id),
    }),
  );

  app.post(
    '/v1/digital/withdrawal',
    {
      schema: {
        operationId: 'digital.createWithdrawal',
        tags,
        summary: 'Send crypto from a wallet to an address',
        description:
          'The destination is checked by the network\'s rules (400 INVALID_ADDRESS, ADDRESS_WRONG_NETWORK, ADDRESS_NOT_ALLOWED, ' +
          'MEMO_NOT_SUPPORTED). The flat fee of GET /v1/digital/withdrawal-fees is added to the amount, or taken from it with ' +
          'grossAmount (422 AMOUNT_BELOW_FEE when nothing would remain). Amount and fee are reserved (RESERVED balance), the ' +
          'transaction is broadcast at once and CRYPTO_WITHDRAWAL_TRANSACTION_PENDING is emitted; it completes at the network\'s ' +
          'confirmations. The answer is the CRYPTO_WITHDRAWAL_INITIATED record.',
        body: WithdrawalBody,
        response: { 201: Envelope(CryptoTransactionSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Withdrawal initiated',
        data: await createCryptoWithdrawal(tx, context, settings, request.body),
      })),
  );

  app.get(
    '/v1/digital/transactions',
    {
      schema: {
        operationId: 'digital.listTransactions',
        tags,
        summary: 'List crypto deposits and withdrawals, newest first, with their records',
        description: 'The same records as GET /v1/baas/transactions?cryptoTransactionId=, with more filters.',
        querystring: Type.Object({ ...listQueryProperties, ...listFilters }, { additionalProperties: false }),
        response: { 200: ListEnvelope(CryptoTransferGroupSchema) },
      },
    },
    async (request) => {
      const { data, pagination } = await listCryptoTransfers(deps.db, authOf(request).clientId, request.query);
      return { message: 'Crypto transactions retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/digital/transactions/:id',
    {
      schema: {
        operationId: 'digital.getTransaction',
        tags,
        summary: 'Retrieve one crypto transaction record',
        description: 'A record id (cryptoTransactionId of an event); a parent id answers the latest record.',
        params: idParams,
        response: { 200: Envelope(CryptoTransactionSchema) },
      },
    },
    async (request) => ({
      message: 'Crypto transaction retrieved',
      data: await getCryptoTransaction(deps.db, authOf(request).clientId, request.params.id),
      traceId: String(request.id),
    }),
  );
}

/** Sandbox controls of the chains (contract §12.8). Registered only in sandbox mode. */
export function registerSandboxCryptoRoutes(app: App, deps: Deps): void {
  const tags = ['Sandbox'];
  const settings = cryptoSettingsOf(deps);

  app.post(
    '/v1/sandbox/crypto-deposits',
    {
      schema: {
        operationId: 'sandbox.createCryptoDeposit',
        tags,
        summary: 'Send crypto to one of your deposit addresses (sandbox)',
        description:
          'A PENDING deposit (PENDING balance, CRYPTO_DEPOSIT_TRANSACTION_PENDING) that completes at the network\'s confirmations ' +
          '(blocks or the confirm control); COMPLETED at once when confirmations already meets them. 404 for an address that is not ' +
          'yours; 422 ASSET_NETWORK_MISMATCH when the asset does not move on the address\'s network (kept FAILED for support).',
        body: DepositBody,
        response: { 201: Envelope(CryptoTransactionSchema) },
      },
    },
    async (request, reply) =>
      // A refused deposit (AssetNetworkMismatch) is kept FAILED by runWrite, with the key's answer.
      runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Deposit received',
        data: await receiveCryptoDeposit(tx, context, settings, request.body),
      })),
  );

  app.post(
    '/v1/sandbox/chains/:network/blocks',
    {
      schema: {
        operationId: 'sandbox.mineCryptoBlocks',
        tags,
        summary: 'Mine blocks on one of your sandbox chains',
        description:
          'Every PENDING deposit and broadcast withdrawal on the network gains count confirmations; those that reach the ' +
          'network\'s requirement complete in the same call (a withdrawal the network rejects fails at its first block).',
        params: Type.Object({ network: CryptoNetworkNameSchema }),
        body: Type.Object({ count: Type.Integer({ minimum: 1, maximum: blocksPerCallMax }) }, { additionalProperties: false, examples: [{ count: 3 }] }),
        response: {
          200: Envelope(
            Type.Object(
              {
                network: CryptoNetworkNameSchema,
                height: Type.Integer({ description: 'the chain\'s height after the call' }),
                confirmed: Type.Integer({ description: 'pending transactions that gained confirmations' }),
                completed: Type.Integer(),
                failed: Type.Integer(),
              },
              { title: 'CryptoBlocksOutcome' },
            ),
          ),
        },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Blocks mined',
        data: await mineBlocks(tx, context, request.params.network, request.body.count),
      })),
  );

  app.post(
    '/v1/sandbox/crypto-transactions/:id/confirm',
    {
      schema: {
        operationId: 'sandbox.confirmCryptoTransaction',
        tags,
        summary: 'Add confirmations to one pending crypto deposit or withdrawal (sandbox)',
        description:
          'Adds confirmations (default: as many as it still needs). Answers the SUCCESS (or FAILURE) record when it became final, ' +
          'its latest record otherwise. 409 CRYPTO_TRANSACTION_NOT_PENDING once it is final.',
        params: idParams,
        body: Type.Optional(
          Type.Object({ confirmations: Type.Optional(Type.Integer({ minimum: 1, maximum: confirmationsRequiredMax })) }, { additionalProperties: false, examples: [{ confirmations: 1 }] }),
        ),
        response: { 200: Envelope(CryptoTransactionSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Crypto transaction confirmed',
        data: await confirmCryptoTransaction(tx, context, request.params.id, request.body?.confirmations),
      })),
  );

  app.post(
    '/v1/sandbox/crypto-transactions/:id/fail',
    {
      schema: {
        operationId: 'sandbox.failCryptoTransaction',
        tags,
        summary: 'Fail one pending crypto deposit or withdrawal (sandbox)',
        description:
          'A deposit\'s pending amount is removed (a reorg); a withdrawal\'s reserved amount and fee return to AVAILABLE. Emits the ' +
          'FAILED event and answers the FAILURE record. 409 CRYPTO_TRANSACTION_NOT_PENDING once it is final.',
        params: idParams,
        body: Type.Optional(Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { additionalProperties: false, examples: [{ reason: 'chain reorganisation' }] })),
        response: { 200: Envelope(CryptoTransactionSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Crypto transaction failed',
        data: await failCryptoTransaction(tx, context, request.params.id, request.body?.reason),
      })),
  );
}
