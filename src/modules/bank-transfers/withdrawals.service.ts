import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { parseAmount } from '../../platform/money/amount.js';
import { isCountryCode, validateSwiftCode } from '../bank-directory/index.js';
import { findWallet } from '../customers/index.js';
import { placeHold } from '../ledger/index.js';
import { recordEvent } from '../webhooks/index.js';
import { resolveBank } from './bank-identifiers.js';
import { bankEventData, bankNetworkOf, bankTransactionView, walletTransactionTypes, type BankTransactionView } from './bank-transfer.js';
import type { BeneficiaryData } from './bank-transfers.tables.js';
import * as store from './bank-transfers.store.js';
import { endToEndIdFor } from './end-to-end-id.js';
import { requireBankAsset, type BankTransferRuntime, type SavedCounterparty } from './runtime.js';
import { assertNoViolations, checkNamesAndAddresses, checkWithdrawalInput, nameAndAddressFields, normalizeAccountNumber, type RuleViolation, type TransferNetwork } from './withdrawal-rules.js';

/** The withdrawal body as the route schema lets it through (null counts as absent for every optional field). */
export interface WithdrawalRequest {
  walletId: string;
  amount: string;
  asset?: string | null | undefined;
  counterpartyId?: string | null | undefined;
  name?: string | null | undefined;
  transferNetwork?: TransferNetwork | null | undefined;
  personTypeCode: 'P' | 'L';
  routingNumber?: string | null | undefined;
  bicSwiftCode?: string | null | undefined;
  accountNumber?: string | null | undefined;
  street1?: string | null | undefined;
  street2?: string | null | undefined;
  cityCounty?: string | null | undefined;
  stateRegion?: string | null | undefined;
  zip?: string | null | undefined;
  countryCode?: string | null | undefined;
  identificationTypeCode?: string | null | undefined;
  identificationValue?: string | null | undefined;
  remittanceMemo?: string | null | undefined;
  intermediaryBankBic?: string | null | undefined;
}

/** The beneficiary fields a saved counterparty supplies; with counterpartyId the body leaves them out. */
export const beneficiaryFields = [
  'name',
  'transferNetwork',
  'routingNumber',
  'bicSwiftCode',
  'accountNumber',
  'street1',
  'street2',
  'cityCounty',
  'stateRegion',
  'zip',
  'countryCode',
] as const;

/** Required in the body when there is no counterpartyId. */
/** The beneficiary fields a withdrawal without `counterpartyId` must give. */
export const requiredWithoutCounterparty = ['name', 'transferNetwork', 'accountNumber', 'street1', 'cityCounty', 'stateRegion', 'zip', 'countryCode'] as const;

interface Beneficiary {
  name: string;
  transferNetwork: TransferNetwork;
  routingNumber: string | null;
  bicSwiftCode: string | null;
  accountNumber: string;
  street1: string;
  street2: string | null;
  cityCounty: string;
  stateRegion: string;
  zip: string;
  countryCode: string;
}

const given = (value: unknown) => value !== undefined && value !== null;

function violation(field: string, message: string): RuleViolation {
  return { code: 'VALIDATION_ERROR', field, message };
}

function beneficiaryFromBody(body: WithdrawalRequest): Beneficiary {
  const missing = requiredWithoutCounterparty.filter((field) => !given(body[field])).map((field) => violation(field, 'is required (or counterpartyId)'));
  assertNoViolations(missing);
  return {
    name: body.name ?? '',
    transferNetwork: body.transferNetwork ?? 'ACH_DOMESTIC',
    routingNumber: body.routingNumber ?? null,
    bicSwiftCode: body.bicSwiftCode ?? null,
    accountNumber: body.accountNumber ?? '',
    street1: body.street1 ?? '',
    street2: body.street2 ?? null,
    cityCounty: body.cityCounty ?? '',
    stateRegion: body.stateRegion ?? '',
    zip: body.zip ?? '',
    countryCode: body.countryCode ?? '',
  };
}

function beneficiaryFromCounterparty(body: WithdrawalRequest, counterparty: SavedCounterparty): Beneficiary {
  const doubled = beneficiaryFields
    .filter((field) => given(body[field]))
    .map((field) => violation(field, 'comes from the counterparty named by counterpartyId; leave it out (or leave out counterpartyId)'));
  assertNoViolations(doubled);
  const missing: RuleViolation[] = [];
  const need = (value: string | null, field: string): string => {
    if (value === null) missing.push(violation('counterpartyId', `the counterparty has no ${field}, which a withdrawal needs; add it with PATCH`));
    return value ?? '';
  };
  const beneficiary: Beneficiary = {
    name: counterparty.accountHolderName,
    transferNetwork: counterparty.transferNetwork,
    routingNumber: counterparty.routingNumber,
    bicSwiftCode: counterparty.bicSwiftCode,
    accountNumber: need(counterparty.accountNumberValue, 'accountNumberValue'),
    street1: need(counterparty.street1, 'street1'),
    street2: counterparty.street2,
    cityCounty: need(counterparty.cityCounty, 'cityCounty'),
    stateRegion: need(counterparty.stateRegion, 'stateRegion'),
    zip: need(counterparty.zip, 'zip'),
    countryCode: need(counterparty.countryCode, 'countryCode'),
  };
  assertNoViolations(missing);
  return beneficiary;
}

