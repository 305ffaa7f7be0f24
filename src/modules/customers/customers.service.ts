import { sql } from 'kysely';
import type { Static } from 'typebox';
import type { Db } from '../../platform/db/database.js';
import { sqlStateOf, type Tx } from '../../platform/db/transaction.js';
import type { FieldCipher } from '../../platform/crypto/field-cipher.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { recordEvent } from '../webhooks/index.js';
import {
  assertKycEditable,
  maskDocumentNumber,
  maskSsn,
  normaliseAddress,
  normaliseDocumentNumber,
  normaliseEmail,
  normalisePhone,
  normaliseSsn,
  parseCalendarDate,
  requireBirthDate,
  requireCountry,
  requireIpAddress,
  requireNaicsCode,
  requireText,
  requireWebsite,
  nameLengthMax,
  type AddressInput,
  type CustomerType,
} from './customer-rules.js';
import type { CustomerCreatedPayload } from './customers.events.js';
import type { IdentityChanging } from './customers-hooks.js';
import type { Address, StoredKyb } from './customers.tables.js';
import * as store from './customers.store.js';
import type {
  BusinessCreateBody,
  BusinessPatchBody,
  CustomerView,
  IndividualCreateBody,
  IndividualPatchBody,
  MembershipProgramView,
  PortfolioView,
  WalletView,
} from './routes/schemas.js';

export type CustomerViewData = Static<typeof CustomerView>;
export type PortfolioViewData = Static<typeof PortfolioView>;
export type WalletViewData = Static<typeof WalletView>;
type IndividualCreate = Static<typeof IndividualCreateBody>;
type IndividualPatch = Static<typeof IndividualPatchBody>;
type BusinessCreate = Static<typeof BusinessCreateBody>;
type BusinessPatch = Static<typeof BusinessPatchBody>;

type Queryable = Db | Tx;

export const defaultPortfolioName = 'Default';
export const primaryWalletName = 'Primary';
/** Named limits: a customer's portfolios and a portfolio's wallets. */
export const portfoliosPerCustomerMax = 20;
export const walletsPerPortfolioMax = 50;

// ---- membership programs ----

export const seededMembershipPrograms = [
  {
    name: 'Standard',
    isDefault: true,
    features: ['Virtual account for USD deposits', 'Debit cards', 'ACH and FedWire transfers', 'Internal transfers'],
  },
  {
    name: 'Premium',
    isDefault: false,
    features: [
      'Virtual account for USD deposits',
      'Debit and credit cards',
      'ACH, FedWire and SWIFT transfers',
      'Internal transfers',
      'Crypto deposits, withdrawals and trades',
      'Dedicated account numbers',
    ],
  },
] as const;

/** Client seeder: every client starts with the Standard (default) and Premium programs. */
export async function seedMembershipPrograms(tx: Tx, clientId: string, now: Date): Promise<void> {
  for (const program of seededMembershipPrograms) {
    await store.insertMembershipProgram(tx, {
      client_id: clientId,
      id: idAt(now),
      name: program.name,
      is_default: program.isDefault,
      features: JSON.stringify(program.features),
      created_at: now,
    });
  }
}

export async function listMembershipPrograms(db: Queryable, clientId: string): Promise<Array<Static<typeof MembershipProgramView>>> {
  const rows = await store.listMembershipPrograms(db, clientId);
  return rows.map((row) => ({ id: row.id, name: row.name, default: row.is_default, features: row.features }));
}

/** A program named by id or display name (case-insensitive); the client's default when omitted. */
async function resolveMembershipProgram(tx: Tx, clientId: string, reference: string | undefined): Promise<string> {
  if (reference === undefined) {
    const program = await store.findDefaultMembershipProgram(tx, clientId);
    if (!program) throw new Error(`client ${clientId} has no default membership program`);
    return program.id;
  }
  const program = isUuid(reference)
    ? await store.findMembershipProgram(tx, clientId, reference)
    : await store.findMembershipProgramByName(tx, clientId, reference.trim());
  if (!program) {
    const names = (await store.listMembershipPrograms(tx, clientId)).map((row) => row.name);
    throw validationError('membershipProgram', `is not a membership program of this client (known programs: ${names.join(', ')})`);
  }
  return program.id;
}

// ---- views ----

function boundTo(row: { client_id: string; id: string }, field: string): string {
  return `${row.client_id}:${row.id}:${field}`;
}

