import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../../platform/http/envelope.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import { listQueryProperties } from '../../../platform/http/pagination.js';
import { getBankTransaction, listBankTransfers } from '../bank-transactions.service.js';
import { CryptoTransferGroupSchema, listCryptoTransfers } from '../../crypto/index.js';
import { validationError } from '../../../platform/http/errors.js';
import type { BankTransferRuntime } from '../runtime.js';
import { createWithdrawal, requiredWithoutCounterparty } from '../withdrawals.service.js';
import { removedWithdrawalFields } from '../withdrawal-rules.js';
import { BankNetworkSchema, BankStatusSchema, BankTransactionSchema, BankTransactionTypeSchema, BankTransferGroupSchema, WithdrawalBody } from './schemas.js';

const withdrawalDescription =
  'Sends money from a wallet to a bank account over ACH, Fedwire or SWIFT. The body is flat. transferNetwork decides the bank ' +
  'identifier: routingNumber for ACH_DOMESTIC, ACH_CROSSBORDER and FEDWIRE_DOMESTIC, bicSwiftCode for FEDWIRE_CROSSBORDER and SWIFT ' +
  '(the other one is refused). Bank name and address come from the bank directory. remittanceMemo: letters, digits, spaces and ' +
  "/ - . , ( ) ' + : ? # &, at most 20 characters on ACH, 35 on Fedwire, 120 on SWIFT; leave it out for no memo. With counterpartyId the " +
  'beneficiary comes from the saved counterparty. The wallet must be linked to a virtual account (400 WALLET_NOT_LINKED). The amount ' +
  'is reserved at once (RESERVED balance) and BANK_WITHDRAWAL_TRANSACTION_PENDING is emitted; the answer is the WITHDRAWAL_INITIATED ' +
  'bank transaction. Removed fields (destination, details, preferredPaymentScheme, bankName, bankAddress) answer 400 FIELD_REMOVED.';

export function registerBankTransferRoutes(app: App, deps: Deps, runtime: BankTransferRuntime): void {
  const tags = ['Bank transfers'];

  for (const url of ['/v1/baas/transactions/withdrawal', '/v1/baas/withdrawals']) {
    app.post(
      url,
      {
        // A body the schema refuses is told the beneficiary fields it lacks too (`{}` named three
        // fields, then eight more on the second try, until the thirty-fourth session).
        config: { removedFields: removedWithdrawalFields, oneOfRequired: requiredWithoutCounterparty.map((field) => [field, 'counterpartyId'] as const) },
        schema: {
          operationId: url === '/v1/baas/withdrawals' ? 'withdrawals.create' : 'bankTransfers.createWithdrawal',
          tags,
          summary: url === '/v1/baas/withdrawals' ? 'Create a bank withdrawal (alias)' : 'Create a bank withdrawal',
          description: withdrawalDescription,
          body: WithdrawalBody,
          response: { 201: Envelope(BankTransactionSchema) },
        },
      },
      async (request, reply) =>
        runWrite(request, reply, deps, async (tx, context) => ({
          statusCode: 201,
          message: 'Withdrawal initiated',
          data: await createWithdrawal(tx, context, request.body, runtime),
        })),
    );
  }

  app.get(
    '/v1/baas/transactions',
    {
      schema: {
        operationId: 'bankTransfers.list',
        tags,
        summary: 'List bank transactions, newest first, children grouped under their parent',
        description:
          'Each item is one payment (deposit or withdrawal) with its current state and its child records in `children` (oldest first). ' +
          'Filters: walletId, customerId (or userId), portfolioId (404 when not one of yours), type (DEPOSIT, WITHDRAWAL, or the type of ' +
          'the latest record), status, bankNetwork, createdAfter, createdBefore. With cryptoTransactionId (a crypto deposit or ' +
          'withdrawal, parent or child id) the answer is that crypto transaction with its records instead (walletId, status and type ' +
          'DEPOSIT or WITHDRAWAL still apply; the bank-only filters are refused).',
        querystring: Type.Object(
          {
            ...listQueryProperties,
            walletId: Type.Optional(Text.id()),
            customerId: Type.Optional(Text.id()),
            userId: Type.Optional(Text.id({ description: 'the same as customerId' })),
            portfolioId: Type.Optional(Text.id()),
            type: Type.Optional(Type.Union([Type.Literal('DEPOSIT'), Type.Literal('WITHDRAWAL'), ...BankTransactionTypeSchema.anyOf])),
            status: Type.Optional(BankStatusSchema),
            bankNetwork: Type.Optional(BankNetworkSchema),
            cryptoTransactionId: Type.Optional(Text.id({ description: 'a crypto deposit or withdrawal (parent or child id): answers its crypto records' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Type.Union([BankTransferGroupSchema, CryptoTransferGroupSchema])) },
      },
    },
    async (request) => {
      const { cryptoTransactionId, ...query } = request.query;
      if (cryptoTransactionId !== undefined) {
        for (const field of ['customerId', 'userId', 'portfolioId', 'bankNetwork'] as const) {
          if (query[field] !== undefined) throw validationError(field, 'is a bank transaction filter; it cannot be combined with cryptoTransactionId');
        }
        if (query.type !== undefined && query.type !== 'DEPOSIT' && query.type !== 'WITHDRAWAL') {
          throw validationError('type', 'with cryptoTransactionId only DEPOSIT or WITHDRAWAL');
        }
        const { type, ...rest } = query;
        const crypto = await listCryptoTransfers(deps.db, authOf(request).clientId, { ...rest, cryptoTransactionId, ...(type === undefined ? {} : { direction: type }) });
        return { message: 'Crypto transactions retrieved', data: crypto.data, pagination: crypto.pagination, traceId: String(request.id) };
      }
      const { data, pagination } = await listBankTransfers(deps.db, authOf(request).clientId, query);
      return { message: 'Bank transactions retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/baas/transactions/:id',
    {
      schema: {
        operationId: 'bankTransfers.get',
        tags,
        summary: 'Retrieve one bank transaction record',
        description: 'A child record (the id in a BANK_* event\'s bankTransactionId). A parent id answers the payment\'s latest record.',
        params: Type.Object({ id: Text.id() }),
        response: { 200: Envelope(BankTransactionSchema) },
      },
    },
    async (request) => ({
      message: 'Bank transaction retrieved',
      data: await getBankTransaction(deps.db, authOf(request).clientId, request.params.id),
      traceId: String(request.id),
    }),
  );
}
