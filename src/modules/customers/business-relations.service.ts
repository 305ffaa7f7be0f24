import type { Static } from 'typebox';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import {
  formatOwnershipPercentage,
  ownershipMaxUnits,
  ownershipUnitsFromDatabase,
  ownershipUnitsToDatabase,
  parseCalendarDate,
  parseOwnershipPercentage,
  type PersonRole,
} from './customer-rules.js';
import * as store from './customers.store.js';
import { findCustomer, requireLockedCustomer } from './customers.service.js';
import type { RelationCreateBody, RelationDeleteBody, RelationPatchBody, RelationView } from './routes/schemas.js';
import type { CustomerChanged } from './customers-hooks.js';

/**
 * Persons related to a business customer: shareholders (with their ownership) and
 * representatives. Every write locks the business row first, so concurrent writes to one
 * business run one after the other and the 100% shareholding ceiling holds.
 */

export type RelationViewData = Static<typeof RelationView>;
export type RelationAction = 'ADD' | 'UPDATE' | 'REMOVE';
export const relationsPerBusinessMax = 100;

type Queryable = Db | Tx;

function relationView(row: store.RelationRow): RelationViewData {
  return {
    userId: row.person_customer_id,
    role: row.role,
    ownershipPercentage: row.ownership_percentage === null ? null : formatOwnershipPercentage(ownershipUnitsFromDatabase(row.ownership_percentage)),
    representingRange: row.representing_start === null ? null : { startDate: row.representing_start, endDate: row.representing_end },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

async function requireBusiness(db: Queryable, clientId: string, businessId: string, lock: Tx | undefined): Promise<store.CustomerRow> {
  const row = lock ? await requireLockedCustomer(lock, clientId, businessId) : await findCustomer(db, clientId, businessId);
  if (!row) throw notFound('Customer');
  if (row.type !== 'LEGAL') {
    // Named on the path parameter (until 2026-12-06 without details; found by an audit).
    throw new AppError('WRONG_CUSTOMER_TYPE', 'Related persons belong to business (LEGAL) customers; this customer is an individual.', {
      details: [{ field: 'businessUserId', message: 'is an individual (PRIVATE) customer; related persons belong to business (LEGAL) customers' }],
    });
  }
  return row;
}

/** The related person: an individual customer of the same client (another client's is not found). */
async function requirePerson(tx: Tx, clientId: string, userId: string): Promise<store.CustomerRow> {
  const row = await findCustomer(tx, clientId, userId);
  if (!row) throw new AppError('NOT_FOUND', 'Customer not found', { details: [{ field: 'userId', message: 'no such customer' }] });
  if (row.type !== 'PRIVATE') {
    throw new AppError('WRONG_CUSTOMER_TYPE', 'A related person must be an individual (PRIVATE) customer.', {
      details: [{ field: 'userId', message: 'is a business customer; only individuals can be related persons' }],
    });
  }
  return row;
}

function representingRange(range: { startDate: string; endDate?: string | null | undefined } | null | undefined) {
  if (range === undefined) return undefined;
  if (range === null) return { representing_start: null, representing_end: null };
  const start = parseCalendarDate(range.startDate, 'representingRange.startDate');
  const end = range.endDate === undefined || range.endDate === null ? null : parseCalendarDate(range.endDate, 'representingRange.endDate');
  if (end !== null && end < start) throw validationError('representingRange.endDate', 'must not be before startDate');
  return { representing_start: start, representing_end: end };
}

function ownershipFor(role: PersonRole, value: string | undefined): bigint | undefined {
  if (role === 'SHAREHOLDER') {
    return value === undefined ? undefined : parseOwnershipPercentage(value, 'ownershipPercentage');
  }
  if (value !== undefined) throw validationError('ownershipPercentage', 'applies only to the SHAREHOLDER role');
  return undefined;
}

/** Refuses a change that would take the total shareholding above 100%. */
function assertOwnershipFits(relations: store.RelationRow[], exceptId: string | undefined, added: bigint): void {
  const others = relations
    .filter((row) => row.id !== exceptId && row.ownership_percentage !== null)
    .reduce((sum, row) => sum + ownershipUnitsFromDatabase(row.ownership_percentage ?? '0'), 0n);
  if (others + added > ownershipMaxUnits) {
    const available = ownershipMaxUnits - others;
    throw new AppError(
      'OWNERSHIP_LIMIT_EXCEEDED',
      `The shareholders would own ${formatOwnershipPercentage(others + added)}% of the business; the total may not exceed 100% ` +
        `(other shareholders already own ${formatOwnershipPercentage(others)}%, at most ${formatOwnershipPercentage(available)}% is left).`,
      { details: [{ field: 'ownershipPercentage', message: `at most ${formatOwnershipPercentage(available)} is available` }] },
    );
  }
}

async function result(tx: Tx, clientId: string, businessId: string, action: RelationAction) {
  const rows = await store.relationsOfBusiness(tx, clientId, businessId);
  return { personRelations: rows.map(relationView), action };
}

export async function listRelations(db: Queryable, clientId: string, businessId: string): Promise<{ personRelations: RelationViewData[] }> {
  const business = await requireBusiness(db, clientId, businessId, undefined);
  const rows = await store.relationsOfBusiness(db, clientId, business.id);
  return { personRelations: rows.map(relationView) };
}

/**
 * Adds a relation. Rules, first failure wins: business exists and is LEGAL; person exists and is
 * PRIVATE; ownership present for shareholders only and 0 < p ≤ 100; dates; no duplicate
 * (person, role); relation count limit; total shareholding ≤ 100%.
 */
export async function addRelation(tx: Tx, context: RequestContext, businessId: string, input: Static<typeof RelationCreateBody>, changed?: CustomerChanged) {
  const business = await requireBusiness(tx, context.clientId, businessId, tx);
  const person = await requirePerson(tx, context.clientId, input.userId);
  const ownership = ownershipFor(input.role, input.ownershipPercentage);
  if (input.role === 'SHAREHOLDER' && ownership === undefined) throw validationError('ownershipPercentage', 'is required for the SHAREHOLDER role');
  const range = representingRange(input.representingRange);
  const relations = await store.relationsOfBusiness(tx, context.clientId, business.id);
  if (relations.some((row) => row.person_customer_id === person.id && row.role === input.role)) {
    throw new AppError('DUPLICATE_RELATION', `This person is already a ${input.role} of the business; change the relation with PATCH instead.`, {
      details: [{ field: 'userId', message: `already has the role ${input.role}` }],
    });
  }
  if (relations.length >= relationsPerBusinessMax) {
    throw new AppError('RESOURCE_LIMIT_REACHED', `A business can have at most ${relationsPerBusinessMax} person relations.`);
  }
  if (ownership !== undefined) assertOwnershipFits(relations, undefined, ownership);
  await store.insertRelation(tx, {
    client_id: context.clientId,
    id: idAt(context.now),
    business_customer_id: business.id,
    person_customer_id: person.id,
    role: input.role,
    ownership_percentage: ownership === undefined ? null : ownershipUnitsToDatabase(ownership),
    representing_start: range?.representing_start ?? null,
    representing_end: range?.representing_end ?? null,
    created_at: context.now,
    updated_at: context.now,
  });
  await changed?.(tx, context, business.id);
  return result(tx, context.clientId, business.id, 'ADD');
}

async function requireRelation(tx: Tx, clientId: string, businessId: string, userId: string, role: PersonRole) {
  const relations = await store.relationsOfBusiness(tx, clientId, businessId);
  // A UUID in capitals names the same person, as on every route (POST stores it in lower case).
  const personId = userId.toLowerCase();
  const relation = isUuid(userId) ? relations.find((row) => row.person_customer_id === personId && row.role === role) : undefined;
  if (!relation) {
    throw new AppError('NOT_FOUND', `Person relation not found: no ${role} with this userId in the business`, {
      details: [{ field: 'userId', message: `has no ${role} relation with this business` }],
    });
  }
  return { relation, relations };
}

export async function updateRelation(tx: Tx, context: RequestContext, businessId: string, input: Static<typeof RelationPatchBody>, changed?: CustomerChanged) {
  const business = await requireBusiness(tx, context.clientId, businessId, tx);
  const { relation, relations } = await requireRelation(tx, context.clientId, business.id, input.userId, input.role);
  // Nothing to change is refused, as an empty PATCH is on every route (it moved updatedAt).
  if (input.ownershipPercentage === undefined && input.representingRange === undefined) {
    throw validationError('body', 'send the relation\'s new ownershipPercentage or representingRange; userId and role only name it');
  }
  const ownership = ownershipFor(input.role, input.ownershipPercentage);
  const range = representingRange(input.representingRange);
  if (ownership !== undefined) assertOwnershipFits(relations, relation.id, ownership);
  await store.updateRelation(tx, context.clientId, relation.id, {
    ...(ownership === undefined ? {} : { ownership_percentage: ownershipUnitsToDatabase(ownership) }),
    ...(range ?? {}),
    updated_at: context.now,
  });
  await changed?.(tx, context, business.id);
  return result(tx, context.clientId, business.id, 'UPDATE');
}

export async function removeRelation(tx: Tx, context: RequestContext, businessId: string, input: Static<typeof RelationDeleteBody>, changed?: CustomerChanged) {
  const business = await requireBusiness(tx, context.clientId, businessId, tx);
  const { relation } = await requireRelation(tx, context.clientId, business.id, input.userId, input.role);
  await store.deleteRelation(tx, context.clientId, relation.id);
  await changed?.(tx, context, business.id);
  return result(tx, context.clientId, business.id, 'REMOVE');
}