function decryptOrNull(cipher: FieldCipher, row: store.CustomerRow, value: string | null, field: string): string | null {
  return value === null ? null : cipher.decrypt(value, boundTo(row, field));
}

function walletView(row: store.WalletRow): WalletViewData {
  return {
    id: row.id,
    customerId: row.customer_id,
    portfolioId: row.portfolio_id,
    name: row.name,
    primary: row.is_primary,
    virtualAccount:
      row.virtual_account_number === null
        ? null
        : { virtualAccountNumber: row.virtual_account_number, dedicatedAccountNumber: row.dedicated_account_number, vrn: row.vrn },
    createdAt: row.created_at.toISOString(),
  };
}

function portfolioView(row: store.PortfolioRow, walletIds: string[]): PortfolioViewData {
  return {
    id: row.id,
    customerId: row.customer_id,
    name: row.name,
    default: row.is_default,
    wallets: walletIds,
    createdAt: row.created_at.toISOString(),
  };
}

/** The portfolios (with their wallet ids) of several customers, in two queries. */
async function portfoliosByCustomer(db: Queryable, clientId: string, customerIds: string[]): Promise<Map<string, PortfolioViewData[]>> {
  const portfolios = await store.portfoliosOfCustomers(db, clientId, customerIds);
  const wallets = await store.walletIdsOfPortfolios(db, clientId, portfolios.map((row) => row.id));
  const walletsByPortfolio = new Map<string, string[]>();
  for (const wallet of wallets) {
    const list = walletsByPortfolio.get(wallet.portfolio_id) ?? [];
    list.push(wallet.id);
    walletsByPortfolio.set(wallet.portfolio_id, list);
  }
  const result = new Map<string, PortfolioViewData[]>();
  for (const portfolio of portfolios) {
    const list = result.get(portfolio.customer_id) ?? [];
    list.push(portfolioView(portfolio, walletsByPortfolio.get(portfolio.id) ?? []));
    result.set(portfolio.customer_id, list);
  }
  return result;
}

