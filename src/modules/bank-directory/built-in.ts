import crypto from 'node:crypto';
import routingData from './data/us-routing-numbers.json' with { type: 'json' };
import bicData from './data/bics.json' with { type: 'json' };
import ibanBankCodeData from './data/iban-bank-codes.json' with { type: 'json' };
import type { DirectoryKind } from './bank-directory.tables.js';
import type { AchRecord, BicRecord, DirectoryBatch, FedwireRecord, IbanBankCodeRecord } from './directory-records.js';

/**
 * The directory that ships with the program (src/modules/bank-directory/data), so validation
 * works offline out of the box: major US routing numbers, BICs of major banks worldwide, and
 * national bank codes found inside IBANs. Each kind is versioned by the hash of its records.
 */
function versionOf(records: unknown): string {
  return crypto.createHash('sha256').update(JSON.stringify(records)).digest('hex');
}

const achRecords: AchRecord[] = routingData.records
  .filter((record) => record.ach)
  .map((record) => ({
    routingNumber: record.routingNumber,
    bankName: record.bankName,
    address: record.address,
    city: record.city,
    state: record.state,
    zipCode: record.zipCode,
    phoneNumber: record.phoneNumber,
    newRoutingNumber: null,
  }));

const fedwireRecords: FedwireRecord[] = routingData.records
  .filter((record) => record.fedwire)
  .map((record) => ({
    routingNumber: record.routingNumber,
    telegraphicName: null,
    bankName: record.bankName,
    address: record.address,
    city: record.city,
    state: record.state,
    zipCode: record.zipCode,
    fundsTransferEligible: true,
    settlementOnly: false,
    bookEntrySecuritiesEligible: false,
    revisedOn: null,
  }));

const bicRecords: BicRecord[] = bicData.records.map((record) => ({ ...record }));
const ibanBankCodeRecords: IbanBankCodeRecord[] = ibanBankCodeData.records.map((record) => ({ ...record }));

export const builtInDirectory: { [K in DirectoryKind]: Extract<DirectoryBatch, { kind: K }> } = {
  FEDACH: { kind: 'FEDACH', records: achRecords, version: versionOf(achRecords), fileName: null },
  FEDWIRE: { kind: 'FEDWIRE', records: fedwireRecords, version: versionOf(fedwireRecords), fileName: null },
  BIC: { kind: 'BIC', records: bicRecords, version: versionOf(bicRecords), fileName: null },
  IBAN_BANK_CODE: { kind: 'IBAN_BANK_CODE', records: ibanBankCodeRecords, version: versionOf(ibanBankCodeRecords), fileName: null },
};