/**
 * POST /v1/baas/transactions/withdrawal. Rules, in this order (the first failing step answers,
 * with every violation of that step in `details`):
 *
 * 1. the body schema, and removed fields (route);
 * 2. asset (USD; USD_TEST in the sandbox) and amount;
 * 3. the beneficiary: from the saved counterparty (404 when unknown; the body then leaves the
 *    beneficiary fields out) or from the body (required fields present);
 * 4. the input rules: personTypeCode, routingNumber/bicSwiftCode per transferNetwork,
 *    accountNumber (IBAN checked when it is one), intermediaryBankBic, remittanceMemo, the name
 *    and address fields of the body (no control or format characters, not blank), countryCode;
 *    an IBAN is then kept in its electronic form;
 * 5. the bank directory: the routing number or BIC is known (404 BANK_NOT_FOUND) and, for a
 *    routing number, takes the network's payments (400 ROUTING_NUMBER_NOT_ELIGIBLE); then the
 *    intermediary bank's BIC is known (404 BANK_NOT_FOUND naming intermediaryBankBic);
 * 6. the wallet exists (404), the counterparty belongs to the wallet's portfolio (400), the wallet
 *    has a virtual account (400 WALLET_NOT_LINKED);
 * 7. enough AVAILABLE money (422 INSUFFICIENT_FUNDS).
 *
 * Then, in the caller's transaction: the amount is reserved (a ledger hold), the bank transfer and
 * its WITHDRAWAL_INITIATED child are written, the rail's plan is stored, and
 * BANK_WITHDRAWAL_TRANSACTION_PENDING is recorded. Answers the child.
 */