function customerView(row: store.CustomerRow, cipher: FieldCipher, portfolios: PortfolioViewData[], primaryWallet?: store.WalletRow): CustomerViewData {
  const view: CustomerViewData = {
    id: row.id,
    type: row.type,
    email: row.email,
    phoneNumber: row.phone_number,
    phoneCountryCode: row.phone_country_code,
    onboardingId: row.onboarding_id,
    membershipProgramId: row.membership_program_id,
    billingAddress: row.billing_address,
    deliveryAddress: row.delivery_address,
    portfolios,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
  if (row.type === 'PRIVATE') {
    view.kyc = {
      firstName: row.first_name ?? '',
      middleName: row.middle_name,
      lastName: row.last_name ?? '',
      sex: row.sex,
      birthDate: row.birth_date,
      documentSsn: row.ssn_last4 === null ? null : maskSsn(row.ssn_last4),
      documentIdCard: maskDocumentNumber(decryptOrNull(cipher, row, row.document_id_card_ciphertext, 'documentIdCard')),
      documentLicense: maskDocumentNumber(decryptOrNull(cipher, row, row.document_license_ciphertext, 'documentLicense')),
      documentPassport: maskDocumentNumber(decryptOrNull(cipher, row, row.document_passport_ciphertext, 'documentPassport')),
      nationality: row.nationality,
      taxIdCountry: row.tax_id_country,
      occupation: row.occupation,
      ipAddress: row.ip_address,
      mainAddress: row.main_address,
    };
  } else {
    const kyb: StoredKyb = row.kyb ?? emptyKyb();
    view.kyb = { ...kyb, mainAddress: row.main_address };
  }
  if (primaryWallet?.virtual_account_number) {
    view.bankingInfo = {
      virtual_account_number: primaryWallet.virtual_account_number,
      ...(primaryWallet.vrn ? { virtual_reference_number: primaryWallet.vrn } : {}),
    };
  }
  return view;
}

function emptyKyb(): StoredKyb {
  return {
    legalName: null,
    tradeName: null,
    structureType: null,
    naicsCode: null,
    incorporationDate: null,
    incorporationCountry: null,
    website: null,
    taxInformation: null,
    identification: null,
  };
}

// ---- reads ----

/** Finds a customer of the client; a malformed id is simply not found. */
export async function findCustomer(db: Queryable, clientId: string, customerId: string): Promise<store.CustomerRow | undefined> {
  if (!isUuid(customerId)) return undefined;
  return store.findCustomer(db, clientId, customerId);
}

async function requireCustomer(db: Queryable, clientId: string, customerId: string, field?: string): Promise<store.CustomerRow> {
  const row = await findCustomer(db, clientId, customerId);
  if (!row) throw notFound('Customer', field);
  return row;
}

async function requireLockedCustomer(tx: Tx, clientId: string, customerId: string): Promise<store.CustomerRow> {
  const row = isUuid(customerId) ? await store.lockCustomer(tx, clientId, customerId) : undefined;
  if (!row) throw notFound('Customer');
  return row;
}

/** The customer's identity numbers in clear, for the vault's documents:reveal (never for the API's own views). */
export interface CustomerDocuments {
  ssn: string | null;
  documentIdCard: string | null;
  documentLicense: string | null;
  documentPassport: string | null;
}

export async function revealCustomerDocuments(db: Queryable, clientId: string, cipher: FieldCipher, customerId: string): Promise<CustomerDocuments | undefined> {
  const row = await findCustomer(db, clientId, customerId);
  if (!row) return undefined;
  return {
    ssn: decryptOrNull(cipher, row, row.ssn_ciphertext, 'ssn'),
    documentIdCard: decryptOrNull(cipher, row, row.document_id_card_ciphertext, 'documentIdCard'),
    documentLicense: decryptOrNull(cipher, row, row.document_license_ciphertext, 'documentLicense'),
    documentPassport: decryptOrNull(cipher, row, row.document_passport_ciphertext, 'documentPassport'),
  };
}

export async function getCustomer(db: Queryable, clientId: string, cipher: FieldCipher, customerId: string): Promise<CustomerViewData> {
  const row = await requireCustomer(db, clientId, customerId);
  const portfolios = await portfoliosByCustomer(db, clientId, [row.id]);
  const primary = await store.primaryWalletOf(db, clientId, row.id);
  return customerView(row, cipher, portfolios.get(row.id) ?? [], primary);
}

export interface CustomerListFilters extends ListQuery {
  email?: string | undefined;
  type?: CustomerType | undefined;
}

export async function listCustomers(
  db: Queryable,
  clientId: string,
  cipher: FieldCipher,
  filters: CustomerListFilters,
): Promise<{ data: CustomerViewData[]; pagination: Pagination }> {
  let query = store.customersQuery(db, clientId);
  if (filters.email !== undefined) query = query.where(sql<string>`lower(email)`, '=', filters.email.trim().toLowerCase());
  if (filters.type !== undefined) query = query.where('type', '=', filters.type);
  const { rows, pagination } = await paginate(db, query, filters, { id: 'id', createdAt: 'created_at' });
  const portfolios = await portfoliosByCustomer(db, clientId, rows.map((row) => row.id));
  return { data: rows.map((row) => customerView(row, cipher, portfolios.get(row.id) ?? [])), pagination };
}

// ---- writes: individuals ----

type KycInput = Partial<IndividualCreate['kyc']>;

/** Fields of the kyc block that are verified identity data, frozen once onboarding is decided. */
export const lockedKycFields = [
  'firstName',
  'middleName',
  'lastName',
  'sex',
  'birthDate',
  'nationality',
  'documentSsn',
  'documentIdCard',
  'documentLicense',
  'documentPassport',
  'mainAddress',
] as const;

function optionalAddress(input: AddressInput | null | undefined, field: string): Address | null | undefined {
  if (input === undefined) return undefined;
  return input === null ? null : normaliseAddress(input, field);
}

function optionalText(value: string | null | undefined, field: string, lengthMax: number): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value.trim() === '') return null;
  return requireText(value, field, lengthMax);
}

