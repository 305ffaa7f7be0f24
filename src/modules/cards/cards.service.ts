import crypto from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Deps } from '../../platform/deps.js';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { createWallet, findCustomer, findWallet, primaryWalletOf } from '../customers/index.js';
import { findCreditLine } from '../credit/index.js';
import { cardVaultOf } from './card-vault.js';
import type { CardStatus, CardsTable, CardType } from './cards.tables.js';
import { cardExpiryFor, generatePan, panLast4 } from './network/index.js';
import { findCardProgram } from './programs.js';
import './cards.tables.js';

type Queryable = Db | Tx;
export type CardRow = Selectable<CardsTable>;

const CardStatusSchema = Type.Union([Type.Literal('ACTIVE'), Type.Literal('BLOCKED'), Type.Literal('SUSPENDED'), Type.Literal('CANCELLED')], {
  description: 'ACTIVE: usable; BLOCKED: a physical card not activated yet; SUSPENDED: frozen by the cardholder; CANCELLED: final',
});

export const CardView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    customerId: Type.String({ format: 'uuid' }),
    walletId: Type.String({ format: 'uuid', description: 'the wallet the card spends from' }),
    cardProgramId: Type.String({ format: 'uuid' }),
    cardType: Type.Union([Type.Literal('DEBIT'), Type.Literal('CREDIT')]),
    cardTransactionHandler: Type.Union([Type.Literal('STANDARD'), Type.Literal('COOP_AUTH')]),
    referenceNumber: Type.String({ description: 'the card\'s reference, shown in cooperative authorization events instead of its number', examples: ['CR4827361905'] }),
    status: CardStatusSchema,
    isVirtual: Type.Boolean(),
    isPrimary: Type.Boolean(),
    last4: Type.String({ pattern: '^[0-9]{4}$', examples: ['4242'] }),
    expiryMonth: Type.Integer({ minimum: 1, maximum: 12 }),
    expiryYear: Type.Integer({ examples: [2030] }),
    creditLineId: Type.Union([Type.String(), Type.Null()], { description: 'credit cards only' }),
    collateralWalletId: Type.Union([Type.String(), Type.Null()], { description: 'credit cards only' }),
    activatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Card' },
);
export type CardViewType = Static<typeof CardView>;

export const CardCreatedView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    referenceNumber: Type.String(),
    status: CardStatusSchema,
    walletId: Type.String({ format: 'uuid' }),
  },
  { title: 'CardCreated' },
);
export type CardCreatedViewType = Static<typeof CardCreatedView>;

