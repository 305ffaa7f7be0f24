import crypto from 'node:crypto';
import { fieldCipherOf } from '../../../platform/crypto/field-cipher.js';
import type { Deps } from '../../../platform/deps.js';
import type { Tx } from '../../../platform/db/transaction.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { assert } from '../../../platform/assert.js';
import { AppError } from '../../../platform/http/errors.js';
import { parseAmount } from '../../../platform/money/amount.js';
import { receiveDeposit, requireBankAsset, settleBankTransaction, type BankTransferRuntime } from '../../bank-transfers/index.js';
import { completeKycInSandbox, startKyc, type ComplianceRuntime } from '../../compliance/index.js';
import { createIndividual, primaryWalletOf } from '../../customers/index.js';

/** The most customers one seeding call creates (it runs in one transaction). */
export const seedCountMax = 100;

const firstNames = ['Ada', 'Grace', 'Alan', 'Katherine', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Claude', 'Hedy'];
const lastNames = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Shannon', 'Lamarr'];

export interface SeedRequest {
  count: number;
  /** Decimal string in the asset's scale; absent: the wallets stay empty. */
  fundAmount: string | undefined;
  asset: string;
}

export interface SeededCustomer {
  customerId: string;
  onboardingId: string;
  walletId: string;
  virtualAccountNumber: string;
  funded: { amount: string; asset: string } | null;
}

/**
 * Sandbox seeding for demos and tests: `count` individuals, each with the KYC approved in one step
 * (as `completeKycInSandbox`: the verification approved and the required documents put on file),
 * a primary wallet with its virtual account, and, when `fundAmount` is given, a deposit to that
 * account settled at once. Everything goes through the same services as the API (events included:
 * CUSTOMER_CREATED, the CUSTOMER_KYC_* events, VIRTUAL_ACCOUNT_CREATED, the BANK_DEPOSIT_* events),
 * in the caller's one transaction.
 */
export async function seedCustomers(
  tx: Tx,
  context: RequestContext,
  deps: Deps,
  runtimes: { compliance: ComplianceRuntime; bank: BankTransferRuntime },
  request: SeedRequest,
): Promise<SeededCustomer[]> {
  // Both checked before anything is created; the asset even without fundAmount (a wrong one is a
  // mistake either way).
  const asset = requireBankAsset(request.asset, runtimes.bank.mode, 'asset');
  const { fundAmount } = request;
  if (fundAmount !== undefined) parseAmount(fundAmount, asset, 'fundAmount');
  const cipher = fieldCipherOf(deps);
  const seeded: SeededCustomer[] = [];
  for (let index = 0; index < request.count; index++) {
    const firstName = firstNames[index % firstNames.length] ?? 'Ada';
    const lastName = lastNames[Math.floor(index / firstNames.length) % lastNames.length] ?? 'Lovelace';
    const customer = await createIndividual(tx, context, cipher, {
      email: `${firstName}.${lastName}.${crypto.randomBytes(4).toString('hex')}@example.com`.toLowerCase(),
      phoneNumber: '212 555 0123',
      phoneCountryCode: '+1',
      kyc: {
        firstName,
        lastName,
        birthDate: '1990-12-10',
        nationality: 'US',
        documentSsn: `123-45-${String(1000 + (index % 9000)).padStart(4, '0')}`,
        mainAddress: { street1: '350 Fifth Avenue', cityCounty: 'New York', stateRegion: 'NY', zip: '10118', countryCode: 'US' },
        taxIdCountry: 'US',
        occupation: '15',
      },
    });
    const started = await startKyc(tx, context, runtimes.compliance, customer.id);
    const onboarding = await completeKycInSandbox(tx, context, runtimes.compliance, started.onboardingId);
    const wallet = await primaryWalletOf(tx, context.clientId, customer.id);
    if (onboarding.status !== 'APPROVED') {
      // The one-call sandbox KYC puts on file what the STANDARD strategy needs; another strategy (or
      // a setting that asks for more) leaves the onboarding short of APPROVED. Nothing is kept.
      throw new AppError(
        'INVALID_STATE',
        `Seeding approves customers with the sandbox's one-call KYC, which is enough for the STANDARD onboarding strategy; under this client's compliance settings the onboarding stays ${onboarding.status} (GET /v1/compliance/status/:customerId names what is missing). Set onboardingStrategy to STANDARD (PATCH /v1/compliance/settings) to seed, or create and verify customers one by one.`,
      );
    }
    assert(wallet?.virtual_account_number, `the seeded customer ${customer.id} was approved without a virtual account`);
    let funded: SeededCustomer['funded'] = null;
    if (fundAmount !== undefined) {
      const deposit = await receiveDeposit(
        tx,
        context,
        {
          accountNumber: wallet.virtual_account_number,
          amount: fundAmount,
          asset: asset.code,
          network: 'ACH',
          counterparty: { name: 'OpenBaaS Sandbox Seeding', accountNumber: '987654321', routingNumber: '021000021' },
          memo: 'Sandbox seeding',
        },
        runtimes.bank,
      );
      assert(deposit.routed, `the seeding deposit to ${wallet.virtual_account_number} was not routed`);
      await settleBankTransaction(tx, context, deposit.transaction.id);
      funded = { amount: fundAmount, asset: asset.code };
    }
    seeded.push({ customerId: customer.id, onboardingId: onboarding.id, walletId: wallet.id, virtualAccountNumber: wallet.virtual_account_number, funded });
  }
  return seeded;
}
