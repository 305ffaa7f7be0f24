/**
 * The sandbox identity vendor: provider implementation, hosted verification page and controls.
 */
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import type { ComplianceRuntime } from '../../compliance/index.js';
import { registerComplianceControlRoutes } from './compliance-controls.routes.js';
import { registerHostedPageRoutes } from './hosted-page.routes.js';

export { SandboxIdentityProvider, hashSdkToken, hostedKycPathPrefix, magicLastNames, magicLegalNameWords, sandboxOutcomeFor } from './sandbox-identity-provider.js';

/** The hosted page and the /v1/sandbox controls: call only in sandbox mode. */
export function registerSandboxIdentityRoutes(app: App, deps: Deps, runtime: ComplianceRuntime): void {
  registerHostedPageRoutes(app, deps, runtime);
  registerComplianceControlRoutes(app, deps, runtime);
}
