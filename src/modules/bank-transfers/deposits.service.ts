import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { idAt } from '../../platform/ids.js';
import { parseAmount } from '../../platform/money/amount.js';
import { checkBic, checkRoutingNumber, isCountryCode } from '../bank-directory/index.js';
import { routeDeposit } from '../bank-accounts/index.js';
import { postTransfer, recordPendingCredit } from '../ledger/index.js';
import { recordEvent } from '../webhooks/index.js';
import { bankEventData, bankTransactionView, walletTransactionTypes, type BankTransactionView } from './bank-transfer.js';
import type { BankCounterpartyData, BankNetwork } from './bank-transfers.tables.js';
import * as store from './bank-transfers.store.js';
import { endToEndIdFor } from './end-to-end-id.js';
import { describeReturnCode, unroutableReturnCode } from './return-codes.js';
import { requireBankAsset, type BankTransferRuntime } from './runtime.js';
import { assertNoViolations, checkNameOrAddress, checkNamesAndAddresses, type RuleViolation } from './withdrawal-rules.js';

/** An inbound deposit as the outside world sends it (the sandbox's POST /v1/sandbox/bank-deposits). */
export interface DepositRequest {
  accountNumber: string;
  amount: string;
  asset: string;
  network?: 'ACH' | 'FEDWIRE' | 'SWIFT' | null | undefined;
  counterparty: {
    name: string;
    givenName?: string | null | undefined;
    surname?: string | null | undefined;
    accountNumber: string;
    swiftCode?: string | null | undefined;
    routingNumber?: string | null | undefined;
    financialInstitutionId?: string | null | undefined;
    street1?: string | null | undefined;
    street2?: string | null | undefined;
    cityCounty?: string | null | undefined;
    stateRegion?: string | null | undefined;
    countryCode?: string | null | undefined;
    zip?: string | null | undefined;
    addressLine?: string | null | undefined;
  };
  memo?: string | null | undefined;
}

export interface DepositOutcome {
  routed: boolean;
  transaction: BankTransactionView;
}

/** The deposit's text fields that name or describe: none may hold the characters platform/text.ts refuses, nor be only white space. */
const senderTextFields = ['name', 'givenName', 'surname', 'accountNumber', 'financialInstitutionId', 'street1', 'street2', 'cityCounty', 'stateRegion', 'zip', 'addressLine'] as const;

/**
 * Every field of the deposit at once: the text fields (accountNumber, memo and the sender's)
 * hold no control or invisible formatting characters, as a withdrawal's and a counterparty's do
 * not; the sender's bank identifiers are checked for their form only (the sender's bank may be
 * anywhere).
 */
function checkSender(body: DepositRequest): BankCounterpartyData {
  const counterparty = body.counterparty;
  const violations: RuleViolation[] = [
    ...checkNameOrAddress(body.accountNumber, 'accountNumber'),
    ...checkNamesAndAddresses(counterparty, senderTextFields).map((violation) => ({ ...violation, field: `counterparty.${violation.field}` })),
    ...checkNameOrAddress(body.memo, 'memo'),
  ];
  if (counterparty.routingNumber != null) {
    const check = checkRoutingNumber(counterparty.routingNumber);
    if (!check.ok) violations.push({ code: 'INVALID_ROUTING_NUMBER', field: 'counterparty.routingNumber', message: check.reason });
  }
  if (counterparty.swiftCode != null) {
    const check = checkBic(counterparty.swiftCode);
    if (!check.ok) violations.push({ code: 'INVALID_SWIFT_CODE', field: 'counterparty.swiftCode', message: check.reason });
  }
  if (counterparty.countryCode != null && !isCountryCode(counterparty.countryCode)) {
    violations.push({ code: 'VALIDATION_ERROR', field: 'counterparty.countryCode', message: 'must be an ISO 3166-1 alpha-2 country code in capitals, such as US' });
  }
  assertNoViolations(violations);
  return {
    name: counterparty.name,
    givenName: counterparty.givenName ?? null,
    surname: counterparty.surname ?? null,
    accountNumber: counterparty.accountNumber,
    swiftCode: counterparty.swiftCode == null ? null : counterparty.swiftCode.toUpperCase(),
    routingNumber: counterparty.routingNumber ?? null,
    financialInstitutionId: counterparty.financialInstitutionId ?? null,
    street1: counterparty.street1 ?? null,
    street2: counterparty.street2 ?? null,
    cityCounty: counterparty.cityCounty ?? null,
    stateRegion: counterparty.stateRegion ?? null,
    countryCode: counterparty.countryCode ?? null,
    zip: counterparty.zip ?? null,
    addressLine: counterparty.addressLine ?? null,
  };
}

/**
 * An inbound bank deposit. Checks, in order: asset (USD; USD_TEST in the sandbox) and amount,
 * then the text fields' characters and the sender's routing number, SWIFT code and country code
 * (form only), all reported at once. Then the deposit is
 * routed as the operating bank would (by the number the sender used, or by the reference in the
 * memo for the master account), among the calling client's wallets only:
 *
 * - routed: the amount is a pending credit on the wallet (PENDING balance), the bank transfer and
 *   its DEPOSIT_INITIATED child are written with the rail's plan, and
 *   BANK_DEPOSIT_TRANSACTION_PENDING is recorded;
 * - unroutable: the money is booked into the bank's SUSPENSE account and straight back out to
 *   the sender (returned, R03 on ACH, AC03 elsewhere), a FAILED bank transfer with its
 *   DEPOSIT_FAILURE child keeps the record, and BANK_DEPOSIT_TRANSACTION_FAILED is recorded with
 *   walletId null. Nothing is lost silently.
 */
