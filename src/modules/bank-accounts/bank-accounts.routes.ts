import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { ConfigError, type OperatingBankConfig } from '../../platform/config.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, Text } from '../../platform/http/envelope.js';
import { runWrite } from '../../platform/http/idempotency.js';
import { checkBic, checkRoutingNumber } from '../bank-directory/index.js';
import type { AccountNumberSerialKeys } from './account-numbers.js';
import { assignDedicatedAccountNumber, assignVrn, bankingDetails } from './bank-accounts.service.js';

const walletIdExample = '019ca945-0a00-74c1-8797-3bfde107f365';

const DedicatedAccountNumberSchema = Type.Object(
  {
    walletId: Type.String({ format: 'uuid' }),
    virtualAccountNumber: Type.String({ examples: ['700000000017'] }),
    dedicatedAccountNumber: Type.String({
      pattern: '^71[0-9]{10}$',
      description: '12 digits: "71", a 9-digit serial (scrambled: numbers are not handed out in order) and a Luhn check digit; unique across the platform and never reused',
      examples: ['710000000014'],
    }),
  },
  { title: 'DedicatedAccountNumber' },
);

const VrnSchema = Type.Object(
  {
    walletId: Type.String({ format: 'uuid' }),
    vrnNumber: Type.String({
      pattern: '^72[0-9]{10}$',
      description: 'the VRN: 12 digits, "72", a 9-digit serial (scrambled: VRNs are not handed out in order) and a Luhn check digit; unique across the platform and never reused',
      examples: ['720000000011'],
    }),
    virtualAccountNumber: Type.String({ examples: ['700000000017'] }),
  },
  { title: 'Vrn' },
);

const Beneficiary = Type.Object({
  name: Type.String({ description: 'the account holder: the person\'s full name or the business\'s legal name', examples: ['Ada Lovelace'] }),
  address: Type.Union([Type.String(), Type.Null()], { description: 'the customer\'s registration (or main business) address; null when not on file' }),
  account_number: Type.String({ description: 'the number the sender pays to', examples: ['720000000011'] }),
});
const UsBank = Type.Object({
  name: Type.String({ examples: ['OpenBaaS Sandbox Bank (fictional)'] }),
  routing_number: Type.String({ examples: ['026009991'] }),
  bank_address: Type.String(),
});

const AchDetailsSchema = Type.Object(
  { beneficiary: Beneficiary, beneficiary_bank: UsBank, vrn: Type.String({ description: 'the wallet\'s VRN (ACH needs one)' }) },
  { title: 'AchBankingDetails', description: 'account_number is the dedicated account number when assigned, else the VRN' },
);
const FedwireDetailsSchema = Type.Object(
  {
    beneficiary: Beneficiary,
    beneficiary_bank: UsBank,
    vrn: Type.Optional(Type.String({ description: 'present when the wallet has a VRN; then no reference is needed' })),
    reference: Type.Optional(
      Type.String({ description: 'present when account_number is the master account: write it in the wire\'s memo so the deposit reaches this wallet' }),
    ),
  },
  { title: 'FedwireBankingDetails' },
);
const SwiftDetailsSchema = Type.Object(
  {
    beneficiary: Beneficiary,
    beneficiary_bank: Type.Object({ name: Type.String(), swift: Type.String({ examples: ['OBSBUS30'] }), bank_address: Type.String() }),
    intermediary_bank: Type.Object({ name: Type.String(), routing_number: Type.String(), bic_code: Type.String({ examples: ['OBCBUS30'] }) }),
    reference: Type.Optional(Type.String({ description: 'present when account_number is the master account: write it in the payment\'s remittance information' })),
  },
  { title: 'SwiftBankingDetails' },
);

/** Refuses to start with an operating bank whose routing numbers fail the ABA checksum or whose BICs are malformed. */
export function checkOperatingBank(bank: OperatingBankConfig): void {
  const checks: [string, boolean][] = [
    ['OPERATING_BANK_ROUTING_NUMBER', checkRoutingNumber(bank.routingNumber).ok],
    ['INTERMEDIARY_BANK_ROUTING_NUMBER', checkRoutingNumber(bank.intermediaryRoutingNumber).ok],
    ['OPERATING_BANK_SWIFT_CODE', checkBic(bank.swiftCode).ok],
    ['INTERMEDIARY_BANK_BIC', checkBic(bank.intermediaryBic).ok],
  ];
  for (const [name, ok] of checks) {
    if (!ok) throw new ConfigError(`${name} is not a valid ${name.includes('ROUTING') ? 'ABA routing number (checksum)' : 'SWIFT/BIC code (ISO 9362)'}`);
  }
}

