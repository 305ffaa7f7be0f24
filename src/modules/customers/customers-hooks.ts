import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';

/**
 * Called in the transaction of every customer write that can change what a running onboarding
 * checks: a customer PATCH (the customer's id) and a related person added, changed or removed
 * (the business's id). The compliance module, which depends on this one, plugs its re-evaluation
 * in here (src/modules/routes.ts), so that such a write can be what completes an onboarding.
 */
export type CustomerChanged = (tx: Tx, context: RequestContext, customerId: string) => Promise<void>;

/**
 * Called in a customer PATCH's transaction before it changes identity data (an individual's
 * verified kyc fields, a business's kyb block) that the onboarding status still allows to change
 * (no onboarding yet, or one PENDING or PROCESSING). The compliance module plugs in what the
 * identity provider's verdict needs: the data goes back to review.
 */
export type IdentityChanging = (tx: Tx, context: RequestContext, customerId: string) => Promise<void>;

export interface CustomersHooks {
  customerChanged?: CustomerChanged;
  identityChanging?: IdentityChanging;
}
