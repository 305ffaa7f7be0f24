import type { Db } from '../../../platform/db/database.js';
import { notFound, validationError } from '../../../platform/http/errors.js';
import { paginate, type ListQuery, type Pagination } from '../../../platform/http/pagination.js';
import { isUuid } from '../../../platform/ids.js';
import { findCard } from '../cards.service.js';
import {
  cardTransactionGroupView,
  cardTransactionView,
  type CardTransactionGroupView,
  type CardTransactionRow,
  type CardTransactionView,
} from './card-transaction-views.js';
import { cardTransactionTypes, type CardTransactionType } from './card-transactions.tables.js';
import './card-transactions.tables.js';

/** Removed values of the `type` filter, each with its replacement (specification change of 2026-04-14). */
const removedTypes: Readonly<Record<string, CardTransactionType>> = { ONLINE_TRANSACTION: 'PURCHASE' };

/**
 * Reads the `type` filter: one of the record types; ONLINE_TRANSACTION (renamed PURCHASE) is
 * refused with a message naming its replacement.
 */
export function cardTransactionTypeFilter(value: string | undefined): CardTransactionType | undefined {
  if (value === undefined) return undefined;
  const replacement = removedTypes[value];
  if (replacement !== undefined) throw validationError('type', `${value} was renamed ${replacement}; filter with type=${replacement}`);
  if (!(cardTransactionTypes as readonly string[]).includes(value)) throw validationError('type', `must be one of ${cardTransactionTypes.map((type) => JSON.stringify(type)).join(', ')}`);
  return value as CardTransactionType;
}

/**
 * GET /v1/cards/transactions/:id: one child record. A parent id (parentCardTransactionId)
 * answers its latest child. 404 for anything else, including another client's ids.
 */
export async function getCardTransaction(db: Db, clientId: string, id: string): Promise<CardTransactionView> {
  if (!isUuid(id)) throw notFound('Card transaction');
  const child = await db.selectFrom('card_transactions').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
  if (child) return cardTransactionView(child);
  const latest = await db.selectFrom('card_transactions').selectAll().where('client_id', '=', clientId).where('swipe_id', '=', id).orderBy('id', 'desc').executeTakeFirst();
  if (!latest) throw notFound('Card transaction');
  return cardTransactionView(latest);
}

export interface CardTransactionFilters extends ListQuery {
  cardId?: string | undefined;
  type?: string | undefined;
}

/**
 * GET /v1/cards/transactions: lifecycles (one per swipe), newest first, each with its current
 * state and its children oldest first (specification rule 3). `cardId` of another client answers
 * 404; `type` keeps the lifecycles with at least one child of that type.
 */
export async function listCardTransactions(db: Db, clientId: string, filters: CardTransactionFilters): Promise<{ data: CardTransactionGroupView[]; pagination: Pagination }> {
  const type = cardTransactionTypeFilter(filters.type);
  let query = db.selectFrom('card_swipes').selectAll().where('client_id', '=', clientId);
  if (filters.cardId !== undefined) {
    const card = await findCard(db, clientId, filters.cardId);
    if (!card) throw notFound('Card', 'cardId');
    query = query.where('card_id', '=', card.id);
  }
  if (type !== undefined) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('card_transactions as child')
          .select('child.id')
          .whereRef('child.client_id', '=', 'card_swipes.client_id')
          .whereRef('child.swipe_id', '=', 'card_swipes.id')
          .where('child.type', '=', type),
      ),
    );
  }
  const { rows, pagination } = await paginate(db, query, filters, { id: 'card_swipes.id', createdAt: 'card_swipes.created_at' });
  const ids = rows.map((row) => row.id);
  const children =
    ids.length === 0 ? [] : await db.selectFrom('card_transactions').selectAll().where('client_id', '=', clientId).where('swipe_id', 'in', ids).orderBy('id').execute();
  const bySwipe = new Map<string, CardTransactionRow[]>();
  for (const child of children) bySwipe.set(child.swipe_id, [...(bySwipe.get(child.swipe_id) ?? []), child]);
  return { data: rows.map((row) => cardTransactionGroupView(row, bySwipe.get(row.id) ?? [])), pagination };
}
