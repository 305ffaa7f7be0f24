import type { Mode, OperatingBankConfig } from '../../platform/config.js';
import type { Tx } from '../../platform/db/transaction.js';
import { validationError } from '../../platform/http/errors.js';
import { requireAsset, type Asset } from '../../platform/money/assets.js';
import type { BankRail } from './bank-rail.js';
import { bankAssets } from './bank-transfer.js';
import type { TransferNetwork } from './withdrawal-rules.js';

/** A saved counterparty, as a withdrawal with counterpartyId reads it (the counterparties module supplies it). */
export interface SavedCounterparty {
  id: string;
  customerId: string;
  portfolioId: string;
  transferNetwork: TransferNetwork;
  accountHolderName: string;
  routingNumber: string | null;
  bicSwiftCode: string | null;
  accountNumberValue: string | null;
  street1: string | null;
  street2: string | null;
  cityCounty: string | null;
  stateRegion: string | null;
  zip: string | null;
  countryCode: string | null;
}

export type FindCounterparty = (tx: Tx, clientId: string, counterpartyId: string) => Promise<SavedCounterparty | undefined>;

/** What the bank transfer services need from the outside, wired once by the app. */
export interface BankTransferRuntime {
  mode: Mode;
  rail: BankRail;
  operatingBank: OperatingBankConfig;
  findCounterparty: FindCounterparty;
  /** The key of the permutation that hides the shared ACH and Fedwire serial (end-to-end-id.ts). */
  serialKey: Buffer;
}

/** The asset of a bank payment: USD, and USD_TEST in the sandbox (400 for any other). */
export function requireBankAsset(code: string, mode: Mode, field = 'asset'): Asset {
  // An unknown code is offered the bank's assets, not every asset (until 2026-12-02 "usd" was
  // offered EUR, BTC and the rest, which the check below refuses; found by an audit).
  const asset = requireAsset(code, mode, field, mode === 'sandbox' ? bankAssets : ['USD']);
  if (!(bankAssets as readonly string[]).includes(asset.code)) {
    throw validationError(field, `bank transfers move ${mode === 'sandbox' ? 'USD or USD_TEST' : 'USD'} only; got ${asset.code}`);
  }
  return asset;
}
