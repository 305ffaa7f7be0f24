import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../../platform/http/envelope.js';
import { notFound, requireLinkFilterId, validationError } from '../../../platform/http/errors.js';
import { listQueryProperties, paginate } from '../../../platform/http/pagination.js';
import { isUuid } from '../../../platform/ids.js';
import { requireAsset } from '../../../platform/money/assets.js';
import type { WalletExists } from '../../ledger/index.js';
import { linkingFilters, walletTransactionPurposes, walletTransactionView } from '../transactions.js';
import { walletTransactionsListQuery, walletTransactionsQuery } from '../transactions.store.js';

/** What a wallet transaction type looks like (the CHECK constraint on wallet_transactions.type). */
const walletTransactionTypePattern = '^[A-Z][A-Z0-9_]{0,63}$';

const Id = (description: string) => Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description });

export const WalletTransactionSchema = Type.Object(
  {
    id: Type.String({ description: 'this child record' }),
    parentTransactionId: Type.String({ description: 'the parent that groups related records (both sides of an internal transfer, every step of a card swipe, …)' }),
    walletId: Type.String(),
    type: Type.String({
      description: 'the business type of the step this record belongs to, for example INTERNAL_TRANSFER; the records of one parent may differ (a card swipe\'s DEBIT_CARD_HOLD and DEBIT_CARD_CAPTURE, a liquidation\'s COLLATERAL_LIQUIDATION and LIQUIDATION_FEE)',
      examples: ['INTERNAL_TRANSFER'],
    }),
    purpose: Type.String({
      description:
        'what this record did to the wallet: TRANSFER, HOLD, HOLD_INCREMENT, CAPTURE, RELEASE, EXPIRY, PENDING_CREDIT, CLEARING or PENDING_FAILURE; or, for a transfer posted under a purpose of its own, that purpose: USER_TRADE and TRADE_FEE_SETTLEMENT (trades), WITHDRAWAL_FEE_REVENUE (a crypto withdrawal\'s fee), WITHDRAWAL_RETURN (a settled bank withdrawal returned), DEPOSIT_RETURN (a settled ACH deposit taken back), CREDIT_LINE_PAYMENT, CREDIT_CARD_CAPTURE, CREDIT_CARD_REFUND, COLLATERAL_LIQUIDATION',
      examples: ['TRANSFER'],
    }),
    operation: Type.Union([Type.Literal('CREDIT'), Type.Literal('DEBIT')]),
    balanceType: Type.Union([Type.Literal('AVAILABLE'), Type.Literal('RESERVED'), Type.Literal('PENDING')], {
      description: 'the balance the record concerns',
    }),
    status: Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED'), Type.Literal('CANCELLED')]),
    amount: Type.String({ description: 'decimal string, always positive; operation gives the direction', examples: ['25.00'] }),
    asset: Type.String({ examples: ['USD'] }),
    note: Type.Union([Type.String(), Type.Null()]),
    cardTransactionId: Id('card transaction record that caused this one'),
    parentCardTransactionId: Id('parent card transaction (one card swipe)'),
    bankTransactionId: Id('bank transaction record that caused this one'),
    parentBankTransactionId: Id('parent bank transaction'),
    cryptoTransactionId: Id('crypto transaction record that caused this one'),
    parentCryptoTransactionId: Id('parent crypto transaction'),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'WalletTransaction' },
);

const linkingProperties = Object.fromEntries(
  linkingFilters.map(([name]) => [name, Type.Optional(Text.id({ description: `only records whose ${name} is this id` }))]),
) as Record<(typeof linkingFilters)[number][0], ReturnType<typeof Type.Optional<ReturnType<typeof Text.id>>>>;

