import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { runWrite } from '../../platform/http/idempotency.js';
import { listQueryProperties } from '../../platform/http/pagination.js';
import * as cards from './cards.service.js';
import * as programs from './programs.js';

const tags = ['Cards'];
const exampleId = '019ca945-0a00-74c1-8797-3bfde107f365';
const CardParams = Type.Object({ cardId: Text.id({ description: 'card id' }) });
const ProgramParams = Type.Object({ id: Text.id({ description: 'card program id' }) });

const DebitCardBody = Type.Object(
  {
    customerId: Text.id({ description: 'a customer whose KYC (or KYB) is APPROVED' }),
    cardProgramId: Text.id({ description: 'a DEBIT program of GET /v1/cards/programs' }),
    walletId: Type.Optional(
      Text.id({
        description:
          "a wallet of the customer; without it, on a STANDARD program the customer's primary wallet (with or without a virtual account), on a COOP_AUTH program a new wallet created for the card",
      }),
    ),
    isVirtual: Type.Boolean({ description: 'a virtual card is ACTIVE at once; a physical one is BLOCKED until activated' }),
    isPrimary: Type.Boolean({ description: "the customer's primary card (the previous primary card loses the mark)" }),
  },
  {
    additionalProperties: false,
    examples: [{ customerId: exampleId, cardProgramId: '019ca945-0a00-7a3e-9a51-5c3f1d2e4b6a', isVirtual: true, isPrimary: true }],
  },
);

const CreditCardBody = Type.Object(
  {
    customerId: Text.id({ description: 'a customer whose KYC (or KYB) is APPROVED' }),
    cardProgramId: Text.id({ description: 'a CREDIT program of GET /v1/cards/programs' }),
    isVirtual: Type.Boolean({ description: 'a virtual card is ACTIVE at once; a physical one is BLOCKED until activated' }),
    isPrimary: Type.Boolean({ description: "the customer's primary card (the previous primary card loses the mark)" }),
    collateralWalletId: Text.id({ description: 'the collateral wallet of the credit line (it becomes the card\'s walletId)' }),
    creditLineId: Text.id({ description: 'an ACTIVE credit line of the customer (POST /v1/credit-lines)' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        customerId: exampleId,
        cardProgramId: '019ca945-0a00-7b11-8c22-6d4e2f3a5b7c',
        isVirtual: true,
        isPrimary: false,
        collateralWalletId: '019c8f2e-6b1a-7c3d-9e4f-0a1b2c3d4e5f',
        creditLineId: '019cb0a1-2c3d-7e4f-8a5b-6c7d8e9f0a1b',
      },
    ],
  },
);

const CardStatusBody = Type.Object(
  {
    status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED'), Type.Literal('CANCELLED'), Type.Literal('BLOCKED')], {
      description: 'ACTIVE ↔ SUSPENDED (a freeze); CANCELLED is final; BLOCKED is where a physical card starts, never reached by PATCH (409)',
    }),
  },
  { additionalProperties: false, examples: [{ status: 'SUSPENDED' }] },
);

const CardListQuery = Type.Object(
  {
    ...listQueryProperties,
    customerId: Type.Optional(Text.id()),
    status: Type.Optional(Type.Union([Type.Literal('ACTIVE'), Type.Literal('BLOCKED'), Type.Literal('SUSPENDED'), Type.Literal('CANCELLED')])),
    cardType: Type.Optional(Type.Union([Type.Literal('DEBIT'), Type.Literal('CREDIT')])),
  },
  { additionalProperties: false },
);

