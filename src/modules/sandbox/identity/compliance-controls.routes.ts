import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { requestContext, runWrite } from '../../../platform/http/idempotency.js';
import { withClientTransaction } from '../../../platform/db/client-fence.js';
import { isUuid } from '../../../platform/ids.js';
import { validationError } from '../../../platform/http/errors.js';
import { assertPlainText } from '../../../platform/text.js';
import {
  BusinessStatusSchema,
  ForceCheckBody,
  IndividualStatusSchema,
  OnboardingSchema,
  OutcomeBody,
  applyVerificationOutcome,
  completeKycInSandbox,
  expireIfDue,
  expireOnboarding,
  forceCheck,
  individualStatus,
  onboardingView,
  type ComplianceRuntime,
} from '../../compliance/index.js';

const tags = ['Sandbox'];
const onboardingParams = Type.Object({ onboardingId: Text.id() });

/**
 * Sandbox controls of the identity vendor (CONTRACT §10): decide a verification, expire a link,
 * force a single compliance check. Registered only in sandbox mode; authenticated like the rest.
 */
export function registerComplianceControlRoutes(app: App, deps: Deps, runtime: ComplianceRuntime): void {
  app.post(
    '/v1/sandbox/onboardings/:onboardingId/outcome',
    {
      schema: {
        operationId: 'sandbox.setOnboardingOutcome',
        tags,
        summary: 'Decide an identity verification (sandbox)',
        description:
          'Acts as the identity vendor. On a PENDING KYC it is as if the person finished the SDK flow with that outcome; on a verification under ' +
          'manual review (or after an error) it is the review\'s verdict; on a KYB it decides the business review (no ERROR). ' +
          'APPROVED may complete the onboarding when the required documents are in; with `completeRequirements: true` (KYC only) the sandbox also ' +
          'puts the missing required documents on file, so the KYC is approved in this one call. 409 INVALID_STATE when the onboarding or its verification is finished.',
        params: onboardingParams,
        body: OutcomeBody,
        response: { 200: Envelope(OnboardingSchema) },
      },
    },
    async (request, reply) => {
      // A link past its deadline by the client's clock expires first, in a transaction of its own
      // (as its timer would: the worker may not have reached it yet, or an advance is on its way to
      // it), so the outcome then meets an EXPIRED onboarding: 409 INVALID_STATE. Until 2026-12-06 the
      // control approved a KYC whose link had expired (found by an audit).
      if (isUuid(request.params.onboardingId)) {
        const context = requestContext(request, deps);
        await withClientTransaction(deps.db, context.clientId, (tx) => expireIfDue(tx, context, request.params.onboardingId));
      }
      return runWrite(request, reply, deps, async (tx, context) => {
        if (request.body.completeRequirements === true) {
          if (request.body.outcome !== 'APPROVED') throw validationError('completeRequirements', 'goes with the outcome APPROVED only');
          const completed = await completeKycInSandbox(tx, context, runtime, request.params.onboardingId, { asOutcome: true });
          if (completed.status === 'APPROVED') return { message: 'Onboarding completed: APPROVED', data: onboardingView(completed) };
          // A check still failing (one forced to fail, or data removed meanwhile) stops it: the
          // message says so rather than "completed" (until 2026-12-06 it said "Onboarding completed:
          // PROCESSING"; found by an audit).
          const status = await individualStatus(tx, context.clientId, completed.customer_id);
          const waitingFor = status.summary.requiredFailed.filter((name) => name !== 'KYC_STATUS');
          const waiting = waitingFor.length > 0 ? `, waiting for ${waitingFor.join(', ')}` : '';
          const next = status.nextAction === null ? '' : ` (next action ${status.nextAction})`;
          return {
            message: `Outcome APPROVED recorded and any missing required documents put on file; the onboarding is still ${completed.status}${waiting}${next}`,
            data: onboardingView(completed),
          };
        }
        // As completeRequirements goes with APPROVED only, errorMessage goes with ERROR only: silently dropped, it would look applied.
        if (request.body.errorMessage !== undefined && request.body.outcome !== 'ERROR') throw validationError('errorMessage', 'goes with the outcome ERROR only');
        // The message goes into CUSTOMER_KYC_ERROR: the text rule of every free text (until 2026-12-05 control characters and blanks went through; found by an audit).
        assertPlainText(request.body.errorMessage, 'errorMessage', { notBlank: true });
        const details = request.body.errorMessage === undefined ? {} : { errorMessage: request.body.errorMessage };
        const onboarding = await applyVerificationOutcome(tx, context, runtime, request.params.onboardingId, request.body.outcome, details);
        return { message: `Outcome ${request.body.outcome} recorded`, data: onboardingView(onboarding) };
      });
    },
  );

  app.post(
    '/v1/sandbox/onboardings/:onboardingId/expire',
    {
      schema: {
        operationId: 'sandbox.expireOnboarding',
        tags,
        summary: 'Expire an SDK link now (sandbox)',
        description: 'PENDING → EXPIRED and CUSTOMER_KYC_SDK_EXPIRED, as when the link outlives KYC_LINK_TTL_MINUTES. 409 INVALID_STATE otherwise.',
        params: onboardingParams,
        response: { 200: Envelope(OnboardingSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'SDK link expired',
        data: onboardingView(await expireOnboarding(tx, context, request.params.onboardingId)),
      })),
  );

  app.post(
    '/v1/sandbox/customers/:customerId/compliance-checks',
    {
      schema: {
        operationId: 'sandbox.forceComplianceChecks',
        tags,
        summary: 'Force one compliance check to pass or fail (sandbox)',
        description:
          'Holds until forced again. Data and document checks only (the verification is decided with the outcome control). ' +
          'May complete the onboarding. Returns the customer\'s compliance status (individual or business).',
        params: Type.Object({ customerId: Text.id() }),
        body: ForceCheckBody,
        response: { 200: Envelope(Type.Union([IndividualStatusSchema, BusinessStatusSchema])) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: `Check ${request.body.name} forced to ${request.body.passed ? 'pass' : 'fail'}`,
        data: await forceCheck(tx, context, runtime, request.params.customerId, request.body.name, request.body.passed),
      })),
  );
}
