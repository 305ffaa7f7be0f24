import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { runWrite } from '../../platform/http/idempotency.js';
import { listQueryProperties } from '../../platform/http/pagination.js';
import { accountNumberLengthMax, removedCounterpartyFields, TransferNetworkSchema } from '../bank-transfers/index.js';
import { createCounterparty, deleteCounterparty, getCounterparty, listCounterparties, updateCounterparty } from './counterparties.service.js';

const text = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const CounterpartySchema = Type.Object(
  {
    id: Type.String(),
    customerId: Type.String(),
    portfolioId: Type.String(),
    transferNetwork: Type.Union(
      [
        Type.Literal('ACH_DOMESTIC'),
        Type.Literal('ACH_CROSSBORDER'),
        Type.Literal('FEDWIRE_DOMESTIC'),
        Type.Literal('FEDWIRE_CROSSBORDER'),
        Type.Literal('SWIFT'),
      ],
      { examples: ['ACH_DOMESTIC'] },
    ),
    name: text('a label for the counterparty'),
    accountHolderName: Type.String({ examples: ['Grace Hopper'] }),
    routingNumber: text('ABA routing number (ACH_DOMESTIC, ACH_CROSSBORDER, FEDWIRE_DOMESTIC); null otherwise'),
    bicSwiftCode: text('SWIFT/BIC (FEDWIRE_CROSSBORDER, SWIFT); null otherwise'),
    accountNumberValue: text('account number or IBAN'),
    countryCode: text('ISO 3166-1 alpha-2'),
    street1: text('street'),
    street2: text('street, second line'),
    cityCounty: text('city'),
    stateRegion: text('state or region'),
    zip: text('postal code'),
    bankName: Type.String({ description: 'from the bank directory, when the routing number or BIC was validated', examples: ['JPMorgan Chase Bank, N.A.'] }),
    bankCity: text('from the bank directory'),
    bankState: text('from the bank directory (US banks)'),
    bankCountry: Type.String({ description: 'ISO 3166-1 alpha-2, from the bank directory', examples: ['US'] }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Counterparty' },
);

const optional = (maxLength: number, description?: string) =>
  Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength }), Type.Null()], description === undefined ? {} : { description }));

/**
 * A bank identifier: an empty string counts as given and is judged by the identifier rules (400
 * INVALID_ROUTING_NUMBER or INVALID_SWIFT_CODE with the reason, or "is not allowed" on a network
 * that takes the other one), as on withdrawals (docs/bank-directory.md); the schema answered it.
 */
const identifier = (maxLength: number, description: string) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()], { description }));

const fieldProperties = {
  name: optional(140, 'a label for the counterparty'),
  routingNumber: identifier(34, 'ABA routing number: required for ACH_DOMESTIC, ACH_CROSSBORDER and FEDWIRE_DOMESTIC, not allowed otherwise'),
  bicSwiftCode: identifier(34, 'SWIFT/BIC: required for FEDWIRE_CROSSBORDER and SWIFT, not allowed otherwise'),
  accountNumberValue: optional(accountNumberLengthMax, 'account number or IBAN (an IBAN is validated as one)'),
  countryCode: optional(2, 'ISO 3166-1 alpha-2'),
  street1: optional(140),
  street2: optional(140),
  cityCounty: optional(100),
  stateRegion: optional(100),
  zip: optional(20),
};

const CreateBody = Type.Object(
  {
    transferNetwork: TransferNetworkSchema,
    accountHolderName: Type.String({ minLength: 1, maxLength: 140 }),
    ...fieldProperties,
  },
  {
    additionalProperties: false,
    examples: [
      {
        transferNetwork: 'ACH_DOMESTIC',
        name: 'Landlord',
        accountHolderName: 'Grace Hopper',
        routingNumber: '021000021',
        accountNumberValue: '123456789',
        street1: '1 Main Street',
        cityCounty: 'Arlington',
        stateRegion: 'VA',
        zip: '22201',
        countryCode: 'US',
      },
    ],
  },
);

