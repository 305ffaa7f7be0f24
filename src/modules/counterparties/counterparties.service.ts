import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { isCountryCode } from '../bank-directory/index.js';
import {
  assertNoViolations,
  checkCounterpartyInput,
  checkNamesAndAddresses,
  nameAndAddressFields,
  normalizeAccountNumber,
  resolveBank,
  type FindCounterparty,
  type RuleViolation,
  type SavedCounterparty,
  type TransferNetwork,
} from '../bank-transfers/index.js';
import { getPortfolio } from '../customers/index.js';
import * as store from './counterparties.store.js';

type Queryable = Db | Tx;

/** The most counterparties one portfolio may hold. */
export const counterpartiesPerPortfolioMax = 1000;

/** Fields a client sends; null clears an optional field on update. */
export interface CounterpartyInput {
  transferNetwork?: TransferNetwork | undefined;
  name?: string | null | undefined;
  accountHolderName?: string | undefined;
  routingNumber?: string | null | undefined;
  bicSwiftCode?: string | null | undefined;
  accountNumberValue?: string | null | undefined;
  countryCode?: string | null | undefined;
  street1?: string | null | undefined;
  street2?: string | null | undefined;
  cityCounty?: string | null | undefined;
  stateRegion?: string | null | undefined;
  zip?: string | null | undefined;
}

export interface CounterpartyView {
  id: string;
  customerId: string;
  portfolioId: string;
  transferNetwork: TransferNetwork;
  name: string | null;
  accountHolderName: string;
  routingNumber: string | null;
  bicSwiftCode: string | null;
  accountNumberValue: string | null;
  countryCode: string | null;
  street1: string | null;
  street2: string | null;
  cityCounty: string | null;
  stateRegion: string | null;
  zip: string | null;
  bankName: string;
  bankCity: string | null;
  bankState: string | null;
  bankCountry: string;
  createdAt: string;
  updatedAt: string;
}

