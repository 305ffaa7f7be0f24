import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import * as relations from '../business-relations.service.js';
import type { CustomersHooks } from '../customers-hooks.js';
import { RelationCreateBody, RelationDeleteBody, RelationPatchBody, RelationsList, RelationsResult } from './schemas.js';

const tags = ['Customers'];
const path = '/v1/customers/business/:businessUserId/related-persons';
const params = Type.Object({ businessUserId: Text.id({ description: 'id of the business (LEGAL) customer' }) });
const relationRules =
  'A related person is an individual (PRIVATE) customer of the same client. SHAREHOLDER needs ownershipPercentage (0 < p ≤ 100); ' +
  'REPRESENTATIVE takes none. The shareholders of one business never own more than 100% together (409 OWNERSHIP_LIMIT_EXCEEDED).';

export function registerRelationRoutes(app: App, deps: Deps, hooks: CustomersHooks = {}): void {
  app.post(
    path,
    {
      schema: {
        operationId: 'customers.addRelatedPersons',
        tags,
        summary: 'Add a person relation to a business customer',
        description: `${relationRules} Returns every relation of the business and the action performed.`,
        params,
        body: RelationCreateBody,
        response: { 201: Envelope(RelationsResult) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Person relation added',
        data: await relations.addRelation(tx, context, request.params.businessUserId, request.body, hooks.customerChanged),
      }));
    },
  );

  app.get(
    path,
    {
      schema: {
        operationId: 'customers.listRelatedPersons',
        tags,
        summary: 'List the person relations of a business customer',
        params,
        response: { 200: Envelope(RelationsList) },
      },
    },
    async (request) => ({
      message: 'Person relations retrieved',
      data: await relations.listRelations(deps.db, authOf(request).clientId, request.params.businessUserId),
      traceId: String(request.id),
    }),
  );

  app.patch(
    path,
    {
      schema: {
        operationId: 'customers.updateRelatedPersons',
        tags,
        summary: 'Update a person relation',
        description: `The relation is named by userId and role in the body. ${relationRules}`,
        params,
        body: RelationPatchBody,
        response: { 200: Envelope(RelationsResult) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Person relation updated',
        data: await relations.updateRelation(tx, context, request.params.businessUserId, request.body, hooks.customerChanged),
      }));
    },
  );

  app.delete(
    path,
    {
      schema: {
        operationId: 'customers.removeRelatedPersons',
        tags,
        summary: 'Remove a person relation',
        description: 'The relation is named by userId and role in the body.',
        params,
        body: RelationDeleteBody,
        response: { 200: Envelope(RelationsResult) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Person relation removed',
        data: await relations.removeRelation(tx, context, request.params.businessUserId, request.body, hooks.customerChanged),
      }));
    },
  );
}
