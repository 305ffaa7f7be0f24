import { sql, type Selectable } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import type { CardNetwork, CardProgramsTable, CardTransactionHandler, CardType } from './cards.tables.js';
import {
  checkSettings,
  CoopAuthSettingsSchema,
  defaultCoopAuth,
  defaultHoldExpiry,
  defaultLimits,
  defaultOverCapture,
  HoldExpirySettingsSchema,
  LimitSettingsSchema,
  OverCaptureSettingsSchema,
  type CoopAuthSettings,
  type HoldExpirySettings,
  type LimitSettings,
  type OverCaptureSettings,
} from './program-settings.js';
import './cards.tables.js';

type Queryable = Db | Tx;
export type CardProgramRow = Selectable<CardProgramsTable>;

interface ProgramDefinition {
  name: string;
  cardType: CardType;
  cardTransactionHandler: CardTransactionHandler;
  network: CardNetwork;
  bin: string;
}

/**
 * The three programs every client starts with (contract §12.1). The BINs are the networks'
 * well-known test prefixes, so a sandbox card number can never be a real card's.
 */
export const defaultCardPrograms: readonly ProgramDefinition[] = [
  { name: 'Standard Debit', cardType: 'DEBIT', cardTransactionHandler: 'STANDARD', network: 'VISA', bin: '424242' },
  { name: 'Cooperative Debit', cardType: 'DEBIT', cardTransactionHandler: 'COOP_AUTH', network: 'VISA', bin: '400000' },
  { name: 'Crypto-backed Credit', cardType: 'CREDIT', cardTransactionHandler: 'STANDARD', network: 'MASTERCARD', bin: '555555' },
];

export const CardProgramView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String({ examples: ['Standard Debit'] }),
    cardType: Type.Union([Type.Literal('DEBIT'), Type.Literal('CREDIT')]),
    cardTransactionHandler: Type.Union([Type.Literal('STANDARD'), Type.Literal('COOP_AUTH')], {
      description: 'COOP_AUTH: your endpoint decides each authorization (COOP_AUTH_0100/0200 events)',
    }),
    network: Type.Union([Type.Literal('VISA'), Type.Literal('MASTERCARD')]),
    bin: Type.String({ pattern: '^[0-9]{6,8}$', description: 'the first digits of every card number of the program' }),
    currency: Type.String({ examples: ['USD'] }),
    coopAuth: Type.Union([CoopAuthSettingsSchema, Type.Null()], { description: 'null unless the handler is COOP_AUTH' }),
    holdExpiry: HoldExpirySettingsSchema,
    overCapture: OverCaptureSettingsSchema,
    limits: LimitSettingsSchema,
    revealPhysicalCards: Type.Boolean({ description: 'whether the vault may reveal the numbers of physical cards (virtual ones always)' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'CardProgram' },
);
export type CardProgramViewType = Static<typeof CardProgramView>;

export const CardProgramPatchBody = Type.Object(
  {
    coopAuth: Type.Optional(
      Type.Union([CoopAuthSettingsSchema, Type.Null()], {
        description: 'COOP_AUTH programs only. null, as GET shows it on the others, changes nothing there; a COOP_AUTH program keeps its settings (null is refused)',
      }),
    ),
    holdExpiry: Type.Optional(HoldExpirySettingsSchema),
    overCapture: Type.Optional(OverCaptureSettingsSchema),
    limits: Type.Optional(LimitSettingsSchema),
    revealPhysicalCards: Type.Optional(Type.Boolean({ description: 'whether the vault may reveal the numbers of the program\'s physical cards' })),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ limits: { perTransactionMinor: 100_000, dailyMinor: 300_000, dailyCount: 20 } }],
  },
);
export type CardProgramPatch = Static<typeof CardProgramPatchBody>;