const UpdateBody = Type.Object(
  {
    transferNetwork: Type.Optional(TransferNetworkSchema),
    accountHolderName: Type.Optional(Type.String({ minLength: 1, maxLength: 140 })),
    ...fieldProperties,
  },
  { additionalProperties: false, minProperties: 1, examples: [{ transferNetwork: 'SWIFT', routingNumber: null, bicSwiftCode: 'DEUTDEFF', accountNumberValue: 'DE89370400440532013000' }] },
);

const PortfolioParams = Type.Object({ customerId: Text.id(), portfolioId: Text.id() });
const CounterpartyParams = Type.Object({ customerId: Text.id(), portfolioId: Text.id(), counterpartyId: Text.id() });

export function registerCounterpartyRoutes(app: App, deps: Deps): void {
  const tags = ['Counterparties'];
  const base = '/v1/customers/:customerId/portfolios/:portfolioId/counterparties';
  const removed = { removedFields: removedCounterpartyFields };

  app.post(
    base,
    {
      config: removed,
      schema: {
        operationId: 'counterparties.create',
        tags,
        summary: 'Create a counterparty (a saved beneficiary)',
        description:
          'transferNetwork and accountHolderName are required. routingNumber is required for ACH_DOMESTIC, ACH_CROSSBORDER and ' +
          'FEDWIRE_DOMESTIC, bicSwiftCode for FEDWIRE_CROSSBORDER and SWIFT, and the other is refused. The identifier is validated against ' +
          'the bank directory and bankName, bankCity, bankState and bankCountry are stored from it. accountNumberType and ' +
          'financialInstitutionId were removed (400 FIELD_REMOVED).',
        params: PortfolioParams,
        body: CreateBody,
        response: { 201: Envelope(CounterpartySchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Counterparty created',
        data: await createCounterparty(tx, context, request.params.customerId, request.params.portfolioId, request.body),
      })),
  );

  app.get(
    base,
    {
      schema: {
        operationId: 'counterparties.list',
        tags,
        summary: 'List the counterparties of a portfolio, newest first',
        params: PortfolioParams,
        querystring: Type.Object({ ...listQueryProperties, transferNetwork: Type.Optional(TransferNetworkSchema) }, { additionalProperties: false }),
        response: { 200: ListEnvelope(CounterpartySchema) },
      },
    },
    async (request) => {
      const { data, pagination } = await listCounterparties(deps.db, authOf(request).clientId, request.params.customerId, request.params.portfolioId, request.query);
      return { message: 'Counterparties retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    `${base}/:counterpartyId`,
    { schema: { operationId: 'counterparties.get', tags, summary: 'Retrieve a counterparty', params: CounterpartyParams, response: { 200: Envelope(CounterpartySchema) } } },
    async (request) => ({
      message: 'Counterparty retrieved',
      data: await getCounterparty(deps.db, authOf(request).clientId, request.params.customerId, request.params.portfolioId, request.params.counterpartyId),
      traceId: String(request.id),
    }),
  );

  app.patch(
    `${base}/:counterpartyId`,
    {
      config: removed,
      schema: {
        operationId: 'counterparties.update',
        tags,
        summary: 'Update a counterparty',
        description:
          'Send only the fields to change; null clears an optional field. The result is validated as a whole, so a change of transferNetwork ' +
          'needs the identifier of the new network and null for the old one. Bank identifiers are validated again and the bank data refreshed.',
        params: CounterpartyParams,
        body: UpdateBody,
        response: { 200: Envelope(CounterpartySchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Counterparty updated',
        data: await updateCounterparty(tx, context, request.params.customerId, request.params.portfolioId, request.params.counterpartyId, request.body),
      })),
  );

  app.delete(
    `${base}/:counterpartyId`,
    {
      schema: {
        operationId: 'counterparties.delete',
        tags,
        summary: 'Delete a counterparty',
        description: 'Withdrawals already sent to it keep their own copy of the beneficiary. Answers the deleted counterparty.',
        params: CounterpartyParams,
        response: { 200: Envelope(CounterpartySchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Counterparty deleted',
        data: await deleteCounterparty(tx, context, request.params.customerId, request.params.portfolioId, request.params.counterpartyId),
      })),
  );
}