export async function receiveDeposit(tx: Tx, context: RequestContext, body: DepositRequest, runtime: BankTransferRuntime): Promise<DepositOutcome> {
  const asset = requireBankAsset(body.asset, runtime.mode);
  const amountMinor = parseAmount(body.amount, asset, 'amount');
  const sender = checkSender(body);
  const bankNetwork: BankNetwork = body.network ?? 'UNSPECIFIED';
  const memo = body.memo ?? null;
  const route = await routeDeposit(tx, context.clientId, runtime.operatingBank, body.accountNumber, memo);

  const transferId = idAt(context.now);
  const childId = idAt(context.now);
  const endToEndId = await endToEndIdFor(tx, bankNetwork, sender.routingNumber ?? runtime.operatingBank.routingNumber, sender.swiftCode ?? runtime.operatingBank.swiftCode, context.now, runtime.serialKey);
  const base = {
    client_id: context.clientId,
    id: transferId,
    direction: 'DEPOSIT' as const,
    amount: amountMinor.toString(),
    asset: asset.code,
    bank_network: bankNetwork,
    transfer_network: null,
    counterparty: sender,
    beneficiary: null,
    counterparty_id: null,
    remittance_memo: memo,
    end_to_end_id: endToEndId,
    account_number: body.accountNumber,
    hold_id: null,
    created_at: context.now,
    updated_at: context.now,
  };

  if (route.wallet === undefined) {
    const returnCode = unroutableReturnCode(bankNetwork);
    const reason = `${describeReturnCode(returnCode)} (${route.unroutable}); returned to the sender`;
    const history = { parentTransactionId: transferId, type: walletTransactionTypes.DEPOSIT, traceId: context.traceId };
    // Received into suspense (no wallet to credit), then sent straight back: both movements stay on the ledger.
    await postTransfer(tx, {
      clientId: context.clientId,
      now: context.now,
      asset,
      legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { system: 'SUSPENSE' }, amount: amountMinor }],
      history,
      description: `unroutable bank deposit ${transferId} received into suspense`,
    });
    await postTransfer(tx, {
      clientId: context.clientId,
      now: context.now,
      asset,
      legs: [{ from: { system: 'SUSPENSE' }, to: { system: 'BANK_SETTLEMENT' }, amount: amountMinor }],
      history,
      description: `unroutable bank deposit ${transferId} returned to the sender (${returnCode})`,
    });
    const transfer: store.BankTransferRow = {
      ...base,
      wallet_id: null,
      customer_id: null,
      portfolio_id: null,
      status: 'FAILED',
      routed_by: null,
      pending_credit_id: null,
      return_code: returnCode,
      failure_reason: reason,
      settle_at: null,
      planned_outcome: null,
      planned_return_code: null,
      planned_failure_reason: null,
    };
    await store.insertBankTransfer(tx, { ...transfer, counterparty: JSON.stringify(sender), beneficiary: null });
    const child: store.BankTransactionRow = {
      client_id: context.clientId,
      id: childId,
      bank_transfer_id: transferId,
      type: 'DEPOSIT_FAILURE',
      status: 'FAILED',
      return_code: returnCode,
      failure_reason: reason,
      created_at: context.now,
    };
    await store.insertBankTransaction(tx, child);
    await recordEvent(tx, context, 'BANK_DEPOSIT_TRANSACTION_FAILED', bankEventData(transfer, { id: childId, returnCode, failureReason: reason }));
    return { routed: false, transaction: bankTransactionView(transfer, child) };
  }

  const { wallet } = route;
  const credit = await recordPendingCredit(tx, {
    clientId: context.clientId,
    now: context.now,
    wallet: { walletId: wallet.id },
    asset,
    amount: amountMinor,
    source: 'BANK_SETTLEMENT',
    history: {
      parentTransactionId: transferId,
      type: walletTransactionTypes.DEPOSIT,
      traceId: context.traceId,
      note: memo,
      links: { bankTransactionId: childId, parentBankTransactionId: transferId },
    },
  });
  const plan = runtime.rail.plan(
    {
      clientId: context.clientId,
      bankTransferId: transferId,
      direction: 'DEPOSIT',
      bankNetwork,
      amountMinor,
      asset: asset.code,
      counterpartyAccountNumber: sender.accountNumber,
      counterpartyName: sender.name,
      remittanceMemo: memo,
    },
    context.now,
  );
  const transfer: store.BankTransferRow = {
    ...base,
    wallet_id: wallet.id,
    customer_id: wallet.customer_id,
    portfolio_id: wallet.portfolio_id,
    status: 'PENDING',
    routed_by: route.route,
    pending_credit_id: credit.pendingCreditId,
    return_code: null,
    failure_reason: null,
    settle_at: plan.settleAt,
    planned_outcome: plan.settleAt === null ? null : plan.outcome,
    planned_return_code: plan.settleAt !== null && plan.outcome === 'FAILED' ? plan.returnCode : null,
    planned_failure_reason: plan.settleAt !== null && plan.outcome === 'FAILED' ? plan.failureReason : null,
  };
  await store.insertBankTransfer(tx, { ...transfer, counterparty: JSON.stringify(sender), beneficiary: null });
  const child: store.BankTransactionRow = {
    client_id: context.clientId,
    id: childId,
    bank_transfer_id: transferId,
    type: 'DEPOSIT_INITIATED',
    status: 'PENDING',
    return_code: null,
    failure_reason: null,
    created_at: context.now,
  };
  await store.insertBankTransaction(tx, child);
  await recordEvent(tx, context, 'BANK_DEPOSIT_TRANSACTION_PENDING', bankEventData(transfer, { id: childId }));
  return { routed: true, transaction: bankTransactionView(transfer, child) };
}