/** Validates and normalises the kyc fields present in `kyc`; absent fields stay absent (undefined). */
function kycColumns(kyc: KycInput, now: Date, cipher: FieldCipher, row: { client_id: string; id: string }) {
  const encrypt = (value: string | null | undefined, field: string, normalise: (value: string, field: string) => string) => {
    if (value === undefined) return undefined;
    if (value === null) return null;
    return cipher.encrypt(normalise(value, `kyc.${field}`), boundTo(row, field));
  };
  const ssn = kyc.documentSsn === undefined || kyc.documentSsn === null ? kyc.documentSsn : normaliseSsn(kyc.documentSsn, 'kyc.documentSsn');
  return {
    first_name: kyc.firstName === undefined ? undefined : requireText(kyc.firstName, 'kyc.firstName', nameLengthMax),
    middle_name: optionalText(kyc.middleName, 'kyc.middleName', nameLengthMax),
    last_name: kyc.lastName === undefined ? undefined : requireText(kyc.lastName, 'kyc.lastName', nameLengthMax),
    sex: kyc.sex,
    birth_date: kyc.birthDate === undefined ? undefined : requireBirthDate(kyc.birthDate, 'kyc.birthDate', now),
    nationality: kyc.nationality === undefined ? undefined : requireCountry(kyc.nationality, 'kyc.nationality'),
    ssn_ciphertext: ssn === undefined || ssn === null ? ssn : cipher.encrypt(ssn, boundTo(row, 'ssn')),
    ssn_last4: ssn === undefined || ssn === null ? ssn : ssn.slice(-4),
    document_id_card_ciphertext: encrypt(kyc.documentIdCard, 'documentIdCard', normaliseDocumentNumber),
    document_license_ciphertext: encrypt(kyc.documentLicense, 'documentLicense', normaliseDocumentNumber),
    document_passport_ciphertext: encrypt(kyc.documentPassport, 'documentPassport', normaliseDocumentNumber),
    tax_id_country: kyc.taxIdCountry === undefined || kyc.taxIdCountry === null ? kyc.taxIdCountry : requireCountry(kyc.taxIdCountry, 'kyc.taxIdCountry'),
    occupation: kyc.occupation,
    ip_address: kyc.ipAddress === undefined || kyc.ipAddress === null ? kyc.ipAddress : requireIpAddress(kyc.ipAddress, 'kyc.ipAddress'),
    main_address: jsonOrUndefined(optionalAddress(kyc.mainAddress, 'kyc.mainAddress')),
  };
}

/** jsonb column value: undefined stays absent, null is SQL NULL, anything else JSON text. */
function jsonOrUndefined(value: unknown): string | null | undefined {
  if (value === undefined) return undefined;
  return value === null ? null : JSON.stringify(value);
}

function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Drops the undefined entries, so an update sets only what the request named. */
function defined<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

async function assertEmailFree(tx: Tx, clientId: string, email: string, exceptId?: string): Promise<void> {
  if (await store.findCustomerIdByEmail(tx, clientId, email, exceptId)) throw duplicateEmail(email);
}

function duplicateEmail(email: string): AppError {
  return new AppError('DUPLICATE_EMAIL', `A customer with the email address ${email} already exists for this client; email addresses are unique (ignoring letter case).`, {
    details: [{ field: 'email', message: 'is already used by another customer' }],
  });
}

/** Turns a race on the unique email index (two requests at once) into the same 409. */
async function guardEmailIndex<T>(email: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const constraint = (error as { constraint?: unknown }).constraint;
    const message = (error as { message?: unknown }).message;
    if (sqlStateOf(error) === '23505' && (constraint === 'customers_email_key' || (typeof message === 'string' && message.includes('customers_email_key')))) {
      throw duplicateEmail(email);
    }
    throw error;
  }
}

/** Creates the default portfolio and its primary wallet of a new customer. */
async function createDefaultPortfolio(tx: Tx, context: RequestContext, customerId: string): Promise<void> {
  const portfolioId = idAt(context.now);
  await store.insertPortfolio(tx, {
    client_id: context.clientId,
    id: portfolioId,
    customer_id: customerId,
    name: defaultPortfolioName,
    is_default: true,
    created_at: context.now,
  });
  await store.insertWallet(tx, {
    client_id: context.clientId,
    id: idAt(context.now),
    customer_id: customerId,
    portfolio_id: portfolioId,
    name: primaryWalletName,
    is_primary: true,
    virtual_account_number: null,
    dedicated_account_number: null,
    vrn: null,
    created_at: context.now,
  });
}

async function finishCreate(tx: Tx, context: RequestContext, cipher: FieldCipher, customerId: string): Promise<CustomerViewData> {
  await createDefaultPortfolio(tx, context, customerId);
  const payload: CustomerCreatedPayload = { customerId };
  await recordEvent(tx, context, 'CUSTOMER_CREATED', payload);
  return getCustomer(tx, context.clientId, cipher, customerId);
}

/**
 * Creates an individual (PRIVATE) customer with its default portfolio and primary wallet, and
 * records CUSTOMER_CREATED, all in the caller's transaction. Rules, first failure wins: field
 * formats (phone, email, kyc, addresses), membership program, email uniqueness.
 */