export async function createWithdrawal(tx: Tx, context: RequestContext, body: WithdrawalRequest, runtime: BankTransferRuntime): Promise<BankTransactionView> {
  const asset = requireBankAsset(body.asset ?? 'USD', runtime.mode);
  const amountMinor = parseAmount(body.amount, asset, 'amount');

  let counterparty: SavedCounterparty | undefined;
  if (body.counterpartyId !== undefined && body.counterpartyId !== null) {
    counterparty = isUuid(body.counterpartyId) ? await runtime.findCounterparty(tx, context.clientId, body.counterpartyId) : undefined;
    if (!counterparty) throw new AppError('NOT_FOUND', 'Counterparty not found', { details: [{ field: 'counterpartyId', message: 'no such counterparty' }] });
  }
  const beneficiary = counterparty ? beneficiaryFromCounterparty(body, counterparty) : beneficiaryFromBody(body);

  const network = beneficiary.transferNetwork;
  const violations = checkWithdrawalInput({
    transferNetwork: network,
    personTypeCode: body.personTypeCode,
    routingNumber: beneficiary.routingNumber,
    bicSwiftCode: beneficiary.bicSwiftCode,
    accountNumber: beneficiary.accountNumber,
    remittanceMemo: body.remittanceMemo,
    intermediaryBankBic: body.intermediaryBankBic,
  });
  // A saved counterparty's name and address were checked when it was saved; the body's are checked here.
  if (!counterparty) violations.push(...checkNamesAndAddresses(beneficiary, nameAndAddressFields));
  // The party identification always comes from the body, with or without a counterparty.
  violations.push(...checkNamesAndAddresses(body, ['identificationTypeCode', 'identificationValue']));
  // An identification is a type and its value: one without the other identifies nobody (until
  // 2026-12-05 either was taken alone; found by an audit).
  const hasType = body.identificationTypeCode !== undefined && body.identificationTypeCode !== null;
  const hasValue = body.identificationValue !== undefined && body.identificationValue !== null;
  if (hasType !== hasValue) {
    const missing = hasType ? 'identificationValue' : 'identificationTypeCode';
    violations.push(violation(missing, `is required with ${hasType ? 'identificationTypeCode' : 'identificationValue'} (send both or neither)`));
  }
  if (!isCountryCode(beneficiary.countryCode)) {
    violations.push(violation('countryCode', `must be an ISO 3166-1 alpha-2 country code in capitals, such as US; got ${JSON.stringify(beneficiary.countryCode)}`));
  }
  assertNoViolations(violations);
  beneficiary.accountNumber = normalizeAccountNumber(beneficiary.accountNumber);
  const bank = await resolveBank(tx, network, beneficiary);
  // The intermediary bank is looked up in the directory as the beneficiary's bank is (until
  // 2026-12-04 only its form was checked, so an unknown one went out; found by audits).
  if (body.intermediaryBankBic) await validateSwiftCode(tx, body.intermediaryBankBic, 'intermediaryBankBic');

  const wallet = await findWallet(tx, context.clientId, body.walletId);
  if (!wallet) throw new AppError('NOT_FOUND', 'Wallet not found', { details: [{ field: 'walletId', message: 'no such wallet' }] });
  if (counterparty && counterparty.portfolioId !== wallet.portfolio_id) {
    throw new AppError('VALIDATION_ERROR', 'counterpartyId: the counterparty belongs to another portfolio than the wallet.', {
      details: [{ field: 'counterpartyId', message: 'belongs to another portfolio than the wallet' }],
    });
  }
  if (wallet.virtual_account_number === null) {
    throw new AppError('WALLET_NOT_LINKED', 'The wallet must be linked to a virtual account first (approve the customer\'s KYC/KYB, or POST /v1/virtual-accounts).', {
      details: [{ field: 'walletId', message: 'the wallet must be linked to a virtual account first' }],
    });
  }

  const transferId = idAt(context.now);
  const childId = idAt(context.now);
  const hold = await placeHold(tx, {
    clientId: context.clientId,
    now: context.now,
    wallet: { walletId: wallet.id, field: 'walletId' },
    asset,
    amount: amountMinor,
    history: {
      parentTransactionId: transferId,
      type: walletTransactionTypes.WITHDRAWAL,
      traceId: context.traceId,
      links: { bankTransactionId: childId, parentBankTransactionId: transferId },
    },
  });

  const bankNetwork = bankNetworkOf(network);
  const remittanceMemo = body.remittanceMemo ?? null;
  const plan = runtime.rail.plan(
    {
      clientId: context.clientId,
      bankTransferId: transferId,
      direction: 'WITHDRAWAL',
      bankNetwork,
      amountMinor,
      asset: asset.code,
      counterpartyAccountNumber: beneficiary.accountNumber,
      counterpartyName: beneficiary.name,
      remittanceMemo,
    },
    context.now,
  );
  const beneficiaryData: BeneficiaryData = {
    name: beneficiary.name,
    personTypeCode: body.personTypeCode,
    accountNumber: beneficiary.accountNumber,
    routingNumber: beneficiary.routingNumber,
    bicSwiftCode: beneficiary.bicSwiftCode === null ? null : beneficiary.bicSwiftCode.toUpperCase(),
    intermediaryBankBic: body.intermediaryBankBic ? body.intermediaryBankBic.toUpperCase() : null,
    ...bank,
    street1: beneficiary.street1,
    street2: beneficiary.street2,
    cityCounty: beneficiary.cityCounty,
    stateRegion: beneficiary.stateRegion,
    zip: beneficiary.zip,
    countryCode: beneficiary.countryCode,
    identificationTypeCode: body.identificationTypeCode ?? null,
    identificationValue: body.identificationValue ?? null,
  };
  const transfer: store.BankTransferRow = {
    client_id: context.clientId,
    id: transferId,
    direction: 'WITHDRAWAL',
    wallet_id: wallet.id,
    customer_id: wallet.customer_id,
    portfolio_id: wallet.portfolio_id,
    status: 'PENDING',
    amount: amountMinor.toString(),
    asset: asset.code,
    bank_network: bankNetwork,
    transfer_network: network,
    counterparty: null,
    beneficiary: beneficiaryData,
    counterparty_id: counterparty?.id ?? null,
    remittance_memo: remittanceMemo,
    end_to_end_id: await endToEndIdFor(tx, bankNetwork, runtime.operatingBank.routingNumber, runtime.operatingBank.swiftCode, context.now, runtime.serialKey),
    account_number: null,
    routed_by: null,
    hold_id: hold.holdId,
    pending_credit_id: null,
    return_code: null,
    failure_reason: null,
    settle_at: plan.settleAt,
    planned_outcome: plan.settleAt === null ? null : plan.outcome,
    planned_return_code: plan.settleAt !== null && plan.outcome === 'FAILED' ? plan.returnCode : null,
    planned_failure_reason: plan.settleAt !== null && plan.outcome === 'FAILED' ? plan.failureReason : null,
    created_at: context.now,
    updated_at: context.now,
  };
  await store.insertBankTransfer(tx, { ...transfer, counterparty: null, beneficiary: JSON.stringify(beneficiaryData) });
  const child: store.BankTransactionRow = {
    client_id: context.clientId,
    id: childId,
    bank_transfer_id: transferId,
    type: 'WITHDRAWAL_INITIATED',
    status: 'PENDING',
    return_code: null,
    failure_reason: null,
    created_at: context.now,
  };
  await store.insertBankTransaction(tx, child);
  await recordEvent(tx, context, 'BANK_WITHDRAWAL_TRANSACTION_PENDING', bankEventData(transfer, { id: childId }));
  return bankTransactionView(transfer, child);
}
