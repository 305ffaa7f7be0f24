import type { SecurityCase } from './security/types.js';
import { platformSecurityCases } from './security/platform.js';
import { bankDirectorySecurityCases } from './security/bank-directory.js';
import { customerSecurityCases } from './security/customers.js';
import { ledgerSecurityCases } from './security/ledger.js';
import { webhookSecurityCases } from './security/webhooks.js';
import { complianceSecurityCases } from './security/compliance.js';
import { bankSecurityCases } from './security/bank.js';
import { sandboxClockSecurityCases, sandboxSeedingSecurityCases } from './security/sandbox-clock.js';
import { sandboxStateSecurityCases } from './security/sandbox-state.js';
import { sandboxWebhookFaultSecurityCases } from './security/sandbox-webhook-faults.js';
import { cardSecurityCases } from './security/cards.js';
import { vaultSecurityCases } from './security/vault.js';
import { cryptoSecurityCases } from './security/crypto.js';
import { cryptoTransactionSecurityCases } from './security/crypto-transactions.js';
import { sandboxPriceSecurityCases, tradeSecurityCases } from './security/trades.js';
import { creditSecurityCases } from './security/credit.js';
import { traceSecurityCases } from './security/traces.js';
import { apiKeySecurityCases } from './security/api-keys.js';

/** Every module adds its cases here (one import line each). */
export const securityCases: SecurityCase[] = [
  ...platformSecurityCases,
  ...bankDirectorySecurityCases,
  ...customerSecurityCases,
  ...ledgerSecurityCases,
  ...webhookSecurityCases,
  ...complianceSecurityCases,
  ...bankSecurityCases,
  ...sandboxClockSecurityCases,
  ...sandboxSeedingSecurityCases,
  ...sandboxStateSecurityCases,
  ...sandboxWebhookFaultSecurityCases,
  ...cardSecurityCases,
  ...vaultSecurityCases,
  ...cryptoSecurityCases,
  ...cryptoTransactionSecurityCases,
  ...tradeSecurityCases,
  ...sandboxPriceSecurityCases,
  ...creditSecurityCases,
  ...traceSecurityCases,
  ...apiKeySecurityCases,
];

/**
 * Authenticated routes that have no security case on purpose, each with the reason.
 * Keep this list short: a route here is not covered by the shared checks.
 */
export const securityExemptRoutes: Record<string, string> = {};
