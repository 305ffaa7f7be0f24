import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import {
  BankTransactionSchema,
  failBankTransaction,
  receiveDeposit,
  returnCodePattern,
  settleBankTransaction,
  type BankTransferRuntime,
} from '../../bank-transfers/index.js';

const tags = ['Sandbox'];

const textRule = 'no control characters, line breaks, invisible formatting characters (Unicode Cc, Cf) or noncharacters and are not only white space';

const optional = (maxLength: number, description?: string) =>
  Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength }), Type.Null()], description === undefined ? {} : { description }));

const DepositBody = Type.Object(
  {
    accountNumber: Type.String({
      minLength: 1,
      maxLength: 34,
      description: 'where the sender pays: a virtual account number, a dedicated account number, a VRN, or the master account (reference in memo)',
    }),
    amount: Text.amount(),
    asset: Type.String({ minLength: 1, maxLength: 16, description: 'USD or USD_TEST' }),
    network: Type.Optional(
      Type.Union([Type.Literal('ACH'), Type.Literal('FEDWIRE'), Type.Literal('SWIFT'), Type.Null()], {
        description: 'the rail it arrives on; null or absent reports bankNetwork UNSPECIFIED',
      }),
    ),
    counterparty: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 140 }),
        givenName: optional(100),
        surname: optional(100),
        accountNumber: Type.String({ minLength: 1, maxLength: 34, description: 'the sender\'s account; a magic value ending in a return code makes the deposit fail' }),
        swiftCode: optional(34, 'BIC of the sender\'s bank (form checked)'),
        routingNumber: optional(34, 'ABA routing number of the sender\'s bank (checksum checked)'),
        financialInstitutionId: optional(35, 'the sender\'s bank when it has neither BIC nor ABA number'),
        street1: optional(140),
        street2: optional(140),
        cityCounty: optional(100),
        stateRegion: optional(100),
        countryCode: optional(2),
        zip: optional(20),
        addressLine: optional(280),
      },
      { additionalProperties: false, description: 'the sender' },
    ),
    memo: optional(140, 'the payment\'s memo; for the master account it must hold the reference (the wallet\'s virtual account number)'),
  },
  {
    additionalProperties: false,
    examples: [
      {
        accountNumber: '720000000011',
        amount: '1000.00',
        asset: 'USD',
        network: 'ACH',
        counterparty: { name: 'Charles Babbage', accountNumber: '987654321', routingNumber: '021000021' },
        memo: 'Salary',
      },
    ],
    description: `Text fields (accountNumber, memo and the sender's names, account and address) hold ${textRule}.`,
  },
);

const idParams = Type.Object({ id: Text.id({ description: 'the payment (parentBankTransactionId) or any of its records' }) });

/**
 * Sandbox controls of the bank rail (CONTRACT §10): the outside world sends a deposit, or the
 * rail settles or returns a pending payment now. Registered only in sandbox mode.
 */
export function registerSandboxBankRoutes(app: App, deps: Deps, runtime: BankTransferRuntime): void {
  app.post(
    '/v1/sandbox/bank-deposits',
    {
      schema: {
        operationId: 'sandbox.createBankDeposit',
        tags,
        summary: 'Send a bank deposit to one of your accounts (sandbox)',
        description:
          'Acts as a sender\'s bank. The deposit is routed among your wallets by accountNumber (virtual account number, dedicated account ' +
          'number or VRN), or, for the master account, by the reference (a virtual account number) in memo. A routed deposit is PENDING ' +
          '(PENDING balance, BANK_DEPOSIT_TRANSACTION_PENDING) until it settles after SANDBOX_BANK_SETTLEMENT_DELAY_MS or by the settle ' +
          'control. An unroutable one is returned at once: a FAILED record, BANK_DEPOSIT_TRANSACTION_FAILED with walletId null.',
        body: DepositBody,
        response: { 201: Envelope(BankTransactionSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => {
        const outcome = await receiveDeposit(tx, context, request.body, runtime);
        return {
          statusCode: 201,
          message: outcome.routed ? 'Deposit received' : 'Deposit could not be routed to a wallet and was returned to the sender',
          data: outcome.transaction,
        };
      }),
  );

  app.post(
    '/v1/sandbox/bank-transactions/:id/settle',
    {
      schema: {
        operationId: 'sandbox.settleBankTransaction',
        tags,
        summary: 'Settle a pending bank deposit or withdrawal now (sandbox)',
        description:
          'A deposit clears into AVAILABLE; a withdrawal\'s reserved amount leaves the wallet. Emits the COMPLETED event and answers the ' +
          'SUCCESS record. 409 BANK_TRANSFER_NOT_PENDING when it already settled or failed. Takes no body (none, or {}; a field is a 400).',
        params: idParams,
        response: { 200: Envelope(BankTransactionSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Bank transaction settled',
        data: await settleBankTransaction(tx, context, request.params.id),
      })),
  );

  app.post(
    '/v1/sandbox/bank-transactions/:id/fail',
    {
      schema: {
        operationId: 'sandbox.failBankTransaction',
        tags,
        summary: 'Fail (return) a pending bank deposit or withdrawal, or return a settled withdrawal or ACH deposit, now (sandbox)',
        description:
          'A withdrawal\'s reserved amount returns to AVAILABLE in full; a deposit\'s pending amount goes back to the sender. A withdrawal ' +
          'that settled already comes back after settlement (as an ACH return does, days later): its amount is credited back to AVAILABLE ' +
          'from the bank\'s settlement account. A settled ACH deposit can be taken back the same way (a late return, an unauthorized ' +
          'entry): its amount leaves AVAILABLE even when the wallet has spent it, and the wallet is then overdrawn by what it lacked. ' +
          'Emits the FAILED event with returnCode (default R03 on ACH, R06 for a settled ACH deposit, MS03 elsewhere) and answers the FAILURE record; the payment is ' +
          'FAILED. 409 BANK_TRANSFER_NOT_PENDING when it failed already, or for a settled Fedwire, SWIFT or unspecified deposit (final).',
        params: idParams,
        body: Type.Object(
          {
            returnCode: Type.Optional(
              Type.Union([Type.String({ pattern: returnCodePattern, maxLength: 8 }), Type.Null()], { description: 'an ACH R-code (R01) or an ISO 20022 reason code (AC04); null is the same as absent' }),
            ),
            reason: Type.Optional(
              Type.Union([Type.String({ minLength: 1, maxLength: 500 }), Type.Null()], { description: `defaults to the code's description; ${textRule.replace(' and are ', ', ')}; null is the same as absent` }),
            ),
          },
          { additionalProperties: false, examples: [{ returnCode: 'R02', reason: 'Account closed' }] },
        ),
        response: { 200: Envelope(BankTransactionSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Bank transaction failed',
        data: await failBankTransaction(tx, context, request.params.id, { returnCode: request.body.returnCode ?? undefined, reason: request.body.reason ?? undefined }),
      })),
  );
}