const ListQuery = Type.Object(
  {
    ...listQueryProperties,
    walletId: Type.Optional(Text.id({ description: 'the wallet whose records to list (an unknown wallet answers 404)' })),
    ...linkingProperties,
    operation: Type.Optional(Type.Union([Type.Literal('CREDIT'), Type.Literal('DEBIT')])),
    status: Type.Optional(Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED'), Type.Literal('CANCELLED')])),
    balanceType: Type.Optional(Type.Union([Type.Literal('AVAILABLE'), Type.Literal('RESERVED'), Type.Literal('PENDING')])),
    type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        // The shape of every type (the CHECK constraint of wallet_transactions.type): a type of
        // another shape (lower case, a space) is refused, not answered with nothing. A well-shaped
        // type no record has answers an empty page: the types are open, each module writes its own.
        pattern: walletTransactionTypePattern,
        description: 'business type, for example INTERNAL_TRANSFER: upper-case letters, digits and underscores, starting with a letter',
      }),
    ),
    asset: Type.Optional(
      Type.String({
        // Checked against the asset registry by the handler, as the routes that move money check
        // theirs: the registry depends on the mode (USD_TEST is sandbox only), the schema does not.
        // No length limits here: an empty or overlong code is UNKNOWN_ASSET too, as on those routes
        // (the re-audit found VALIDATION_ERROR for them).
        description: 'only records in this asset, a code from GET /v1/assets (USD, BTC, …; an unknown one answers 400 UNKNOWN_ASSET)',
        examples: ['BTC'],
      }),
    ),
    purpose: Type.Optional(
      Type.Enum(walletTransactionPurposes, {
        description: 'only records with this purpose (what the record did to the wallet; see the record\'s purpose)',
        examples: ['TRANSFER'],
      }),
    ),
  },
  { additionalProperties: false },
);

export function registerTransactionRoutes(app: App, deps: Deps, walletExists: WalletExists): void {
  app.get(
    '/v1/transactions',
    {
      schema: {
        operationId: 'transactions.list',
        tags: ['Transactions'],
        summary: 'List wallet transactions (the unified history), newest first',
        description:
          'Every effect of the ledger on a wallet is a child record under a parent. Needs walletId or at least one linking filter ' +
          '(parentTransactionId, cardTransactionId, parentCardTransactionId, bankTransactionId, parentBankTransactionId, ' +
          'cryptoTransactionId, parentCryptoTransactionId). Filtering by parentTransactionId returns both sides of an internal transfer. ' +
          'The other filters (operation, status, balanceType, type, asset, purpose, createdAfter, createdBefore) narrow that list and combine ' +
          'with each other and with paging; asset and purpose alone do not replace walletId. An unknown asset is 400 UNKNOWN_ASSET, a purpose ' +
          'not in the list 400 VALIDATION_ERROR, each naming its parameter. A linking filter that is not an id is 400 VALIDATION_ERROR naming it; ' +
          'an id nothing links to answers an empty page.',
        querystring: ListQuery,
        response: { 200: ListEnvelope(WalletTransactionSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      const query = request.query;
      const linked = linkingFilters.filter(([name]) => query[name] !== undefined);
      if (query.walletId === undefined && linked.length === 0) {
        throw validationError('walletId', `is required unless one of ${linkingFilters.map(([name]) => name).join(', ')} is given`);
      }
      // As the API spells it everywhere (USD, BTC, …): an asset the registry does not know, or not in
      // this mode, is refused like a malformed parameter, before the wallet is looked up.
      const asset = query.asset === undefined ? undefined : requireAsset(query.asset, deps.config.mode, 'asset').code;
      if (query.walletId !== undefined) {
        if (!isUuid(query.walletId) || !(await walletExists(deps.db, clientId, query.walletId))) throw notFound('Wallet', 'walletId');
      }
      const select = walletTransactionsListQuery(deps.db, clientId, {
        walletId: query.walletId,
        // An id nothing links to matches nothing; a value that is not an id is a 400 naming it.
        links: linked.map(([name, column]) => ({ column, id: requireLinkFilterId(name, query[name] ?? '') })),
        operation: query.operation,
        status: query.status,
        balanceType: query.balanceType,
        type: query.type,
        asset,
        purpose: query.purpose,
      });
      const { rows, pagination } = await paginate(deps.db, select, query, { id: 'id', createdAt: 'created_at' });
      return { message: 'Transactions retrieved', data: rows.map(walletTransactionView), pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/transactions/:id',
    {
      schema: {
        operationId: 'transactions.get',
        tags: ['Transactions'],
        summary: 'Retrieve one wallet transaction record',
        params: Type.Object({ id: Text.id() }),
        response: { 200: Envelope(WalletTransactionSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      if (!isUuid(request.params.id)) throw notFound('Transaction');
      const row = await walletTransactionsQuery(deps.db, clientId).where('id', '=', request.params.id).executeTakeFirst();
      if (!row) throw notFound('Transaction');
      return { message: 'Transaction retrieved', data: walletTransactionView(row), traceId: String(request.id) };
    },
  );
}