export async function createIndividual(tx: Tx, context: RequestContext, cipher: FieldCipher, input: IndividualCreate): Promise<CustomerViewData> {
  const id = idAt(context.now);
  const ids = { client_id: context.clientId, id };
  const phone = normalisePhone(input.phoneNumber, input.phoneCountryCode, { number: 'phoneNumber', callingCode: 'phoneCountryCode' });
  const email = normaliseEmail(input.email, 'email');
  const kyc = kycColumns(input.kyc, context.now, cipher, ids);
  const billing = optionalAddress(input.billingAddress, 'billingAddress') ?? null;
  const delivery = optionalAddress(input.deliveryAddress, 'deliveryAddress') ?? null;
  const programId = await resolveMembershipProgram(tx, context.clientId, input.membershipProgram);
  await assertEmailFree(tx, context.clientId, email);
  await guardEmailIndex(email, () =>
    store.insertCustomer(tx, {
      ...ids,
      type: 'PRIVATE',
      email,
      phone_number: phone.phoneNumber,
      phone_country_code: phone.phoneCountryCode,
      membership_program_id: programId,
      onboarding_id: null,
      onboarding_status: null,
      ...defined(kyc),
      kyb: null,
      billing_address: jsonOrNull(billing),
      delivery_address: jsonOrNull(delivery),
      created_at: context.now,
      updated_at: context.now,
    }),
  );
  return finishCreate(tx, context, cipher, id);
}

async function requireLockedOfType(tx: Tx, clientId: string, customerId: string, type: CustomerType): Promise<store.CustomerRow> {
  const row = await requireLockedCustomer(tx, clientId, customerId);
  if (row.type !== type) throw wrongType(row.type);
  return row;
}

/** 400 WRONG_CUSTOMER_TYPE on the path parameter `id` (until 2026-12-06 without details; found by an audit). */
function wrongType(actual: CustomerType): AppError {
  const [who, route] = actual === 'LEGAL' ? ['a business (LEGAL)', 'PATCH /v1/customers/business/:id'] : ['an individual (PRIVATE)', 'PATCH /v1/customers/:id'];
  return new AppError('WRONG_CUSTOMER_TYPE', `This customer is ${who}: update it with ${route}.`, {
    details: [{ field: 'id', message: `is ${who} customer; update it with ${route}` }],
  });
}

/** Phone changes: a new number is checked against the new or current dialling code, and the reverse. */
function phoneChanges(input: { phoneNumber?: string | undefined; phoneCountryCode?: string | undefined }, row: store.CustomerRow) {
  if (input.phoneNumber === undefined && input.phoneCountryCode === undefined) return {};
  const number = input.phoneNumber ?? row.phone_number;
  const code = input.phoneCountryCode ?? row.phone_country_code;
  if (number === null) throw validationError('phoneNumber', 'is required together with phoneCountryCode');
  if (code === null) throw validationError('phoneCountryCode', 'is required together with phoneNumber');
  const phone = normalisePhone(number, code, { number: 'phoneNumber', callingCode: 'phoneCountryCode' });
  return { phone_number: phone.phoneNumber, phone_country_code: phone.phoneCountryCode };
}

async function commonChanges(
  tx: Tx,
  context: RequestContext,
  row: store.CustomerRow,
  input: { email?: string | undefined; membershipProgram?: string | undefined; billingAddress?: AddressInput | null | undefined; deliveryAddress?: AddressInput | null | undefined },
) {
  const email = input.email === undefined ? undefined : normaliseEmail(input.email, 'email');
  const billing = optionalAddress(input.billingAddress, 'billingAddress');
  const delivery = optionalAddress(input.deliveryAddress, 'deliveryAddress');
  const programId = input.membershipProgram === undefined ? undefined : await resolveMembershipProgram(tx, context.clientId, input.membershipProgram);
  if (email !== undefined) await assertEmailFree(tx, context.clientId, email, row.id);
  return defined({
    email,
    membership_program_id: programId,
    billing_address: jsonOrUndefined(billing),
    delivery_address: jsonOrUndefined(delivery),
  });
}

/**
 * Partial update of an individual. Rules, first failure wins: the customer exists and is an
 * individual; identity fields only while onboarding allows it (409 INVALID_STATE); field formats;
 * membership program; email uniqueness.
 */
