import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../../platform/http/envelope.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import { listQueryProperties } from '../../../platform/http/pagination.js';
import * as customers from '../customers.service.js';
import { PortfolioCreateBody, PortfolioView, WalletCreateBody, WalletView } from './schemas.js';

const CustomerParams = Type.Object({ customerId: Text.id({ description: 'customer id' }) });
const PortfolioParams = Type.Object({ customerId: Text.id({ description: 'customer id' }), portfolioId: Text.id({ description: 'portfolio id' }) });

export function registerPortfolioRoutes(app: App, deps: Deps): void {
  const tags = ['Portfolios and wallets'];

  app.get(
    '/v1/customers/:customerId/portfolios',
    {
      schema: {
        operationId: 'portfolios.list',
        tags,
        summary: 'List the portfolios of a customer, newest first',
        params: CustomerParams,
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: ListEnvelope(PortfolioView) },
      },
    },
    async (request) => {
      const { data, pagination } = await customers.listPortfolios(deps.db, authOf(request).clientId, request.params.customerId, request.query);
      return { message: 'Portfolios retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.post(
    '/v1/customers/:customerId/portfolios',
    {
      schema: {
        operationId: 'portfolios.create',
        tags,
        summary: 'Create a portfolio for a customer',
        description: `A new portfolio holds no wallet until one is added. A customer has at most ${customers.portfoliosPerCustomerMax} portfolios.`,
        params: CustomerParams,
        body: PortfolioCreateBody,
        response: { 201: Envelope(PortfolioView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Portfolio created',
        data: await customers.createPortfolio(tx, context, request.params.customerId, request.body),
      }));
    },
  );

  app.get(
    '/v1/customers/:customerId/portfolios/:portfolioId',
    {
      schema: { operationId: 'portfolios.get', tags, summary: 'Retrieve a portfolio', params: PortfolioParams, response: { 200: Envelope(PortfolioView) } },
    },
    async (request) => ({
      message: 'Portfolio retrieved',
      data: await customers.getPortfolio(deps.db, authOf(request).clientId, request.params.customerId, request.params.portfolioId),
      traceId: String(request.id),
    }),
  );

  app.post(
    '/v1/customers/:customerId/portfolios/:portfolioId/wallets',
    {
      schema: {
        operationId: 'wallets.create',
        tags,
        summary: 'Create a wallet in a portfolio',
        description: `Wallets are multi-asset: one wallet holds a balance per asset. A portfolio holds at most ${customers.walletsPerPortfolioMax} wallets.`,
        params: PortfolioParams,
        body: WalletCreateBody,
        response: { 201: Envelope(WalletView) },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Wallet created',
        data: await customers.createWallet(tx, context, request.params.customerId, request.params.portfolioId, request.body),
      }));
    },
  );

  app.get(
    '/v1/wallets',
    {
      schema: {
        operationId: 'wallets.list',
        tags,
        summary: 'List wallets, newest first',
        querystring: Type.Object(
          {
            ...listQueryProperties,
            customerId: Type.Optional(Text.id({ description: 'only this customer\'s wallets (404 when the customer is unknown)' })),
            portfolioId: Type.Optional(Text.id({ description: 'only this portfolio\'s wallets (404 when the portfolio is unknown)' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(WalletView) },
      },
    },
    async (request) => {
      const { data, pagination } = await customers.listWallets(deps.db, authOf(request).clientId, request.query);
      return { message: 'Wallets retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/wallets/:id',
    {
      schema: { operationId: 'wallets.get', tags, summary: 'Retrieve a wallet', params: Type.Object({ id: Text.id({ description: 'wallet id' }) }), response: { 200: Envelope(WalletView) } },
    },
    async (request) => ({
      message: 'Wallet retrieved',
      data: await customers.getWallet(deps.db, authOf(request).clientId, request.params.id),
      traceId: String(request.id),
    }),
  );
}
