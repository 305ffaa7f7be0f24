import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { fieldCipherOf } from '../../../platform/crypto/field-cipher.js';
import { authOf, type RequestContext } from '../../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../../platform/http/envelope.js';
import { validationError } from '../../../platform/http/errors.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import type { Tx } from '../../../platform/db/transaction.js';
import type { CustomersHooks } from '../customers-hooks.js';
import { listQueryProperties } from '../../../platform/http/pagination.js';
import { customerTypes, emailLengthMax } from '../customer-rules.js';
import * as customers from '../customers.service.js';
import {
  BusinessCreateBody,
  BusinessPatchBody,
  CustomerView,
  IndividualCreateBody,
  IndividualPatchBody,
  MembershipProgramView,
} from './schemas.js';

const tags = ['Customers'];
const CustomerParams = Type.Object({ id: Text.id({ description: 'customer id' }) });

/** A customer's type is fixed at creation: say so plainly rather than "unknown field". */
async function refuseTypeChange(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (body !== null && typeof body === 'object' && Object.hasOwn(body, 'type')) {
    throw validationError('type', 'cannot be changed: a customer stays PRIVATE (individual) or LEGAL (business) for life');
  }
}

export function registerCustomerRoutes(app: App, deps: Deps, hooks: CustomersHooks = {}): void {
  const cipher = () => fieldCipherOf(deps);
  /**
   * After a PATCH, the running onboarding is looked at again (the edit may complete it); the answer
   * shows the customer as it then is, without `bankingInfo`: the specification gives that only on
   * GET /v1/customers/:id (until 2026-12-04 every PATCH answered it; found by an audit).
   */
  const updated = async (tx: Tx, context: RequestContext, written: customers.CustomerViewData): Promise<customers.CustomerViewData> => {
    let customer = written;
    if (hooks.customerChanged) {
      await hooks.customerChanged(tx, context, written.id);
      customer = await customers.getCustomer(tx, context.clientId, cipher(), written.id);
    }
    const { bankingInfo: _bankingInfo, ...answer } = customer;
    return answer;
  };

  // The earlier form POST /v1/customers behaves exactly like POST /v1/customers/individual.
  for (const [url, summary] of [
    ['/v1/customers/individual', 'Create an individual customer'],
    ['/v1/customers', 'Create an individual customer (earlier form of POST /v1/customers/individual)'],
  ] as const) {
    app.post(
      url,
      {
        schema: {
          operationId: url === '/v1/customers' ? 'customers.create' : 'customers.createIndividual',
          tags,
          summary,
          description:
            'Creates a PRIVATE customer with its default portfolio and primary wallet, and records CUSTOMER_CREATED, in one transaction. ' +
            'Email addresses are unique per client regardless of letter case (409 DUPLICATE_EMAIL).',
          body: IndividualCreateBody,
          response: { 201: Envelope(CustomerView) },
        },
      },
      async (request, reply) => {
        await runWrite(request, reply, deps, async (tx, context) => ({
          statusCode: 201,
          message: 'Customer created',
          data: await customers.createIndividual(tx, context, cipher(), request.body),
          sealResponse: true,
        }));
      },
    );
  }

  app.post(
    '/v1/customers/business',
    {
      schema: {
        operationId: 'customers.createBusiness',
        tags,
        summary: 'Create a business customer',
        description: 'Creates a LEGAL customer with optional KYB data, its default portfolio and primary wallet, and records CUSTOMER_CREATED.',
        body: BusinessCreateBody,
        response: { 201: Envelope(CustomerView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Customer created',
        data: await customers.createBusiness(tx, context, cipher(), request.body),
      }));
    },
  );

  app.get(
    '/v1/customers',
    {
      schema: {
        operationId: 'customers.list',
        tags,
        summary: 'List customers, newest first',
        querystring: Type.Object(
          {
            ...listQueryProperties,
            email: Type.Optional(Type.String({ minLength: 1, maxLength: emailLengthMax, description: 'exact email address, any letter case' })),
            type: Type.Optional(Type.Enum(customerTypes)),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(CustomerView) },
      },
    },
    async (request) => {
      const { data, pagination } = await customers.listCustomers(deps.db, authOf(request).clientId, cipher(), request.query);
      return { message: 'Customers retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/customers/membership-programs',
    {
      schema: {
        operationId: 'customers.listMembershipPrograms',
        tags,
        summary: 'List membership programs',
        description: 'Every client starts with Standard (the default) and Premium.',
        response: { 200: Envelope(Type.Array(MembershipProgramView)) },
      },
    },
    async (request) => ({
      message: 'Membership programs retrieved',
      data: await customers.listMembershipPrograms(deps.db, authOf(request).clientId),
      traceId: String(request.id),
    }),
  );

  app.get(
    '/v1/customers/:id',
    {
      schema: {
        operationId: 'customers.get',
        tags,
        summary: 'Retrieve a customer',
        description: 'The only customer read that carries bankingInfo, present when the primary wallet has a virtual account.',
        params: CustomerParams,
        response: { 200: Envelope(CustomerView) },
      },
    },
    async (request) => ({
      message: 'Customer retrieved',
      data: await customers.getCustomer(deps.db, authOf(request).clientId, cipher(), request.params.id),
      traceId: String(request.id),
    }),
  );

  app.patch(
    '/v1/customers/:id',
    {
      preValidation: refuseTypeChange,
      schema: {
        operationId: 'customers.update',
        tags,
        summary: 'Update an individual customer (partial)',
        description:
          'Only the fields present change; null clears an optional field. Identity data (names, sex, birth date, nationality, documents, ' +
          'main address) can change only before onboarding or while it is PENDING or PROCESSING (else 409 INVALID_STATE).',
        params: CustomerParams,
        body: IndividualPatchBody,
        response: { 200: Envelope(CustomerView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Customer updated',
        data: await updated(tx, context, await customers.updateIndividual(tx, context, cipher(), request.params.id, request.body, hooks.identityChanging)),
        sealResponse: true,
      }));
    },
  );

  app.patch(
    '/v1/customers/business/:id',
    {
      preValidation: refuseTypeChange,
      schema: {
        operationId: 'customers.updateBusiness',
        tags,
        summary: 'Update a business customer (partial)',
        description: 'Only the fields present change; the kyb block follows the same onboarding rule as an individual\'s identity data.',
        params: CustomerParams,
        body: BusinessPatchBody,
        response: { 200: Envelope(CustomerView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Customer updated',
        data: await updated(tx, context, await customers.updateBusiness(tx, context, cipher(), request.params.id, request.body, hooks.identityChanging)),
      }));
    },
  );
}