export async function updateIndividual(
  tx: Tx,
  context: RequestContext,
  cipher: FieldCipher,
  customerId: string,
  input: IndividualPatch,
  identityChanging?: IdentityChanging,
): Promise<CustomerViewData> {
  const row = await requireLockedOfType(tx, context.clientId, customerId, 'PRIVATE');
  const kycInput: KycInput = input.kyc ?? {};
  const lockedField = lockedKycFields.find((field) => kycInput[field] !== undefined);
  if (lockedField) {
    assertKycEditable(row.onboarding_status, `kyc.${lockedField}`);
    await identityChanging?.(tx, context, row.id);
  }
  const phone = phoneChanges(input, row);
  const kyc = kycColumns(kycInput, context.now, cipher, row);
  const common = await commonChanges(tx, context, row, input);
  const email = common.email;
  await guardEmailIndex(email ?? row.email, () =>
    store.updateCustomer(tx, context.clientId, row.id, { ...phone, ...defined(kyc), ...common, updated_at: context.now }),
  );
  return getCustomer(tx, context.clientId, cipher, row.id);
}

// ---- writes: businesses ----

type KybInput = NonNullable<BusinessPatch['kyb']>;

function kybFields(input: KybInput): Partial<StoredKyb> {
  const fields: Partial<StoredKyb> = {};
  if (input.legalName !== undefined) fields.legalName = requireText(input.legalName, 'kyb.legalName', 200);
  if (input.tradeName !== undefined) fields.tradeName = optionalText(input.tradeName, 'kyb.tradeName', 200) ?? null;
  if (input.structureType !== undefined) fields.structureType = input.structureType;
  if (input.naicsCode !== undefined) fields.naicsCode = input.naicsCode === null ? null : requireNaicsCode(input.naicsCode, 'kyb.naicsCode');
  if (input.incorporationDate !== undefined) {
    fields.incorporationDate = input.incorporationDate === null ? null : parseCalendarDate(input.incorporationDate, 'kyb.incorporationDate');
  }
  if (input.incorporationCountry !== undefined) {
    fields.incorporationCountry = input.incorporationCountry === null ? null : requireCountry(input.incorporationCountry, 'kyb.incorporationCountry');
  }
  if (input.website !== undefined) fields.website = input.website === null ? null : requireWebsite(input.website, 'kyb.website');
  if (input.taxInformation !== undefined) {
    fields.taxInformation =
      input.taxInformation === null
        ? null
        : {
            taxId: requireText(input.taxInformation.taxId, 'kyb.taxInformation.taxId', 30),
            taxIdCountry: requireCountry(input.taxInformation.taxIdCountry, 'kyb.taxInformation.taxIdCountry'),
          };
  }
  if (input.identification !== undefined) {
    fields.identification =
      input.identification === null
        ? null
        : {
            type: input.identification.type,
            number: requireText(input.identification.number, 'kyb.identification.number', 40),
            issuingCountry: requireCountry(input.identification.issuingCountry, 'kyb.identification.issuingCountry'),
          };
  }
  return fields;
}

function incorporationNotInFuture(kyb: Partial<StoredKyb>, now: Date): void {
  if (kyb.incorporationDate && kyb.incorporationDate > now.toISOString().slice(0, 10)) {
    throw validationError('kyb.incorporationDate', 'must not be in the future');
  }
}