/** `serialKeys` key the permutations of the serials of new numbers (accountNumberSerialKeys in modules/routes.ts). */
export function registerBankAccountRoutes(app: App, deps: Deps, serialKeys: AccountNumberSerialKeys): void {
  checkOperatingBank(deps.config.operatingBank);
  const tags = ['Virtual accounts'];

  for (const base of ['/v1/virtual-accounts', '/v1/baas/virtual-accounts']) {
    const alias = base === '/v1/virtual-accounts' ? '' : ' (alias)';
    const idPrefix = base === '/v1/virtual-accounts' ? 'virtualAccounts' : 'baas.virtualAccounts';
    app.post(
      `${base}/assign-dedicated-account-number`,
      {
        schema: {
          operationId: `${idPrefix}.assignDedicatedAccountNumber`,
          tags,
          summary: `Assign a dedicated account number to a wallet${alias}`,
          description:
            'The wallet must already have a virtual account (409 VIRTUAL_ACCOUNT_REQUIRED). Assigning twice returns the number the wallet ' +
            'already has (200 instead of 201). Numbers are unique across the platform and never reused.',
          body: Type.Object(
            { walletId: Text.id({ description: 'a wallet with a virtual account' }) },
            { additionalProperties: false, examples: [{ walletId: walletIdExample }] },
          ),
          response: { 200: Envelope(DedicatedAccountNumberSchema), 201: Envelope(DedicatedAccountNumberSchema) },
        },
      },
      async (request, reply) =>
        runWrite(request, reply, deps, async (tx, context) => {
          const result = await assignDedicatedAccountNumber(tx, context, request.body.walletId, serialKeys);
          return {
            statusCode: result.created ? 201 : 200,
            message: result.created ? 'Dedicated account number assigned' : 'The wallet already has a dedicated account number',
            data: result.data,
          };
        }),
    );

    app.post(
      `${base}/assign-vrn`,
      {
        schema: {
          operationId: `${idPrefix}.assignVrn`,
          tags,
          summary: `Assign a VRN (virtual reference number) to a customer's virtual account${alias}`,
          description:
            'userId is the customer; virtualAccountNumber names which of the customer\'s wallets gets the VRN (404 when it is not one of ' +
            'theirs). Assigning twice returns the VRN the wallet already has (200 instead of 201). VRNs are unique across the platform and ' +
            'never reused; ACH deposit instructions need one.',
          body: Type.Object(
            {
              userId: Text.id({ description: 'customer id' }),
              virtualAccountNumber: Type.String({ minLength: 1, maxLength: 34, description: 'the virtual account number of one of the customer\'s wallets' }),
            },
            { additionalProperties: false, examples: [{ userId: '019ca945-09f0-7a61-b2c4-55e0d1c0a0b1', virtualAccountNumber: '700000000017' }] },
          ),
          response: { 200: Envelope(VrnSchema), 201: Envelope(VrnSchema) },
        },
      },
      async (request, reply) =>
        runWrite(request, reply, deps, async (tx, context) => {
          const result = await assignVrn(tx, context, request.body, serialKeys);
          return {
            statusCode: result.created ? 201 : 200,
            message: result.created ? 'VRN assigned' : 'The wallet already has a VRN',
            data: result.data,
          };
        }),
    );

    app.get(
      `${base}/banking-details/:walletId`,
      {
        schema: {
          operationId: `${idPrefix}.getBankingDetails`,
          tags,
          summary: `Deposit instructions for a wallet${alias}`,
          description:
            'type=ACH needs a VRN (409 VRN_NOT_ASSIGNED); its account_number is the dedicated account number or the VRN. type=FEDWIRE gives ' +
            'the dedicated account number, else the VRN, else the master account with a reference to write in the memo. type=SWIFT gives ' +
            'the nested beneficiary, beneficiary_bank and intermediary_bank blocks. The wallet needs a virtual account (409 ' +
            'VIRTUAL_ACCOUNT_REQUIRED).',
          params: Type.Object({ walletId: Text.id() }),
          querystring: Type.Object(
            { type: Type.Union([Type.Literal('ACH'), Type.Literal('FEDWIRE'), Type.Literal('SWIFT')], { description: 'ACH, FEDWIRE or SWIFT' }) },
            { additionalProperties: false },
          ),
          response: { 200: Envelope(Type.Union([SwiftDetailsSchema, AchDetailsSchema, FedwireDetailsSchema])) },
        },
      },
      async (request) => ({
        message: 'Banking details retrieved',
        data: await bankingDetails(deps.db, authOf(request).clientId, deps.config.operatingBank, request.params.walletId, request.query.type),
        traceId: String(request.id),
      }),
    );
  }
}
