/**
 * Cards (issue 18): card programs, debit cards and their vault. Other modules use cards only
 * through this file. The sandbox card network's message layer is in ./network/.
 */
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import type { Metrics } from '../../platform/http/metrics.js';
import { registerCardRoutes } from './cards.routes.js';
import { registerCardTransactionRoutes } from './processor/card-transactions.routes.js';
import { registerSandboxCardNetworkRoutes } from './sandbox/card-network.routes.js';
import { registerSandboxCoopEchoRoutes } from './sandbox/coop-echo.routes.js';

export function registerCardsModuleRoutes(app: App, deps: Deps, metrics: Metrics): void {
  registerCardRoutes(app, deps);
  registerCardTransactionRoutes(app, deps);
  if (deps.config.mode === 'sandbox') registerSandboxCardNetworkRoutes(app, deps, metrics);
  if (deps.config.mode === 'sandbox') registerSandboxCoopEchoRoutes(app, deps);
}

export { processCardMessage, finishCoopDecision, isCoopDecisionStep, cardHoldExpiryTimer, cardCoopDecisionTimer, type CardMessageOutcome, type CardMessageStep } from './processor/processor.js';
export type { FundingSource } from './processor/funding-source.js';

export { seedCardPrograms, seedMissingCardPrograms, defaultCardPrograms, findCardProgram, listCardPrograms, type CardProgramRow } from './programs.js';
export { createDebitCard, findCard, cardView, type CardRow, type CardViewType } from './cards.service.js';
export { cardVaultOf, CardVault } from './card-vault.js';
export { mccIn, type CoopAuthSettings, type HoldExpirySettings, type LimitSettings, type OverCaptureSettings } from './program-settings.js';
export type { CardStatus, CardType, CardTransactionHandler, CardNetwork } from './cards.tables.js';