/** Creates a business (LEGAL) customer; the same transaction, rules and event as an individual. */
export async function createBusiness(tx: Tx, context: RequestContext, cipher: FieldCipher, input: BusinessCreate): Promise<CustomerViewData> {
  const id = idAt(context.now);
  const phoneNumber = input.phoneNumber ?? undefined;
  const phoneCountryCode = input.phoneCountryCode ?? undefined;
  if ((phoneNumber === undefined) !== (phoneCountryCode === undefined)) {
    throw validationError(phoneNumber === undefined ? 'phoneNumber' : 'phoneCountryCode', 'is required together with the other phone field');
  }
  const phone =
    phoneNumber !== undefined && phoneCountryCode !== undefined
      ? normalisePhone(phoneNumber, phoneCountryCode, { number: 'phoneNumber', callingCode: 'phoneCountryCode' })
      : undefined;
  const email = normaliseEmail(input.email, 'email');
  const kyb = input.kyb ? { ...emptyKyb(), ...kybFields(input.kyb) } : null;
  if (kyb) incorporationNotInFuture(kyb, context.now);
  const mainAddress = optionalAddress(input.kyb?.mainAddress, 'kyb.mainAddress') ?? null;
  const billing = optionalAddress(input.billingAddress, 'billingAddress') ?? null;
  const delivery = optionalAddress(input.deliveryAddress, 'deliveryAddress') ?? null;
  const programId = await resolveMembershipProgram(tx, context.clientId, input.membershipProgram);
  await assertEmailFree(tx, context.clientId, email);
  await guardEmailIndex(email, () =>
    store.insertCustomer(tx, {
      client_id: context.clientId,
      id,
      type: 'LEGAL',
      email,
      phone_number: phone?.phoneNumber ?? null,
      phone_country_code: phone?.phoneCountryCode ?? null,
      membership_program_id: programId,
      onboarding_id: null,
      onboarding_status: null,
      kyb: jsonOrNull(kyb),
      main_address: jsonOrNull(mainAddress),
      billing_address: jsonOrNull(billing),
      delivery_address: jsonOrNull(delivery),
      created_at: context.now,
      updated_at: context.now,
    }),
  );
  return finishCreate(tx, context, cipher, id);
}

/** A business's phone change: as an individual's, and both null clear it (one null alone is refused: both or neither). */
function businessPhoneChanges(input: { phoneNumber?: string | null | undefined; phoneCountryCode?: string | null | undefined }, row: store.CustomerRow) {
  const { phoneNumber, phoneCountryCode } = input;
  if (phoneNumber === null && phoneCountryCode === null) return { phone_number: null, phone_country_code: null };
  if (phoneNumber === null) throw validationError('phoneNumber', 'can be cleared only together with phoneCountryCode (both null)');
  if (phoneCountryCode === null) throw validationError('phoneCountryCode', 'can be cleared only together with phoneNumber (both null)');
  return phoneChanges({ phoneNumber, phoneCountryCode }, row);
}

/** Partial update of a business: the kyb block follows the same onboarding rule as an individual's identity data. */
export async function updateBusiness(
  tx: Tx,
  context: RequestContext,
  cipher: FieldCipher,
  customerId: string,
  input: BusinessPatch,
  identityChanging?: IdentityChanging,
): Promise<CustomerViewData> {
  const row = await requireLockedOfType(tx, context.clientId, customerId, 'LEGAL');
  const kybInput = input.kyb;
  if (kybInput) {
    const first = Object.keys(kybInput)[0];
    if (first !== undefined) {
      assertKycEditable(row.onboarding_status, `kyb.${first}`);
      await identityChanging?.(tx, context, row.id);
    }
  }
  const phone = businessPhoneChanges(input, row);
  let kybJson: string | undefined;
  let mainAddressJson: string | null | undefined;
  if (kybInput) {
    const kyb = { ...emptyKyb(), ...(row.kyb ?? {}), ...kybFields(kybInput) };
    incorporationNotInFuture(kyb, context.now);
    kybJson = JSON.stringify(kyb);
    mainAddressJson = jsonOrUndefined(optionalAddress(kybInput.mainAddress, 'kyb.mainAddress'));
  }
  const common = await commonChanges(tx, context, row, input);
  await guardEmailIndex(common.email ?? row.email, () =>
    store.updateCustomer(tx, context.clientId, row.id, {
      ...phone,
      ...defined({ kyb: kybJson, main_address: mainAddressJson }),
      ...common,
      updated_at: context.now,
    }),
  );
  return getCustomer(tx, context.clientId, cipher, row.id);
}

// ---- portfolios and wallets ----

export async function listPortfolios(db: Queryable, clientId: string, customerId: string, list: ListQuery): Promise<{ data: PortfolioViewData[]; pagination: Pagination }> {
  await requireCustomer(db, clientId, customerId);
  const { rows, pagination } = await paginate(db, store.portfoliosQuery(db, clientId, customerId), list, { id: 'id', createdAt: 'created_at' });
  const wallets = await store.walletIdsOfPortfolios(db, clientId, rows.map((row) => row.id));
  return {
    data: rows.map((row) => portfolioView(row, wallets.filter((wallet) => wallet.portfolio_id === row.id).map((wallet) => wallet.id))),
    pagination,
  };
}

