import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { AppError } from '../../platform/http/errors.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { runWrite } from '../../platform/http/idempotency.js';
import { listQueryProperties } from '../../platform/http/pagination.js';
import * as credit from './credit-lines.service.js';
import { formatE4, settingsProblem, type CreditSettings } from './ltv.js';

const tags = ['Credit lines'];
const exampleCustomer = '019c8f2e-5a09-7b2c-8d3e-9f0a1b2c3d4e';
const exampleWallet = '019c8f2e-6b1a-7c3d-9e4f-0a1b2c3d4e5f';
const LineParams = Type.Object({ id: Text.id({ description: 'credit line id' }) });

const statusSchema = Type.Union(
  [Type.Literal('PENDING_COLLATERAL'), Type.Literal('ACTIVE'), Type.Literal('RESTRICTED'), Type.Literal('LIQUIDATING'), Type.Literal('CLOSED')],
  {
    description:
      'PENDING_COLLATERAL until locked collateral × the opening LTV covers the limit; ACTIVE; RESTRICTED while the LTV is at PURCHASE_RESTRICTED or worse, while the line has no collateral left, after a release that left the collateral short of covering the limit at the opening LTV (until a lock or a price rise covers it again), or while debt left by a liquidation is unpaid (card purchases declined 57 with declineReason LTV_PURCHASE_RESTRICTED in every case, whatever the LTV); LIQUIDATING and CLOSED are reserved (a liquidation completes inside the change that triggers it)',
  },
);

const decimal = (description: string, example: string) => Type.String({ description, examples: [example] });
const ratio = (description: string, example: string) => Type.String({ pattern: '^[0-9]+\\.[0-9]{4}$', description, examples: [example] });

const ThresholdsSchema = Type.Object(
  {
    opening: ratio('the opening LTV, also the target of a liquidation and the most a collateral release may leave', '0.5000'),
    warning: ratio('LTV_THRESHOLD_WARNING', '0.6000'),
    purchaseRestricted: ratio('LTV_PURCHASE_RESTRICTED: card purchases declined from here', '0.6500'),
    collateralNeeded: ratio('LTV_COLLATERAL_NEEDED', '0.7000'),
    urgentCollateralNeeded: ratio('LTV_URGENT_COLLATERAL_NEEDED', '0.7500'),
    liquidationWarning: ratio('LTV_LIQUIDATION_WARNING', '0.8000'),
    liquidation: ratio('LTV_LIQUIDATED: collateral is sold from here', '0.8333'),
  },
  { title: 'CreditThresholds' },
);

const CreditLineSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    customerId: Type.String({ format: 'uuid' }),
    collateralWalletId: Type.String({ format: 'uuid', description: 'the wallet the collateral is locked in (and the card\'s walletId)' }),
    collateralAsset: Type.Union([Type.Literal('BTC'), Type.Literal('ETH')]),
    currency: Type.Literal('USD'),
    creditLimit: decimal('the most the line lends, USD', '15000.00'),
    apr: ratio('the annual interest rate, accrued daily on the principal by the client\'s clock', '0.1200'),
    status: statusSchema,
    collateral: Type.Object({
      asset: Type.String({ examples: ['BTC'] }),
      amount: decimal('locked, in the collateral asset', '1.00000000'),
      price: decimal('the current price of one unit in USD', '60000.00'),
      value: decimal('amount × price, USD, rounded down', '60000.00'),
    }),
    outstanding: Type.Object({
      principal: decimal('card spending posted and not repaid, USD', '1200.00'),
      interest: decimal('interest accrued and not repaid, USD', '3.95'),
      pendingHolds: decimal('open card authorizations, USD', '80.00'),
      total: decimal('principal + interest + pendingHolds', '1283.95'),
    }),
    availableCredit: decimal('creditLimit − outstanding.total (negative when a completion above its hold went past the limit)', '13716.05'),
    refundExcessPaidOut: decimal(
      'what the line\'s card refunds (and purchases reversed) paid into the collateral wallet beyond the principal and no refund reversal has settled yet, USD: a refund reversed takes up to this much back from the wallet before lending the rest',
      '0.00',
    ),
    ltv: Type.Union([ratio('outstanding.total ÷ collateral.value, rounded down to four decimals', '0.0214'), Type.Null()], {
      description: 'null when something is owed and the collateral is worth nothing',
    }),
    ltvLevel: Type.Union(
      [
        Type.Literal('HEALTHY'),
        Type.Literal('THRESHOLD_WARNING'),
        Type.Literal('PURCHASE_RESTRICTED'),
        Type.Literal('COLLATERAL_NEEDED'),
        Type.Literal('URGENT_COLLATERAL_NEEDED'),
        Type.Literal('LIQUIDATION_WARNING'),
        Type.Literal('LIQUIDATION'),
      ],
      { description: 'the highest level crossed and not yet re-armed (a level re-arms when the LTV is 0.01 below its threshold)' },
    ),
    thresholds: ThresholdsSchema,
    liquidationPenaltyRate: ratio('share of the collateral taken in a liquidation kept as the penalty', '0.0200'),
    lastLtvEventAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'CreditLine' },
);

