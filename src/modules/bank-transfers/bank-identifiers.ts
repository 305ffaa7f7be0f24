import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import { AppError } from '../../platform/http/errors.js';
import { validateRoutingNumber, validateSwiftCode } from '../bank-directory/index.js';
import { railOf, type TransferNetwork } from './withdrawal-rules.js';

/** The bank behind a routing number or BIC, as the directory describes it. */
export interface BankOfAccount {
  bankName: string;
  bankAddress: string | null;
  bankCity: string | null;
  bankState: string | null;
  /** ISO 3166-1 alpha-2. */
  bankCountry: string;
}

export interface IdentifierFields {
  routingNumber: string;
  bicSwiftCode: string;
}

/**
 * Looks the bank up in the directory for a network whose input rules already passed (so the
 * identifier the network needs is present and well-formed): the routing number on ACH and
 * FEDWIRE_DOMESTIC, the BIC on FEDWIRE_CROSSBORDER and SWIFT. An unknown identifier answers 404
 * BANK_NOT_FOUND, as the validation endpoints do. A known routing number must also take the
 * network's payments: ACH entries on ACH networks, Fedwire funds transfers on FEDWIRE_DOMESTIC
 * (400 ROUTING_NUMBER_NOT_ELIGIBLE; the message suggests the other network only when the bank
 * takes it).
 */
export async function resolveBank(
  db: Db | Tx,
  network: TransferNetwork,
  identifiers: { routingNumber?: string | null | undefined; bicSwiftCode?: string | null | undefined },
  fields: IdentifierFields = { routingNumber: 'routingNumber', bicSwiftCode: 'bicSwiftCode' },
): Promise<BankOfAccount> {
  if (network === 'FEDWIRE_CROSSBORDER' || network === 'SWIFT') {
    const bank = await validateSwiftCode(db, identifiers.bicSwiftCode ?? '', fields.bicSwiftCode);
    return { bankName: bank.bankName, bankAddress: bank.address, bankCity: bank.city, bankState: null, bankCountry: bank.countryCode };
  }
  const routingNumber = identifiers.routingNumber ?? '';
  const bank = await validateRoutingNumber(db, routingNumber, fields.routingNumber);
  const rail = railOf[network];
  const bankOf = `${bank.bankName} (${routingNumber})`;
  // The message names the other network only when the bank takes it: a bank in neither
  // directory's eligible set (a settlement-only Fedwire participant, say) was sent back and forth.
  if (!bank.supportsAch && !bank.supportsFedwire) {
    throw notEligible(
      fields.routingNumber,
      `${bankOf} takes neither ACH entries nor Fedwire funds transfers (it is not in the FedACH directory, and the Fedwire directory lists it as settlement-only or not eligible for funds transfers); check the routing number with the beneficiary`,
    );
  }
  if (rail === 'ACH' && !bank.supportsAch) {
    // Cross-border, FEDWIRE_DOMESTIC is no way out (it refuses an account abroad): the networks
    // for one name the bank by its BIC (until 2026-12-07 FEDWIRE_DOMESTIC was suggested there too,
    // which refused the same payment; found by an audit).
    const instead =
      network === 'ACH_CROSSBORDER'
        ? 'send the payment by SWIFT or FEDWIRE_CROSSBORDER, which name the bank by its BIC'
        : 'send the payment by FEDWIRE_DOMESTIC';
    throw notEligible(fields.routingNumber, `${bankOf} does not take ACH entries (it is not in the FedACH directory); ${instead}`);
  }
  if (rail === 'FEDWIRE' && !bank.supportsFedwire) {
    throw notEligible(fields.routingNumber, `${bankOf} cannot receive Fedwire funds transfers; send the payment by ACH_DOMESTIC`);
  }
  return { bankName: bank.bankName, bankAddress: bank.address, bankCity: bank.city, bankState: bank.state, bankCountry: 'US' };
}

function notEligible(field: string, message: string): AppError {
  return new AppError('ROUTING_NUMBER_NOT_ELIGIBLE', `${field}: ${message}.`, { details: [{ field, message }] });
}