export async function getPortfolio(db: Queryable, clientId: string, customerId: string, portfolioId: string): Promise<PortfolioViewData> {
  await requireCustomer(db, clientId, customerId);
  const row = isUuid(portfolioId) ? await store.findPortfolio(db, clientId, customerId, portfolioId) : undefined;
  if (!row) throw notFound('Portfolio');
  const wallets = await store.walletIdsOfPortfolios(db, clientId, [row.id]);
  return portfolioView(row, wallets.map((wallet) => wallet.id));
}

export async function createPortfolio(tx: Tx, context: RequestContext, customerId: string, input: { name: string }): Promise<PortfolioViewData> {
  const customer = await requireLockedCustomer(tx, context.clientId, customerId);
  const name = requireText(input.name, 'name', 100);
  if ((await store.countPortfolios(tx, context.clientId, customer.id)) >= portfoliosPerCustomerMax) {
    throw new AppError('RESOURCE_LIMIT_REACHED', `A customer can have at most ${portfoliosPerCustomerMax} portfolios.`);
  }
  const id = idAt(context.now);
  await store.insertPortfolio(tx, { client_id: context.clientId, id, customer_id: customer.id, name, is_default: false, created_at: context.now });
  return getPortfolio(tx, context.clientId, customer.id, id);
}

export async function createWallet(tx: Tx, context: RequestContext, customerId: string, portfolioId: string, input: { name: string }): Promise<WalletViewData> {
  const customer = await requireLockedCustomer(tx, context.clientId, customerId);
  const portfolio = isUuid(portfolioId) ? await store.findPortfolio(tx, context.clientId, customer.id, portfolioId) : undefined;
  if (!portfolio) throw notFound('Portfolio');
  const name = requireText(input.name, 'name', 100);
  if ((await store.countWalletsOfPortfolio(tx, context.clientId, portfolio.id)) >= walletsPerPortfolioMax) {
    throw new AppError('RESOURCE_LIMIT_REACHED', `A portfolio can hold at most ${walletsPerPortfolioMax} wallets.`);
  }
  const row: store.WalletRow = {
    client_id: context.clientId,
    id: idAt(context.now),
    customer_id: customer.id,
    portfolio_id: portfolio.id,
    name,
    is_primary: false,
    virtual_account_number: null,
    dedicated_account_number: null,
    vrn: null,
    created_at: context.now,
  };
  await store.insertWallet(tx, row);
  return walletView(row);
}

/** Finds a wallet of the client; a malformed id is simply not found. */
export async function findWallet(db: Queryable, clientId: string, walletId: string): Promise<store.WalletRow | undefined> {
  if (!isUuid(walletId)) return undefined;
  return store.findWallet(db, clientId, walletId);
}

export async function getWallet(db: Queryable, clientId: string, walletId: string): Promise<WalletViewData> {
  const row = await findWallet(db, clientId, walletId);
  if (!row) throw notFound('Wallet');
  return walletView(row);
}

export async function listWallets(
  db: Queryable,
  clientId: string,
  filters: ListQuery & { customerId?: string | undefined; portfolioId?: string | undefined },
): Promise<{ data: WalletViewData[]; pagination: Pagination }> {
  let query = store.walletsQuery(db, clientId);
  let customer: store.CustomerRow | undefined;
  if (filters.customerId !== undefined) {
    customer = await requireCustomer(db, clientId, filters.customerId, 'customerId');
    query = query.where('customer_id', '=', customer.id);
  }
  if (filters.portfolioId !== undefined) {
    const portfolio = isUuid(filters.portfolioId) ? await store.findPortfolioById(db, clientId, filters.portfolioId) : undefined;
    // With customerId, a portfolio of another customer is unknown there, as in its path
    // (/v1/customers/:id/portfolios/:portfolioId); until 2026-12-03 it listed nothing (found by an audit).
    if (!portfolio || (customer !== undefined && portfolio.customer_id !== customer.id)) throw notFound('Portfolio', 'portfolioId');
    query = query.where('portfolio_id', '=', portfolio.id);
  }
  const { rows, pagination } = await paginate(db, query, filters, { id: 'id', createdAt: 'created_at' });
  return { data: rows.map(walletView), pagination };
}

/** The customer's primary wallet (undefined for a malformed or unknown customer id). */
export async function primaryWalletOf(db: Queryable, clientId: string, customerId: string): Promise<store.WalletRow | undefined> {
  if (!isUuid(customerId)) return undefined;
  return store.primaryWalletOf(db, clientId, customerId);
}

export { walletView, requireLockedCustomer };