const PaymentSchema = Type.Object(
  {
    ...CreditLineSchema.properties,
    payment: Type.Object({
      parentTransactionId: Type.String({ description: 'the payment\'s wallet transactions (purpose CREDIT_LINE_PAYMENT) are under it' }),
      interestPaid: decimal('USD', '3.95'),
      principalPaid: decimal('USD', '96.05'),
    }),
  },
  { title: 'CreditLinePayment' },
);

const CreateBody = Type.Object(
  {
    customerId: Text.id({ description: 'a customer whose KYC (or KYB) is APPROVED', examples: [exampleCustomer] }),
    collateralWalletId: Text.id({ description: 'a wallet of the customer holding the collateral asset', examples: [exampleWallet] }),
    collateralAsset: Type.Union([Type.Literal('BTC'), Type.Literal('ETH')]),
    currency: Type.Literal('USD'),
    creditLimit: Text.amount({ description: 'USD, a decimal string', examples: ['15000.00'] }),
    apr: Type.Optional(Type.String({ maxLength: 6, description: 'annual rate from "0" to "1", at most four decimals; default "0"', examples: ['0.1200'] })),
  },
  {
    additionalProperties: false,
    title: 'CreditLineRequest',
    examples: [{ customerId: exampleCustomer, collateralWalletId: exampleWallet, collateralAsset: 'BTC', currency: 'USD', creditLimit: '15000.00', apr: '0.1200' }],
  },
);

const AmountBody = (title: string, description: string, example: string) =>
  Type.Object({ amount: Text.amount({ description, examples: [example] }) }, { additionalProperties: false, title, examples: [{ amount: example }] });

const PaymentBody = Type.Object(
  {
    walletId: Text.id({ description: 'a wallet of the line\'s customer with USD AVAILABLE', examples: [exampleWallet] }),
    amount: Text.amount({ description: 'USD; at most principal + interest', examples: ['100.00'] }),
  },
  { additionalProperties: false, title: 'CreditLinePaymentRequest', examples: [{ walletId: exampleWallet, amount: '100.00' }] },
);

const ListQuery = Type.Object(
  {
    ...listQueryProperties,
    customerId: Type.Optional(Text.id()),
    status: Type.Optional(statusSchema),
  },
  { additionalProperties: false },
);

const SettingsSchema = Type.Object(
  { thresholds: ThresholdsSchema, liquidationPenaltyRate: ratio('share of the collateral taken in a liquidation kept as the penalty', '0.0200') },
  { title: 'CreditSettings' },
);

const ratioInput = (description: string, example: string) => Type.String({ maxLength: 6, pattern: '^(0(\\.[0-9]{1,4})?|1(\\.0{1,4})?)$', description, examples: [example] });

const SettingsBody = Type.Object(
  {
    thresholds: Type.Optional(
      Type.Object(
        {
          opening: ratioInput('opening LTV', '0.5000'),
          warning: ratioInput('LTV_THRESHOLD_WARNING', '0.6000'),
          purchaseRestricted: ratioInput('LTV_PURCHASE_RESTRICTED', '0.6500'),
          collateralNeeded: ratioInput('LTV_COLLATERAL_NEEDED', '0.7000'),
          urgentCollateralNeeded: ratioInput('LTV_URGENT_COLLATERAL_NEEDED', '0.7500'),
          liquidationWarning: ratioInput('LTV_LIQUIDATION_WARNING', '0.8000'),
          liquidation: ratioInput('liquidation', '0.8333'),
        },
        { additionalProperties: false },
      ),
    ),
    liquidationPenaltyRate: Type.Optional(ratioInput('liquidation penalty', '0.0200')),
  },
  {
    additionalProperties: false,
    title: 'CreditSettingsRequest',
    examples: [{ thresholds: { opening: '0.5000', warning: '0.6000', purchaseRestricted: '0.6500', collateralNeeded: '0.7000', urgentCollateralNeeded: '0.7500', liquidationWarning: '0.8000', liquidation: '0.8333' }, liquidationPenaltyRate: '0.0200' }],
  },
);

