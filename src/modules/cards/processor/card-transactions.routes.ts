import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../../platform/http/envelope.js';
import { listQueryProperties } from '../../../platform/http/pagination.js';
import { CardTransactionGroupSchema, CardTransactionSchema } from './card-transaction-views.js';
import { getCardTransaction, listCardTransactions } from './card-transactions.service.js';

const tags = ['Cards'];

const ListQuery = Type.Object(
  {
    ...listQueryProperties,
    cardId: Type.Optional(Text.id({ description: 'only this card\'s transactions (another client\'s card answers 404)' })),
    type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'only lifecycles with a record of this type: PRE_AUTHORIZATION, ACCOUNT_VERIFICATION, BALANCE_INQUIRY, PURCHASE, REFUND, PRE_AUTH_COMPLETION, REVERSAL_ADVICE. ONLINE_TRANSACTION was renamed PURCHASE (400).',
      }),
    ),
  },
  { additionalProperties: false },
);

export function registerCardTransactionRoutes(app: App, deps: Deps): void {
  app.get(
    '/v1/cards/transactions',
    {
      schema: {
        operationId: 'cardTransactions.list',
        tags,
        summary: 'List card transactions, one group per swipe, newest first',
        description: 'Each group is a lifecycle (parentCardTransactionId) with its current state and one child record per network message, oldest first.',
        querystring: ListQuery,
        response: { 200: ListEnvelope(CardTransactionGroupSchema) },
      },
    },
    async (request) => {
      const { data, pagination } = await listCardTransactions(deps.db, authOf(request).clientId, request.query);
      return { message: 'Card transactions retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/cards/transactions/:id',
    {
      schema: {
        operationId: 'cardTransactions.get',
        tags,
        summary: 'Retrieve a card transaction record',
        description: 'A child id answers that record; a parentCardTransactionId answers the lifecycle\'s latest record.',
        params: Type.Object({ id: Text.id({ description: 'cardTransactionId or parentCardTransactionId' }) }),
        response: { 200: Envelope(CardTransactionSchema) },
      },
    },
    async (request) => ({
      message: 'Card transaction retrieved',
      data: await getCardTransaction(deps.db, authOf(request).clientId, request.params.id),
      traceId: String(request.id),
    }),
  );
}