export function counterpartyView(row: store.CounterpartyRow): CounterpartyView {
  return {
    id: row.id,
    customerId: row.customer_id,
    portfolioId: row.portfolio_id,
    transferNetwork: row.transfer_network,
    name: row.name,
    accountHolderName: row.account_holder_name,
    routingNumber: row.routing_number,
    bicSwiftCode: row.bic_swift_code,
    accountNumberValue: row.account_number_value,
    countryCode: row.country_code,
    street1: row.street1,
    street2: row.street2,
    cityCounty: row.city_county,
    stateRegion: row.state_region,
    zip: row.zip,
    bankName: row.bank_name,
    bankCity: row.bank_city,
    bankState: row.bank_state,
    bankCountry: row.bank_country,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

interface Resolved {
  transferNetwork: TransferNetwork;
  routingNumber: string | null;
  bicSwiftCode: string | null;
  accountNumberValue: string | null;
  countryCode: string | null;
}

/** The fields of a counterparty that name or locate the beneficiary, checked as a withdrawal's are. */
type NamesAndAddress = Pick<CounterpartyInput, 'name' | 'accountHolderName' | 'street1' | 'street2' | 'cityCounty' | 'stateRegion' | 'zip'>;

/**
 * The counterparty's rules, first failing step wins: the bank identifier per transferNetwork
 * (the specification's table) and the account number or IBAN, plus the country code and the name
 * and address fields sent (no control or format characters, not blank); then the bank directory
 * (404 BANK_NOT_FOUND for an unknown routing number or BIC, 400 ROUTING_NUMBER_NOT_ELIGIBLE when
 * the bank does not take the network's payments). The bank's name, city, state and country are
 * stored from the directory.
 */
async function validate(tx: Tx, resolved: Resolved, text: NamesAndAddress) {
  const violations: RuleViolation[] = checkCounterpartyInput(resolved);
  if (resolved.countryCode !== null && !isCountryCode(resolved.countryCode)) {
    violations.push({ code: 'VALIDATION_ERROR', field: 'countryCode', message: 'must be an ISO 3166-1 alpha-2 country code in capitals, such as US' });
  }
  violations.push(...checkNamesAndAddresses(text, [...nameAndAddressFields, 'accountHolderName']));
  assertNoViolations(violations);
  return resolveBank(tx, resolved.transferNetwork, resolved);
}

/** An IBAN is stored in its electronic form (upper case, no spaces), as the BIC is upper-cased. */
function accountNumberOrNull(value: string | null): string | null {
  return value === null ? null : normalizeAccountNumber(value);
}

/**
 * The BIC in capitals, ASCII letters only: Unicode case mapping turns some other characters into
 * ASCII letters (the ligature U+FB00 into FF, the dotless i into I, ß into SS), so a code sent with
 * them would pass the check as one the client never sent and be stored so; kept as sent, checkBic
 * refuses them (400 INVALID_SWIFT_CODE). Until 2026-12-05 counterparties upper-cased first (found
 * by an audit; the validation endpoint and withdrawals were fixed on 2026-12-02).
 */
function upperOrNull(value: string | null | undefined): string | null {
  return value === undefined || value === null ? null : value.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}

async function requireCounterparty(db: Queryable, clientId: string, customerId: string, portfolioId: string, counterpartyId: string, lock: Tx | undefined) {
  const portfolio = await getPortfolio(db, clientId, customerId, portfolioId);
  const row = isUuid(counterpartyId)
    ? lock
      ? await store.lockCounterparty(lock, clientId, counterpartyId)
      : await store.findCounterparty(db, clientId, counterpartyId)
    : undefined;
  if (!row || row.customer_id !== portfolio.customerId || row.portfolio_id !== portfolio.id) throw notFound('Counterparty');
  return row;
}

export async function createCounterparty(
  tx: Tx,
  context: RequestContext,
  customerId: string,
  portfolioId: string,
  input: CounterpartyInput & { transferNetwork: TransferNetwork; accountHolderName: string },
): Promise<CounterpartyView> {
  const portfolio = await getPortfolio(tx, context.clientId, customerId, portfolioId);
  await store.lockPortfolioCounterparties(tx, context.clientId, portfolio.id);
  if ((await store.countCounterpartiesOfPortfolio(tx, context.clientId, portfolio.id)) >= counterpartiesPerPortfolioMax) {
    throw new AppError('RESOURCE_LIMIT_REACHED', `A portfolio can hold at most ${counterpartiesPerPortfolioMax} counterparties; delete one first.`);
  }
  const resolved: Resolved = {
    transferNetwork: input.transferNetwork,
    routingNumber: input.routingNumber ?? null,
    bicSwiftCode: upperOrNull(input.bicSwiftCode),
    accountNumberValue: input.accountNumberValue ?? null,
    countryCode: input.countryCode ?? null,
  };
  const bank = await validate(tx, resolved, input);
  const row: store.CounterpartyRow = {
    client_id: context.clientId,
    id: idAt(context.now),
    customer_id: portfolio.customerId,
    portfolio_id: portfolio.id,
    transfer_network: resolved.transferNetwork,
    name: input.name ?? null,
    account_holder_name: input.accountHolderName,
    routing_number: resolved.routingNumber,
    bic_swift_code: resolved.bicSwiftCode,
    account_number_value: accountNumberOrNull(resolved.accountNumberValue),
    country_code: resolved.countryCode,
    street1: input.street1 ?? null,
    street2: input.street2 ?? null,
    city_county: input.cityCounty ?? null,
    state_region: input.stateRegion ?? null,
    zip: input.zip ?? null,
    bank_name: bank.bankName,
    bank_city: bank.bankCity,
    bank_state: bank.bankState,
    bank_country: bank.bankCountry,
    created_at: context.now,
    updated_at: context.now,
  };
  await store.insertCounterparty(tx, row);
  return counterpartyView(row);
}

/**
 * A partial update: fields left out keep their value, null clears an optional one. The merged
 * counterparty is checked as a whole, so changing transferNetwork to a network that takes the
 * other bank identifier needs that identifier, and null for the old one.
 */
export async function updateCounterparty(
  tx: Tx,
  context: RequestContext,
  customerId: string,
  portfolioId: string,
  counterpartyId: string,
  input: CounterpartyInput,
): Promise<CounterpartyView> {
  const current = await requireCounterparty(tx, context.clientId, customerId, portfolioId, counterpartyId, tx);
  const pick = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  const resolved: Resolved = {
    transferNetwork: pick(input.transferNetwork, current.transfer_network),
    routingNumber: pick(input.routingNumber, current.routing_number),
    bicSwiftCode: input.bicSwiftCode === undefined ? current.bic_swift_code : upperOrNull(input.bicSwiftCode),
    accountNumberValue: pick(input.accountNumberValue, current.account_number_value),
    countryCode: pick(input.countryCode, current.country_code),
  };
  const bank = await validate(tx, resolved, input);
  const row: store.CounterpartyRow = {
    ...current,
    transfer_network: resolved.transferNetwork,
    name: pick(input.name, current.name),
    account_holder_name: pick(input.accountHolderName, current.account_holder_name),
    routing_number: resolved.routingNumber,
    bic_swift_code: resolved.bicSwiftCode,
    account_number_value: accountNumberOrNull(resolved.accountNumberValue),
    country_code: resolved.countryCode,
    street1: pick(input.street1, current.street1),
    street2: pick(input.street2, current.street2),
    city_county: pick(input.cityCounty, current.city_county),
    state_region: pick(input.stateRegion, current.state_region),
    zip: pick(input.zip, current.zip),
    bank_name: bank.bankName,
    bank_city: bank.bankCity,
    bank_state: bank.bankState,
    bank_country: bank.bankCountry,
    updated_at: context.now,
  };
  const { client_id: _client, id: _id, customer_id: _customer, portfolio_id: _portfolio, created_at: _created, ...changes } = row;
  await store.updateCounterparty(tx, context.clientId, current.id, changes);
  return counterpartyView(row);
}

/** Deletes the saved counterparty. Withdrawals made to it keep their own copy of the beneficiary. */
export async function deleteCounterparty(tx: Tx, context: RequestContext, customerId: string, portfolioId: string, counterpartyId: string): Promise<CounterpartyView> {
  const current = await requireCounterparty(tx, context.clientId, customerId, portfolioId, counterpartyId, tx);
  await store.deleteCounterparty(tx, context.clientId, current.id);
  return counterpartyView(current);
}

export async function getCounterparty(db: Db, clientId: string, customerId: string, portfolioId: string, counterpartyId: string): Promise<CounterpartyView> {
  return counterpartyView(await requireCounterparty(db, clientId, customerId, portfolioId, counterpartyId, undefined));
}

export async function listCounterparties(
  db: Db,
  clientId: string,
  customerId: string,
  portfolioId: string,
  list: ListQuery & { transferNetwork?: TransferNetwork | undefined },
): Promise<{ data: CounterpartyView[]; pagination: Pagination }> {
  const portfolio = await getPortfolio(db, clientId, customerId, portfolioId);
  let query = store.counterpartiesOfPortfolio(db, clientId, portfolio.id);
  if (list.transferNetwork !== undefined) query = query.where('transfer_network', '=', list.transferNetwork);
  const { rows, pagination } = await paginate(db, query, list, { id: 'id', createdAt: 'created_at' });
  return { data: rows.map(counterpartyView), pagination };
}

/** The lookup a withdrawal with counterpartyId uses (wired into the bank-transfers module). */
export const findSavedCounterparty: FindCounterparty = async (tx, clientId, counterpartyId): Promise<SavedCounterparty | undefined> => {
  if (!isUuid(counterpartyId)) return undefined;
  const row = await store.findCounterparty(tx, clientId, counterpartyId);
  if (!row) return undefined;
  return {
    id: row.id,
    customerId: row.customer_id,
    portfolioId: row.portfolio_id,
    transferNetwork: row.transfer_network,
    accountHolderName: row.account_holder_name,
    routingNumber: row.routing_number,
    bicSwiftCode: row.bic_swift_code,
    accountNumberValue: row.account_number_value,
    street1: row.street1,
    street2: row.street2,
    cityCounty: row.city_county,
    stateRegion: row.state_region,
    zip: row.zip,
    countryCode: row.country_code,
  };
};
