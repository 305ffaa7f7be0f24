/**
 * Public surface of the compliance module: other modules import only from here.
 */
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import type { ComplianceRuntime } from './compliance.service.js';
import { registerComplianceRoutes } from './routes/compliance.routes.js';
import { registerDocumentRoutes } from './routes/documents.routes.js';

export function registerComplianceModuleRoutes(app: App, deps: Deps, runtime: ComplianceRuntime): void {
  registerComplianceRoutes(app, deps, runtime);
  registerDocumentRoutes(app, deps, runtime);
}

export * from './onboarding.js';
export { complianceEventPayloads, KycEventPayload, KycRestartedPayload, KycErrorPayload, KybEventPayload, VirtualAccountCreatedPayload } from './compliance.events.js';
export type { IdentityVerificationProvider, PersonToVerify, VerificationSession, BusinessReviewInput, BusinessReviewDecision } from './identity-provider.js';
export {
  applyVerificationOutcome,
  startKyc,
  expireDueLinks,
  completeKycInSandbox,
  linkExpiryTimer,
  expireIfDue,
  expireOnboarding,
  findByTokenHash,
  forceCheck,
  individualStatus,
  reevaluate as reevaluateOnboarding,
  identityChanging,
  onboardingView,
  type ComplianceRuntime,
  type OutcomeDetails,
} from './compliance.service.js';
export { OnboardingSchema, OutcomeBody, ForceCheckBody, IndividualStatusSchema, BusinessStatusSchema } from './routes/schemas.js';