export function cardView(row: CardRow): CardViewType {
  return {
    id: row.id,
    customerId: row.customer_id,
    walletId: row.wallet_id,
    cardProgramId: row.card_program_id,
    cardType: row.card_type,
    cardTransactionHandler: row.card_transaction_handler,
    referenceNumber: row.reference_number,
    status: row.status,
    isVirtual: row.is_virtual,
    isPrimary: row.is_primary,
    last4: row.last4,
    expiryMonth: row.expiry_month,
    expiryYear: row.expiry_year,
    creditLineId: row.credit_line_id,
    collateralWalletId: row.collateral_wallet_id,
    activatedAt: row.activated_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface DebitCardInput {
  customerId: string;
  cardProgramId: string;
  walletId?: string | undefined;
  isVirtual: boolean;
  isPrimary: boolean;
}

/** A new card reference: "CR" and ten random digits (unique per client; a clash is drawn again). */
function newReferenceNumber(): string {
  return `CR${String(crypto.randomInt(1_000_000_000)).padStart(9, '0')}${crypto.randomInt(10)}`;
}

/** Attempts at drawing a card number and reference that no card of the client has. */
const drawAttemptsMax = 5;

/**
 * The wallet a debit card spends from (specification rule 1): the one given, which must be the
 * customer's (404 otherwise). Without one, a STANDARD program uses the customer's primary wallet,
 * with or without a virtual account (404 when the customer has none); a COOP_AUTH program gets a
 * new wallet of its own, created here through the customers module in the customer's default
 * portfolio (the primary wallet's; 422 RESOURCE_LIMIT_REACHED when that portfolio is full), named
 * after the program.
 */
async function walletForCard(tx: Tx, context: RequestContext, customerId: string, input: DebitCardInput, program: { name: string; card_transaction_handler: string }): Promise<{ id: string }> {
  if (input.walletId !== undefined) {
    const wallet = await findWallet(tx, context.clientId, input.walletId);
    if (!wallet || wallet.customer_id !== customerId) throw notFound('Wallet', 'walletId');
    return wallet;
  }
  const primary = await primaryWalletOf(tx, context.clientId, customerId);
  if (!primary) throw notFound('Wallet');
  if (program.card_transaction_handler !== 'COOP_AUTH') return primary;
  return createWallet(tx, context, customerId, primary.portfolio_id, { name: `Card wallet (${program.name})`.slice(0, 100) });
}

/**
 * POST /v1/cards/debit. Rules, first failing wins: the customer exists (404); the program exists
 * (404) and is DEBIT (422 CARD_PROGRAM_MISMATCH); the customer is APPROVED (409
 * KYC_NOT_APPROVED); the wallet (walletForCard). Then issueCard.
 */
export async function createDebitCard(tx: Tx, context: RequestContext, deps: Pick<Deps, 'config' | 'database'>, input: DebitCardInput): Promise<CardCreatedViewType> {
  const { customerId, program } = await approvedHolderAndProgram(tx, context, input, 'DEBIT');
  const wallet = await walletForCard(tx, context, customerId, input, program);
  return issueCard(tx, context, deps, { customerId, program, walletId: wallet.id, isVirtual: input.isVirtual, isPrimary: input.isPrimary, creditLineId: null });
}

/**
 * The first rules of both card routes: the customer exists (404), locked (its row lock orders card
 * creation with the compliance writes, which take it in the same order); the program exists (404)
 * and is of the route's type (422 CARD_PROGRAM_MISMATCH); the customer is APPROVED (409
 * KYC_NOT_APPROVED, read again under the lock).
 */
async function approvedHolderAndProgram(tx: Tx, context: RequestContext, input: { customerId: string; cardProgramId: string }, cardType: CardType) {
  const found = await findCustomer(tx, context.clientId, input.customerId);
  if (!found) throw notFound('Customer', 'customerId');
  await sql`SELECT 1 FROM customers WHERE client_id = ${context.clientId} AND id = ${found.id} FOR UPDATE`.execute(tx);
  const program = await findCardProgram(tx, context.clientId, input.cardProgramId);
  if (!program) throw notFound('Card program', 'cardProgramId');
  if (program.card_type !== cardType) {
    throw new AppError('CARD_PROGRAM_MISMATCH', `cardProgramId: "${program.name}" is a ${program.card_type} program; a ${cardType.toLowerCase()} card needs a ${cardType} program.`, {
      details: [{ field: 'cardProgramId', message: `is a ${program.card_type} program` }],
    });
  }
  const customer = await findCustomer(tx, context.clientId, input.customerId);
  if (customer?.onboarding_status !== 'APPROVED') {
    throw new AppError('KYC_NOT_APPROVED', `A card needs the customer's ${found.type === 'LEGAL' ? 'KYB' : 'KYC'} to be APPROVED; it is ${customer?.onboarding_status ?? 'not started'}.`);
  }
  return { customerId: found.id, program };
}

export interface CreditCardInput {
  customerId: string;
  cardProgramId: string;
  isVirtual: boolean;
  isPrimary: boolean;
  collateralWalletId: string;
  creditLineId: string;
}

/**
 * POST /v1/cards/credit (contract §12.2). Rules, first failing wins: the customer exists (404);
 * the program exists (404) and is CREDIT (422 CARD_PROGRAM_MISMATCH); the customer is APPROVED
 * (409 KYC_NOT_APPROVED); the credit line is the customer's (404) and ACTIVE (422
 * CREDIT_LINE_NOT_ACTIVE); collateralWalletId is the line's collateral wallet (422
 * COLLATERAL_WALLET_MISMATCH). The card's walletId is that wallet; it spends from the line.
 */
export async function createCreditCard(tx: Tx, context: RequestContext, deps: Pick<Deps, 'config' | 'database'>, input: CreditCardInput): Promise<CardCreatedViewType> {
  const { customerId, program } = await approvedHolderAndProgram(tx, context, input, 'CREDIT');
  const line = await findCreditLine(tx, context.clientId, input.creditLineId);
  if (!line || line.customer_id !== customerId) {
    throw new AppError('NOT_FOUND', 'Credit line not found', { details: [{ field: 'creditLineId', message: 'no such credit line of this customer' }] });
  }
  if (line.status !== 'ACTIVE') {
    throw new AppError('CREDIT_LINE_NOT_ACTIVE', `The credit line is ${line.status}; a credit card needs an ACTIVE line.`, { details: [{ field: 'creditLineId', message: `is ${line.status}` }] });
  }
  if (line.collateral_wallet_id !== input.collateralWalletId.toLowerCase()) {
    throw new AppError('COLLATERAL_WALLET_MISMATCH', 'collateralWalletId is not the collateral wallet of the credit line.', {
      details: [{ field: 'collateralWalletId', message: 'is not the credit line\'s collateral wallet' }],
    });
  }
  return issueCard(tx, context, deps, { customerId, program, walletId: line.collateral_wallet_id, isVirtual: input.isVirtual, isPrimary: input.isPrimary, creditLineId: line.id });
}

/**
 * Writes a new card: a number drawn in the program's BIN (stored encrypted, with its fingerprint),
 * a reference, the expiry; a virtual card is ACTIVE at once, a physical one BLOCKED until
 * activated; a primary card takes the mark from the customer's previous one.
 */
async function issueCard(
  tx: Tx,
  context: RequestContext,
  deps: Pick<Deps, 'config' | 'database'>,
  card: { customerId: string; program: { id: string; bin: string; card_type: CardType; card_transaction_handler: CardRow['card_transaction_handler'] }; walletId: string; isVirtual: boolean; isPrimary: boolean; creditLineId: string | null },
): Promise<CardCreatedViewType> {
  const { program } = card;
  const vault = cardVaultOf(deps);
  const id = idAt(context.now);
  const expiry = cardExpiryFor(context.now);
  if (expiry.expiryYear > cardExpiryYearMax) {
    throw new AppError('CARD_EXPIRY_OUT_OF_RANGE', `A card issued now (${context.now.toISOString().slice(0, 7)}) would expire in ${expiry.expiryYear}; a card's expiry year has two digits, so cards can be issued until the end of ${cardExpiryYearMax - (expiry.expiryYear - context.now.getUTCFullYear())} only. Restore a snapshot taken earlier to bring the sandbox clock back.`);
  }
  const status: CardStatus = card.isVirtual ? 'ACTIVE' : 'BLOCKED';
  if (card.isPrimary) {
    await tx
      .updateTable('cards')
      .set({ is_primary: false, updated_at: context.now })
      .where('client_id', '=', context.clientId)
      .where('customer_id', '=', card.customerId)
      .where('is_primary', '=', true)
      .execute();
  }
  for (let attempt = 1; ; attempt++) {
    const pan = generatePan(program.bin);
    const row = {
      client_id: context.clientId,
      id,
      customer_id: card.customerId,
      wallet_id: card.walletId,
      card_program_id: program.id,
      card_type: program.card_type,
      card_transaction_handler: program.card_transaction_handler,
      reference_number: newReferenceNumber(),
      status,
      is_virtual: card.isVirtual,
      is_primary: card.isPrimary,
      last4: panLast4(pan),
      expiry_month: expiry.expiryMonth,
      expiry_year: expiry.expiryYear,
      pan_encrypted: vault.encryptPan(pan, context.clientId, id),
      pan_fingerprint: vault.fingerprint(pan),
      credit_line_id: card.creditLineId,
      collateral_wallet_id: card.creditLineId === null ? null : card.walletId,
      activated_at: card.isVirtual ? context.now : null,
      cancelled_at: null,
      created_at: context.now,
      updated_at: context.now,
    };
    // A clash on the number or the reference (one in a billion) leaves nothing written: draw again.
    const inserted = await tx.insertInto('cards').values(row).onConflict((conflict) => conflict.doNothing()).returning('id').executeTakeFirst();
    if (inserted) return { id, referenceNumber: row.reference_number, status, walletId: card.walletId };
    if (attempt >= drawAttemptsMax) throw new Error(`no free card number or reference after ${drawAttemptsMax} draws for program ${program.id}`);
  }
}

/** The last expiry year a card can carry: DE14 holds YYMM, and the cards table keeps 2000 to 2099. */
const cardExpiryYearMax = 2099;

export async function findCard(db: Queryable, clientId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<CardRow | undefined> {
  if (!isUuid(id)) return undefined;
  let query = db.selectFrom('cards').selectAll().where('client_id', '=', clientId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function getCard(db: Queryable, clientId: string, id: string): Promise<CardViewType> {
  const row = await findCard(db, clientId, id);
  if (!row) throw notFound('Card');
  return cardView(row);
}

export interface CardListFilters extends ListQuery {
  customerId?: string | undefined;
  status?: CardStatus | undefined;
  cardType?: CardType | undefined;
}

export async function listCards(db: Db, clientId: string, filters: CardListFilters): Promise<{ data: CardViewType[]; pagination: Pagination }> {
  let query = db.selectFrom('cards').selectAll().where('client_id', '=', clientId);
  if (filters.customerId !== undefined) {
    // A customer the client does not have answers 404 naming the filter, as every list filtered by a resource does.
    const customer = await findCustomer(db, clientId, filters.customerId);
    if (!customer) throw notFound('Customer', 'customerId');
    query = query.where('customer_id', '=', customer.id);
  }
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.cardType !== undefined) query = query.where('card_type', '=', filters.cardType);
  const { rows, pagination } = await paginate(db, query, filters, { id: 'id', createdAt: 'created_at' });
  return { data: rows.map(cardView), pagination };
}

/**
 * The status changes PATCH allows (contract §12.2): ACTIVE ↔ SUSPENDED, anything but CANCELLED →
 * CANCELLED. Asking for the status the card already has changes nothing and succeeds.
 */
const patchTransitions: Record<CardStatus, readonly CardStatus[]> = {
  ACTIVE: ['SUSPENDED', 'CANCELLED'],
  SUSPENDED: ['ACTIVE', 'CANCELLED'],
  BLOCKED: ['CANCELLED'],
  CANCELLED: [],
};

function transitionRefused(from: CardStatus, to: CardStatus): AppError {
  const reason =
    from === 'CANCELLED'
      ? 'a cancelled card stays cancelled'
      : from === 'BLOCKED' && to === 'ACTIVE'
        ? 'a BLOCKED physical card becomes ACTIVE through POST /v1/cards/:cardId/activate'
        : `from ${from} a card can become ${patchTransitions[from].join(' or ')}`;
  return new AppError('INVALID_CARD_STATUS_TRANSITION', `status: the card is ${from} and cannot become ${to}: ${reason}.`, {
    details: [{ field: 'status', message: `cannot change from ${from} to ${to}` }],
  });
}

export async function updateCardStatus(tx: Tx, context: RequestContext, id: string, status: CardStatus): Promise<CardViewType> {
  const current = await findCard(tx, context.clientId, id, { forUpdate: true });
  if (!current) throw notFound('Card');
  if (current.status === status) return cardView(current);
  if (!patchTransitions[current.status].includes(status)) throw transitionRefused(current.status, status);
  const updated = await tx
    .updateTable('cards')
    .set({ status, updated_at: context.now, ...(status === 'CANCELLED' ? { cancelled_at: context.now, is_primary: false } : {}) })
    .where('client_id', '=', context.clientId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return cardView(updated);
}

/**
 * POST /v1/cards/:cardId/activate: a BLOCKED (physical) card becomes ACTIVE. Activating an ACTIVE
 * card changes nothing and succeeds (idempotent); a SUSPENDED or CANCELLED one is refused.
 */
export async function activateCard(tx: Tx, context: RequestContext, id: string): Promise<CardViewType> {
  const current = await findCard(tx, context.clientId, id, { forUpdate: true });
  if (!current) throw notFound('Card');
  if (current.status === 'ACTIVE') return cardView(current);
  if (current.status !== 'BLOCKED') {
    const reason = current.status === 'SUSPENDED' ? 'unfreeze it with PATCH /v1/cards/:cardId { "status": "ACTIVE" }' : 'a cancelled card stays cancelled';
    throw new AppError('INVALID_CARD_STATUS_TRANSITION', `The card is ${current.status} and cannot be activated: ${reason}.`);
  }
  const updated = await tx
    .updateTable('cards')
    .set({ status: 'ACTIVE', activated_at: context.now, updated_at: context.now })
    .where('client_id', '=', context.clientId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return cardView(updated);
}