export function registerCardRoutes(app: App, deps: Deps): void {
  app.get(
    '/v1/cards/programs',
    {
      schema: {
        operationId: 'cardPrograms.list',
        tags,
        summary: 'List the card programs of the client',
        description: 'Every client starts with three: Standard Debit, Cooperative Debit (COOP_AUTH) and Crypto-backed Credit.',
        response: { 200: Envelope(Type.Array(programs.CardProgramView)) },
      },
    },
    async (request) => ({
      message: 'Card programs retrieved',
      data: (await programs.listCardPrograms(deps.db, authOf(request).clientId)).map(programs.cardProgramView),
      traceId: String(request.id),
    }),
  );

  app.get(
    '/v1/cards/programs/:id',
    {
      schema: {
        operationId: 'cardPrograms.get',
        tags,
        summary: 'Retrieve a card program',
        params: ProgramParams,
        response: { 200: Envelope(programs.CardProgramView) },
      },
    },
    async (request) => ({
      message: 'Card program retrieved',
      data: programs.cardProgramView(await programs.getCardProgram(deps.db, authOf(request).clientId, request.params.id)),
      traceId: String(request.id),
    }),
  );

  if (deps.config.mode === 'sandbox') {
    app.patch(
      '/v1/cards/programs/:id',
      {
        schema: {
          operationId: 'cardPrograms.update',
          tags,
          summary: 'Change the settings of a card program (sandbox only)',
          description:
            'Replaces whole settings documents: coopAuth (COOP_AUTH programs only), holdExpiry, overCapture, limits; and sets revealPhysicalCards. In production, programs are configuration.',
          params: ProgramParams,
          body: programs.CardProgramPatchBody,
          response: { 200: Envelope(programs.CardProgramView) },
        },
      },
      async (request, reply) => {
        await runWrite(request, reply, deps, async (tx, context) => ({
          message: 'Card program updated',
          data: await programs.updateCardProgram(tx, context, request.params.id, request.body),
        }));
      },
    );
  }

  app.post(
    '/v1/cards/debit',
    {
      schema: {
        operationId: 'cards.createDebit',
        tags,
        summary: 'Issue a debit card',
        description:
          'The card number and CVV are never returned: the API shows last4 and the expiry only. Refused: unknown customer, program or wallet (404); ' +
          'a CREDIT program (422 CARD_PROGRAM_MISMATCH); a customer not APPROVED (409 KYC_NOT_APPROVED). Without walletId a COOP_AUTH card gets a new ' +
          'wallet of its own (specification rule 1).',
        body: DebitCardBody,
        response: { 201: Envelope(cards.CardCreatedView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Card created',
        data: await cards.createDebitCard(tx, context, deps, request.body),
      }));
    },
  );

  app.post(
    '/v1/cards/credit',
    {
      schema: {
        operationId: 'cards.createCredit',
        tags,
        summary: 'Issue a credit card on a crypto-backed credit line',
        description:
          'The card spends from its credit line: authorizations draw on the line\'s available credit (51 when short) and are declined 57 ' +
          '(declineReason LTV_PURCHASE_RESTRICTED) while the line is RESTRICTED. Refused: unknown customer or program (404); a DEBIT program (422 ' +
          'CARD_PROGRAM_MISMATCH); a customer not APPROVED (409 KYC_NOT_APPROVED); a credit line that is not the customer\'s (404) or not ACTIVE ' +
          '(422 CREDIT_LINE_NOT_ACTIVE); collateralWalletId not the line\'s collateral wallet (422 COLLATERAL_WALLET_MISMATCH).',
        body: CreditCardBody,
        response: { 201: Envelope(cards.CardCreatedView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Card created',
        data: await cards.createCreditCard(tx, context, deps, request.body),
      }));
    },
  );

  app.get(
    '/v1/cards',
    {
      schema: {
        operationId: 'cards.list',
        tags,
        summary: 'List cards, newest first',
        querystring: CardListQuery,
        response: { 200: ListEnvelope(cards.CardView) },
      },
    },
    async (request) => {
      const { data, pagination } = await cards.listCards(deps.db, authOf(request).clientId, request.query);
      return { message: 'Cards retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/cards/:cardId',
    {
      schema: { operationId: 'cards.get', tags, summary: 'Retrieve a card', params: CardParams, response: { 200: Envelope(cards.CardView) } },
    },
    async (request) => ({
      message: 'Card retrieved',
      data: await cards.getCard(deps.db, authOf(request).clientId, request.params.cardId),
      traceId: String(request.id),
    }),
  );

  app.patch(
    '/v1/cards/:cardId',
    {
      schema: {
        operationId: 'cards.update',
        tags,
        summary: 'Freeze, unfreeze or cancel a card',
        description: 'ACTIVE ↔ SUSPENDED; any status but CANCELLED → CANCELLED (final). Anything else: 409 INVALID_CARD_STATUS_TRANSITION.',
        params: CardParams,
        body: CardStatusBody,
        response: { 200: Envelope(cards.CardView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Card updated',
        data: await cards.updateCardStatus(tx, context, request.params.cardId, request.body.status),
      }));
    },
  );

  app.post(
    '/v1/cards/:cardId/activate',
    {
      schema: {
        operationId: 'cards.activate',
        tags,
        summary: 'Activate a physical card',
        description: 'BLOCKED → ACTIVE. Activating an ACTIVE card succeeds and changes nothing; a SUSPENDED or CANCELLED card: 409 INVALID_CARD_STATUS_TRANSITION.',
        params: CardParams,
        response: { 200: Envelope(cards.CardView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Card activated',
        data: await cards.activateCard(tx, context, request.params.cardId),
      }));
    },
  );
}
