import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope } from '../../../platform/http/envelope.js';
import { requestContext, runWrite } from '../../../platform/http/idempotency.js';
import * as compliance from '../compliance.service.js';
import { normaliseSources } from '../source-of-funds.js';
import {
  BusinessStatusSchema,
  CustomerIdBody,
  IndividualStatusSchema,
  OnboardingSchema,
  RerunSchema,
  SettingsBody,
  SettingsSchema,
  SourceOfFundsBody,
  SourceOfFundsResult,
  StartedKybSchema,
  StartedKycSchema,
  customerParams,
  onboardingParams,
} from './schemas.js';

const tags = ['Compliance'];

export function registerComplianceRoutes(app: App, deps: Deps, runtime: compliance.ComplianceRuntime): void {
  app.get(
    '/v1/compliance/settings',
    {
      schema: {
        operationId: 'compliance.getSettings',
        tags,
        summary: 'Read the onboarding strategy of your client',
        description: 'STANDARD (the default): people verify themselves through the SDK flow. EXTERNAL: an outside KYC provider already verified them.',
        response: { 200: Envelope(SettingsSchema) },
      },
    },
    async (request) => ({
      message: 'Compliance settings retrieved',
      data: { onboardingStrategy: await compliance.strategyOf(deps.db, authOf(request).clientId) },
      traceId: String(request.id),
    }),
  );

  app.patch(
    '/v1/compliance/settings',
    {
      schema: {
        operationId: 'compliance.updateSettings',
        tags,
        summary: 'Choose the onboarding strategy of your client',
        description: 'Applies to onboardings started afterwards; a running onboarding keeps the strategy it started with.',
        body: SettingsBody,
        response: { 200: Envelope(SettingsSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Compliance settings updated',
        data: await compliance.setStrategy(tx, context, request.body.onboardingStrategy),
      })),
  );

  app.post(
    '/v1/compliance/kyc',
    {
      schema: {
        operationId: 'compliance.startKyc',
        tags,
        summary: 'Start KYC for an individual',
        description:
          'Starts an onboarding and returns the SDK link (a hosted verification page) and its QR code. Needs the KYC data, ' +
          'registration address and tax country (422 COMPLIANCE_PROFILE_INCOMPLETE); refused while a KYC runs or after a decision ' +
          '(409 INVALID_STATE; re-run instead). Emits CUSTOMER_KYC_STARTED and CUSTOMER_KYC_SDK_FLOW_REQUIRED.',
        body: CustomerIdBody,
        response: { 201: Envelope(StartedKycSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'KYC started',
        data: await compliance.startKyc(tx, context, runtime, request.body.customerId),
        // The SDK link is the hosted page's only credential: its replay copy is stored encrypted.
        sealResponse: true,
      })),
  );

  app.post(
    '/v1/compliance/kyc/:onboardingId/rerun',
    {
      schema: {
        operationId: 'compliance.rerunKyc',
        tags,
        summary: 'Re-run KYC',
        description:
          'Only while the onboarding is PENDING or PROCESSING (409 INVALID_STATE otherwise), and with the profile a start needs ' +
          '(422 COMPLIANCE_PROFILE_INCOMPLETE). Archives it, starts a new one with a new ' +
          'SDK link and QR code, and emits CUSTOMER_KYC_RESTARTED (with previousOnboardingId), CUSTOMER_KYC_STARTED and CUSTOMER_KYC_SDK_FLOW_REQUIRED.',
        params: onboardingParams,
        response: { 201: Envelope(RerunSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'KYC restarted',
        data: await compliance.rerunKyc(tx, context, runtime, request.params.onboardingId),
        // The SDK link is the hosted page's only credential: its replay copy is stored encrypted.
        sealResponse: true,
      })),
  );

  app.get(
    '/v1/compliance/onboardings/:onboardingId',
    {
      schema: {
        operationId: 'compliance.getOnboarding',
        tags,
        summary: 'Retrieve an onboarding (KYC or KYB)',
        params: onboardingParams,
        response: { 200: Envelope(OnboardingSchema) },
      },
    },
    async (request) => ({
      message: 'Onboarding retrieved',
      data: await compliance.getOnboarding(deps.db, authOf(request).clientId, request.params.onboardingId),
      traceId: String(request.id),
    }),
  );

  app.get(
    '/v1/compliance/status/:customerId',
    {
      schema: {
        operationId: 'compliance.getKycStatus',
        tags,
        summary: 'Compliance status of an individual',
        description: 'Every check with whether it passed and is required under the onboarding strategy, the one next action, and a summary.',
        params: customerParams,
        response: { 200: Envelope(IndividualStatusSchema) },
      },
    },
    async (request) => ({
      message: 'Compliance status retrieved',
      data: await compliance.individualStatus(deps.db, authOf(request).clientId, request.params.customerId),
      traceId: String(request.id),
    }),
  );

  app.post(
    '/v1/compliance/onboardings/:onboardingId/source-of-funds',
    {
      schema: {
        operationId: 'compliance.submitSourceOfFunds',
        tags,
        summary: 'Declare an individual\'s source of funds',
        description:
          'Generates a PDF declaration of the declared sources and stores it as the DOC_SOURCE_OF_FUNDS document. The KYC onboarding ' +
          'must be PENDING or PROCESSING (409 INVALID_STATE).',
        params: onboardingParams,
        body: SourceOfFundsBody,
        response: { 201: Envelope(SourceOfFundsResult) },
      },
    },
    async (request, reply) => {
      const sources = normaliseSources(request.body.sources);
      return runWrite(request, reply, deps, async (tx, context) => {
        const document = await compliance.declareSourceOfFunds(tx, context, runtime, { kind: 'KYC', onboardingId: request.params.onboardingId, sources });
        return { statusCode: 201, message: 'Source-of-funds declaration generated', data: { documentId: document.documentId, sha256: document.sha256, sizeBytes: document.sizeBytes } };
      });
    },
  );

  app.post(
    '/v1/compliance/kyb',
    {
      schema: {
        operationId: 'compliance.startKyb',
        tags,
        summary: 'Start KYB for a business',
        description:
          'Needs complete business data, the main address and at least one SHAREHOLDER and one REPRESENTATIVE (422 ' +
          'COMPLIANCE_PROFILE_INCOMPLETE). The review then follows the related persons\' own KYC. Emits CUSTOMER_KYB_STARTED.',
        body: CustomerIdBody,
        response: { 201: Envelope(StartedKybSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'KYB started',
        data: await compliance.startKyb(tx, context, runtime, request.body.customerId),
      })),
  );

  app.get(
    '/v1/compliance/business/status/:customerId',
    {
      schema: {
        operationId: 'compliance.getKybStatus',
        tags,
        summary: 'Compliance status of a business',
        params: customerParams,
        response: { 200: Envelope(BusinessStatusSchema) },
      },
    },
    async (request) => ({
      message: 'Business compliance status retrieved',
      data: await compliance.businessStatus(deps.db, authOf(request).clientId, request.params.customerId, requestContext(request, deps).now),
      traceId: String(request.id),
    }),
  );

  app.post(
    '/v1/compliance/business/onboardings/:onboardingId/source-of-funds',
    {
      schema: {
        operationId: 'compliance.submitBusinessSourceOfFunds',
        tags,
        summary: 'Declare a business\'s source of funds',
        description: 'As the individual declaration, for a KYB onboarding.',
        params: onboardingParams,
        body: SourceOfFundsBody,
        response: { 201: Envelope(SourceOfFundsResult) },
      },
    },
    async (request, reply) => {
      const sources = normaliseSources(request.body.sources);
      return runWrite(request, reply, deps, async (tx, context) => {
        const document = await compliance.declareSourceOfFunds(tx, context, runtime, { kind: 'KYB', onboardingId: request.params.onboardingId, sources });
        return { statusCode: 201, message: 'Source-of-funds declaration generated', data: { documentId: document.documentId, sha256: document.sha256, sizeBytes: document.sizeBytes } };
      });
    },
  );
}
