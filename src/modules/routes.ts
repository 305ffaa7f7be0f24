import type { App } from '../platform/http/app-type.js';
import { readBatchConcurrency, type Deps } from '../platform/deps.js';
import type { ClientSeeder } from '../platform/deps.js';
import type { Config } from '../platform/config.js';
import type { Metrics } from '../platform/http/metrics.js';
import { derivedKey, encryptionKeyOf } from '../platform/crypto/field-cipher.js';
import { registerAssetRoutes } from './assets/index.js';
import { registerApiKeyRoutes } from './tenants/index.js';
import { checkOperatingBank, registerBankAccountRoutes, type AccountNumberSerialKeys } from './bank-accounts/index.js';
import { registerBankTransferRoutes, unconnectedBankRail, type BankTransferRuntime } from './bank-transfers/index.js';
import { findSavedCounterparty, registerCounterpartyRoutes } from './counterparties/index.js';
import { SandboxBankRail, registerSandboxBankRoutes } from './sandbox/bank/index.js';
import { registerBankDirectoryRoutes } from './bank-directory/index.js';
import { identityChanging, reevaluateOnboarding, registerComplianceModuleRoutes, type ComplianceRuntime } from './compliance/index.js';
import { registerCardsModuleRoutes, seedCardPrograms } from './cards/index.js';
import { registerCustomersModuleRoutes, seedMembershipPrograms } from './customers/index.js';
import { registerVaultRoutes } from './vault/index.js';
import { cryptoNetworkOverrides, mineDueBlocks, registerCryptoRoutes, registerCryptoTransferRoutes, registerSandboxCryptoRoutes } from './crypto/index.js';
import { SandboxIdentityProvider, registerSandboxIdentityRoutes } from './sandbox/identity/index.js';
import { registerVirtualAccountRoutes } from './virtual-accounts/index.js';
import { registerEventRoutes, registerWebhookFaultRoutes, registerWebhookRoutes } from './webhooks/index.js';
import { registerInternalTransferRoutes, walletExists, walletsExist } from './internal-transfers/index.js';
import { registerWalletBalanceRoutes } from './ledger/index.js';
import { registerTransactionRoutes } from './transactions/index.js';
import { registerSandboxClockRoutes } from './sandbox/clock/index.js';
import { registerSandboxSeedingRoutes } from './sandbox/seeding/index.js';
import { registerSandboxStateRoutes } from './sandbox/state/index.js';
import { DatabasePriceProvider, PriceChangedHooks, registerSandboxPriceRoutes, registerTradeRoutes, unconnectedPriceFeed } from './trades/index.js';
import { timerKinds } from './timer-kinds.js';
import { creditPriceChangedHook, registerCreditLineRoutes } from './credit/index.js';
import { registerTraceRoutes } from './traces/index.js';
import { registerConsoleRoutes } from './console/index.js';

/**
 * The settings the modules check themselves, as their routes are registered (the operating bank's
 * routing numbers and BICs; the crypto networks' confirmations and withdrawal fees), checked
 * before `serve` opens its database: a start refused for one makes nothing. Until 2026-12-07 they
 * were checked only by buildApp, after the first start had made the sandbox client, whose key
 * was then printed above the setting's error (found by an audit).
 */
export function checkModuleSettings(config: Config): void {
  checkOperatingBank(config.operatingBank);
  cryptoNetworkOverrides(config.cryptoConfirmations, config.cryptoWithdrawalFees);
}