export function cardProgramView(row: CardProgramRow): CardProgramViewType {
  return {
    id: row.id,
    name: row.name,
    cardType: row.card_type,
    cardTransactionHandler: row.card_transaction_handler,
    network: row.network,
    bin: row.bin,
    currency: row.currency,
    coopAuth: row.coop_auth,
    holdExpiry: row.hold_expiry,
    overCapture: row.over_capture,
    limits: row.limits,
    revealPhysicalCards: row.reveal_physical_cards,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function programRow(clientId: string, definition: ProgramDefinition, id: string, now: Date) {
  return {
    client_id: clientId,
    id,
    name: definition.name,
    card_type: definition.cardType,
    card_transaction_handler: definition.cardTransactionHandler,
    network: definition.network,
    bin: definition.bin,
    currency: 'USD',
    coop_auth: definition.cardTransactionHandler === 'COOP_AUTH' ? JSON.stringify(defaultCoopAuth) : null,
    hold_expiry: JSON.stringify(defaultHoldExpiry),
    over_capture: JSON.stringify(defaultOverCapture),
    limits: JSON.stringify(defaultLimits),
    reveal_physical_cards: false,
    created_at: now,
    updated_at: now,
  };
}

/** The client seeder (src/modules/routes.ts): a new client gets the default programs. */
export async function seedCardPrograms(tx: Tx, clientId: string, now: Date): Promise<void> {
  // Ids one millisecond apart keep the programs in the order above (ids sort by time).
  const rows = defaultCardPrograms.map((definition, index) => programRow(clientId, definition, idAt(new Date(now.getTime() + index)), now));
  await tx.insertInto('card_programs').values(rows).onConflict((conflict) => conflict.columns(['client_id', 'name']).doNothing()).execute();
}

/**
 * At start: clients created before card programs existed (migration 0024) get the default ones.
 * A client that has any program is left alone. Safe to run from several processes at once.
 */
export async function seedMissingCardPrograms(db: Db, now: Date): Promise<number> {
  const missing = await sql<{ id: string }>`
    SELECT c.id FROM clients c WHERE NOT EXISTS (SELECT 1 FROM card_programs p WHERE p.client_id = c.id)
  `.execute(db);
  for (const client of missing.rows) await db.transaction().execute((tx) => seedCardPrograms(tx, client.id, now));
  return missing.rows.length;
}

export function listCardPrograms(db: Queryable, clientId: string): Promise<CardProgramRow[]> {
  return db.selectFrom('card_programs').selectAll().where('client_id', '=', clientId).orderBy('id').execute();
}

export async function findCardProgram(db: Queryable, clientId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<CardProgramRow | undefined> {
  if (!isUuid(id)) return undefined;
  let query = db.selectFrom('card_programs').selectAll().where('client_id', '=', clientId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function getCardProgram(db: Queryable, clientId: string, id: string): Promise<CardProgramRow> {
  const row = await findCardProgram(db, clientId, id);
  if (!row) throw notFound('Card program');
  return row;
}

/**
 * PATCH /v1/cards/programs/:id (sandbox mode): replaces whole settings documents (and sets
 * revealPhysicalCards). `coopAuth` is for COOP_AUTH programs only.
 */
export async function updateCardProgram(tx: Tx, context: RequestContext, id: string, patch: CardProgramPatch): Promise<CardProgramViewType> {
  const current = await findCardProgram(tx, context.clientId, id, { forUpdate: true });
  if (!current) throw notFound('Card program');
  if (patch.coopAuth && current.card_transaction_handler !== 'COOP_AUTH') {
    throw validationError('coopAuth', `this program's handler is ${current.card_transaction_handler}: cooperative authorization settings apply to COOP_AUTH programs only`);
  }
  // A document sent back as GET shows it carries `coopAuth: null` on the other programs (until
  // 2026-12-04 the schema refused it; found by an audit); a COOP_AUTH program cannot lose its settings.
  if (patch.coopAuth === null && current.card_transaction_handler === 'COOP_AUTH') {
    throw validationError('coopAuth', 'a COOP_AUTH program needs its cooperative authorization settings: send the whole document, or leave coopAuth out');
  }
  checkSettings(patch);
  const changes: {
    coop_auth?: string;
    hold_expiry?: string;
    over_capture?: string;
    limits?: string;
    reveal_physical_cards?: boolean;
    updated_at: Date;
  } = { updated_at: context.now };
  if (patch.coopAuth) changes.coop_auth = JSON.stringify(patch.coopAuth satisfies CoopAuthSettings);
  if (patch.holdExpiry) changes.hold_expiry = JSON.stringify(patch.holdExpiry satisfies HoldExpirySettings);
  if (patch.overCapture) changes.over_capture = JSON.stringify(patch.overCapture satisfies OverCaptureSettings);
  if (patch.limits) changes.limits = JSON.stringify(patch.limits satisfies LimitSettings);
  if (patch.revealPhysicalCards !== undefined) changes.reveal_physical_cards = patch.revealPhysicalCards;
  const updated = await tx
    .updateTable('card_programs')
    .set(changes)
    .where('client_id', '=', context.clientId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return cardProgramView(updated);
}