function settingsView(settings: CreditSettings) {
  const thresholds = credit.thresholdsView(settings.thresholds, settings.opening);
  return { thresholds, liquidationPenaltyRate: formatE4(BigInt(settings.liquidationPenalty)) };
}

export function registerCreditLineRoutes(app: App, deps: Deps): void {
  const production = deps.config.mode === 'production';
  app.post(
    '/v1/credit-lines',
    {
      schema: {
        operationId: 'creditLines.create',
        tags,
        summary: 'Open a credit line secured by crypto collateral',
        description:
          'The line starts PENDING_COLLATERAL and becomes ACTIVE once locked collateral × the opening LTV (0.50 by default) covers creditLimit. Rules, first failing ' +
          'wins: creditLimit (400 INVALID_AMOUNT), apr (400 VALIDATION_ERROR), customer (404), collateralWalletId a wallet of the customer (404), KYC ' +
          'APPROVED (409 KYC_NOT_APPROVED). In production mode 503 PRICE_FEED_UNAVAILABLE: collateral cannot be valued without a price feed. Honours Idempotency-Key.',
        body: CreateBody,
        response: { 201: Envelope(CreditLineSchema) },
      },
    },
    async (request, reply) => {
      if (production) throw new AppError('PRICE_FEED_UNAVAILABLE', 'No price feed is connected in production mode, so collateral cannot be valued and credit lines cannot be opened.');
      return runWrite(request, reply, deps, async (tx, context) => ({ statusCode: 201, message: 'Credit line created', data: await credit.createCreditLine(tx, context, request.body) }));
    },
  );

  app.get(
    '/v1/credit-lines',
    {
      schema: {
        operationId: 'creditLines.list',
        tags,
        summary: 'List credit lines, newest first',
        querystring: ListQuery,
        response: { 200: ListEnvelope(CreditLineSchema) },
      },
    },
    async (request) => {
      const { data, pagination } = await credit.listCreditLines(deps.db, authOf(request).clientId, request.query);
      return { message: 'Credit lines retrieved', data, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/credit-lines/:id',
    {
      schema: {
        operationId: 'creditLines.get',
        tags,
        summary: 'Retrieve a credit line with its collateral, outstanding amounts and LTV',
        params: LineParams,
        response: { 200: Envelope(CreditLineSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      return { message: 'Credit line retrieved', data: await credit.getCreditLine(deps.db, clientId, request.params.id), traceId: String(request.id) };
    },
  );

  app.post(
    '/v1/credit-lines/:id/collateral',
    {
      schema: {
        operationId: 'creditLines.lockCollateral',
        tags,
        summary: 'Lock collateral on a credit line',
        description:
          'Moves amount of the collateral asset from the collateral wallet\'s AVAILABLE to RESERVED under the line (wallet transaction type ' +
          'COLLATERAL_LOCK_SUCCESS; a refusal writes nothing). Rules: line exists (404), amount within the asset\'s scale (400 INVALID_AMOUNT), enough ' +
          'AVAILABLE (422 INSUFFICIENT_FUNDS), and, on a line owing principal or interest, an LTV after the lock below the liquidation threshold (422 LTV_TOO_HIGH ' +
            'naming the least amount that is: the collateral would be sold at once). Recomputes the LTV (a lower LTV re-arms levels and may lift a purchase restriction). Honours Idempotency-Key.',
        params: LineParams,
        body: AmountBody('CollateralLockRequest', 'in the collateral asset', '1.00000000'),
        response: { 200: Envelope(CreditLineSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({ statusCode: 200, message: 'Collateral locked', data: await credit.lockCollateral(tx, context, request.params.id, request.body.amount) })),
  );

  app.post(
    '/v1/credit-lines/:id/collateral/release',
    {
      schema: {
        operationId: 'creditLines.releaseCollateral',
        tags,
        summary: 'Release locked collateral back to the wallet',
        description:
          'Rules: line exists (404), amount at most what is locked (422 INSUFFICIENT_FUNDS), the LTV after the release at most the opening LTV (422 ' +
          'LTV_TOO_HIGH). The collateral returns to the wallet\'s AVAILABLE (type COLLATERAL_RELEASE). A release that leaves the collateral ' +
          'short of covering the creditLimit at the opening LTV makes the line RESTRICTED (card purchases declined 57 LTV_PURCHASE_RESTRICTED, ' +
          'even at a low LTV) until collateral locked again, or a price rise, covers it. Honours Idempotency-Key.',
        params: LineParams,
        body: AmountBody('CollateralReleaseRequest', 'in the collateral asset', '0.10000000'),
        response: { 200: Envelope(CreditLineSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({ statusCode: 200, message: 'Collateral released', data: await credit.releaseCollateral(tx, context, request.params.id, request.body.amount) })),
  );

  app.post(
    '/v1/credit-lines/:id/payments',
    {
      schema: {
        operationId: 'creditLines.repay',
        tags,
        summary: 'Repay a credit line (interest first, then principal)',
        description:
          'USD from a wallet of the line\'s customer (purpose CREDIT_LINE_PAYMENT): the interest part to the client\'s FEES account, the principal part ' +
          'back to its CREDIT_LENDING account. Rules: line exists (404), amount (400 INVALID_AMOUNT), the wallet is the customer\'s (404), at most ' +
          'principal + interest (422 AMOUNT_EXCEEDS_OUTSTANDING), enough AVAILABLE USD (422 INSUFFICIENT_FUNDS). Recomputes the LTV. Honours Idempotency-Key.',
        params: LineParams,
        body: PaymentBody,
        response: { 201: Envelope(PaymentSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({ statusCode: 201, message: 'Payment applied', data: await credit.repayCreditLine(tx, context, request.params.id, request.body) })),
  );

  app.get(
    '/v1/credit-settings',
    {
      schema: {
        operationId: 'creditSettings.get',
        tags,
        summary: 'The client\'s LTV thresholds and liquidation penalty',
        description: 'A line copies these when it is opened; a change applies to lines opened after it.',
        response: { 200: Envelope(SettingsSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      return { message: 'Credit settings retrieved', data: settingsView(await credit.creditSettingsOf(deps.db, clientId)), traceId: String(request.id) };
    },
  );

  if (deps.config.mode !== 'sandbox') return;
  app.patch(
    '/v1/sandbox/credit-settings',
    {
      schema: {
        operationId: 'sandbox.updateCreditSettings',
        tags: ['Sandbox'],
        summary: 'Change the client\'s LTV thresholds or liquidation penalty (sandbox only)',
        description:
          'Thresholds must rise strictly from the opening LTV, the first more than 0.01 above it, none above 1, opening + penalty and the liquidation threshold + penalty below 1 (else 400 ' +
          'VALIDATION_ERROR naming the field). Applies to credit lines opened afterwards.',
        body: SettingsBody,
        response: { 200: Envelope(SettingsSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => {
        const current = await credit.creditSettingsOf(tx, context.clientId);
        const next: CreditSettings = { ...current, thresholds: [...current.thresholds] };
        const { thresholds, liquidationPenaltyRate } = request.body;
        if (thresholds) {
          next.opening = credit.parseRatioE4(thresholds.opening, 'thresholds.opening');
          next.thresholds = credit.thresholdNames.map((name) => credit.parseRatioE4(thresholds[name], `thresholds.${name}`));
        }
        if (liquidationPenaltyRate !== undefined) next.liquidationPenalty = credit.parseRatioE4(liquidationPenaltyRate, 'liquidationPenaltyRate');
        const problem = settingsProblem(next);
        if (problem) {
          // A penalty that no longer fits is the ladder's fault when only the ladder was sent.
          const field = liquidationPenaltyRate === undefined ? (problem.ladderField ?? problem.field) : problem.field;
          throw new AppError('VALIDATION_ERROR', `Credit settings refused: ${problem.message}.`, { details: [{ field, message: problem.message }] });
        }
        await credit.saveCreditSettings(tx, context, next);
        return { statusCode: 200, message: 'Credit settings updated', data: settingsView(next) };
      }),
  );
}