/** Every module's routes, registered once by buildApp. */
export function registerModuleRoutes(app: App, deps: Deps, metrics: Metrics): void {
  registerAssetRoutes(app, deps);
  registerApiKeyRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerBankDirectoryRoutes(app, deps);
  const compliance = complianceRuntime(deps);
  // A customer PATCH or a related person written may complete the customer's running onboarding;
  // identity data changed under a verification's verdict is reviewed again.
  registerCustomersModuleRoutes(app, deps, {
    customerChanged: async (tx, context, customerId) => void (await reevaluateOnboarding(tx, context, compliance, customerId)),
    identityChanging,
  });
  registerComplianceModuleRoutes(app, deps, compliance);
  registerVirtualAccountRoutes(app, deps, compliance.virtualAccountSerialKey);
  if (deps.config.mode === 'sandbox') registerSandboxIdentityRoutes(app, deps, compliance);
  registerInternalTransferRoutes(app, deps, walletsExist, metrics);
  registerWalletBalanceRoutes(app, deps, walletExists);
  registerTransactionRoutes(app, deps, walletExists);
  registerTraceRoutes(app, deps);
  const bankTransfers = bankTransferRuntime(deps);
  registerBankAccountRoutes(app, deps, accountNumberSerialKeys(deps));
  registerCounterpartyRoutes(app, deps);
  registerBankTransferRoutes(app, deps, bankTransfers);
  registerCardsModuleRoutes(app, deps, metrics);
  registerVaultRoutes(app, deps);
  registerCryptoRoutes(app, deps);
  registerCryptoTransferRoutes(app, deps);
  if (deps.config.mode === 'sandbox') registerSandboxBankRoutes(app, deps, bankTransfers);
  if (deps.config.mode === 'sandbox') registerSandboxCryptoRoutes(app, deps);
  if (deps.config.mode === 'sandbox') {
    // The sandbox chains mine the blocks an advance covers before it answers (CONTRACT §13), as the timers run.
    const blockSeconds = deps.config.sandboxBlockSeconds;
    registerSandboxClockRoutes(app, deps, timerKinds, blockSeconds > 0 ? [(clientId) => mineDueBlocks(deps, blockSeconds, { clientId })] : []);
  }
  if (deps.config.mode === 'sandbox') registerSandboxSeedingRoutes(app, deps, { compliance, bank: bankTransfers });
  if (deps.config.mode === 'sandbox') registerSandboxStateRoutes(app, deps);
  if (deps.config.mode === 'sandbox') registerWebhookFaultRoutes(app, deps);
  // One registry per application; capabilities that follow prices (credit lines) register their hooks here.
  const priceChangedHooks = new PriceChangedHooks();
  // A collateral price change recomputes every credit line on that asset in the same transaction.
  priceChangedHooks.register('credit-lines', creditPriceChangedHook);
  registerCreditLineRoutes(app, deps);
  const sandboxPrices = deps.config.mode === 'sandbox' ? new DatabasePriceProvider(deps.db, priceChangedHooks, readBatchConcurrency(deps)) : undefined;
  registerTradeRoutes(app, deps, { mode: deps.config.mode, prices: sandboxPrices ?? unconnectedPriceFeed, quoteTtlSeconds: deps.config.quoteTtlSeconds, spreadBps: deps.config.tradeSpreadBps }, metrics);
  if (sandboxPrices) registerSandboxPriceRoutes(app, deps, sandboxPrices);
  registerConsoleRoutes(app, deps);
}

/** The payment rail: the sandbox rail in sandbox mode; production has no rail connected yet (payments wait for an outcome). */
export function bankTransferRuntime(deps: Deps): BankTransferRuntime {
  return {
    mode: deps.config.mode,
    rail: deps.config.mode === 'sandbox' ? new SandboxBankRail(deps.config.sandboxBankSettlementDelayMs) : unconnectedBankRail,
    operatingBank: deps.config.operatingBank,
    findCounterparty: findSavedCounterparty,
    serialKey: derivedKey(encryptionKeyOf(deps), 'bank-trace-serial'),
  };
}

/**
 * The identity vendor: the sandbox one in sandbox mode; production ships none (EXTERNAL strategy
 * only). And the key of virtual account serials, for the number an approval gives.
 */
export function complianceRuntime(deps: Deps): ComplianceRuntime {
  return {
    provider:
      deps.config.mode === 'sandbox'
        ? new SandboxIdentityProvider({ publicBaseUrl: deps.config.publicBaseUrl, linkTtlMs: deps.config.kycLinkTtlMs })
        : undefined,
    virtualAccountSerialKey: virtualAccountSerialKey(deps),
  };
}

/**
 * The keys of the permutations that hide the shared sequences behind wallet account numbers
 * (virtual account numbers, dedicated account numbers and VRNs), derived from the encryption key.
 * One key per kind: with a single key, numbers drawn at the same position of their sequences
 * would share their nine middle digits (a new installation's first wallet would get 70x…, 71x…
 * and 72x… alike), telling a client how far the sequences stand from each other; separate keys
 * cost nothing.
 */
export function virtualAccountSerialKey(deps: Deps): Buffer {
  return derivedKey(encryptionKeyOf(deps), 'account-number-serial/VIRTUAL');
}

/** The keys of dedicated account number and VRN serials (see virtualAccountSerialKey). */
export function accountNumberSerialKeys(deps: Deps): AccountNumberSerialKeys {
  return {
    DEDICATED: derivedKey(encryptionKeyOf(deps), 'account-number-serial/DEDICATED'),
    VRN: derivedKey(encryptionKeyOf(deps), 'account-number-serial/VRN'),
  };
}

/** Work every module does when a client is created (default programs and so on). */
export const clientSeeders: readonly ClientSeeder[] = [seedMembershipPrograms, seedCardPrograms];
