import { Type } from 'typebox';
import { Text } from '../../../platform/http/envelope.js';
import { PersonTypeCodeSchema, RemittanceMemoSchema, TransferNetworkSchema, accountNumberLengthMax } from '../withdrawal-rules.js';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });
const text = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const BankNetworkSchema = Type.Union([Type.Literal('ACH'), Type.Literal('FEDWIRE'), Type.Literal('SWIFT'), Type.Literal('UNSPECIFIED')], {
  description: 'ACH, FEDWIRE, SWIFT or UNSPECIFIED (the network could not be determined)',
});

export const BankTransactionTypeSchema = Type.Union([
  Type.Literal('DEPOSIT_INITIATED'),
  Type.Literal('DEPOSIT_SUCCESS'),
  Type.Literal('DEPOSIT_FAILURE'),
  Type.Literal('WITHDRAWAL_INITIATED'),
  Type.Literal('WITHDRAWAL_SUCCESS'),
  Type.Literal('WITHDRAWAL_FAILURE'),
]);
export const BankStatusSchema = Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('FAILED')]);

export const BankCounterpartySchema = Type.Object(
  {
    name: Type.String(),
    givenName: text('given name of a person sender'),
    surname: text('surname of a person sender'),
    accountNumber: Type.String(),
    swiftCode: text('BIC/SWIFT of the sender\'s bank'),
    routingNumber: text('ABA routing number of the sender\'s bank'),
    financialInstitutionId: text('the sender\'s bank when it is identified by neither BIC nor ABA number'),
    street1: text('street'),
    street2: text('street, second line'),
    cityCounty: text('city'),
    stateRegion: text('state or region'),
    countryCode: text('ISO 3166-1 alpha-2'),
    zip: text('postal code'),
    addressLine: text('the address as one line, when the rail sent it so'),
  },
  { title: 'BankCounterparty', description: 'the sender of a deposit' },
);

export const BeneficiarySchema = Type.Object(
  {
    name: Type.String(),
    personTypeCode: Type.Union([Type.Literal('P'), Type.Literal('L')]),
    accountNumber: Type.String(),
    routingNumber: text('ABA routing number (ACH and FEDWIRE_DOMESTIC)'),
    bicSwiftCode: text('BIC (FEDWIRE_CROSSBORDER and SWIFT)'),
    intermediaryBankBic: text('intermediary bank of a cross-border payment'),
    bankName: Type.String({ description: 'from the bank directory' }),
    bankAddress: text('from the bank directory'),
    bankCity: text('from the bank directory'),
    bankState: text('from the bank directory (US banks)'),
    bankCountry: Type.String({ description: 'ISO 3166-1 alpha-2' }),
    street1: Type.String(),
    street2: text('street, second line'),
    cityCounty: Type.String(),
    stateRegion: Type.String(),
    zip: Type.String(),
    countryCode: Type.String(),
    identificationTypeCode: text('party identification type'),
    identificationValue: text('party identification, masked to its last four characters'),
  },
  { title: 'Beneficiary', description: 'the receiver of a withdrawal, as it was sent' },
);

const bankTransactionProperties = {
  id: Type.String({ description: 'this record' }),
  parentBankTransactionId: Type.String({ description: 'the payment this record belongs to' }),
  parentTransactionId: Type.String({ description: 'parent of the payment\'s records in GET /v1/transactions (the same id)' }),
  walletId: nullable(Type.String(), 'null only for a deposit that could not be routed to a wallet'),
  customerId: nullable(Type.String()),
  direction: Type.Union([Type.Literal('DEPOSIT'), Type.Literal('WITHDRAWAL')]),
  type: BankTransactionTypeSchema,
  operation: Type.Union([Type.Literal('CREDIT'), Type.Literal('DEBIT')]),
  status: BankStatusSchema,
  amount: Type.String({ description: 'decimal string', examples: ['250.00'] }),
  asset: Type.String({ examples: ['USD'] }),
  bankNetwork: nullable(BankNetworkSchema),
  transferNetwork: Type.Union(
    [
      Type.Literal('ACH_DOMESTIC'),
      Type.Literal('ACH_CROSSBORDER'),
      Type.Literal('FEDWIRE_DOMESTIC'),
      Type.Literal('FEDWIRE_CROSSBORDER'),
      Type.Literal('SWIFT'),
      Type.Null(),
    ],
    { description: 'withdrawals only' },
  ),
  counterparty: nullable(BankCounterpartySchema, 'the sender for deposits; null for withdrawals'),
  beneficiary: nullable(BeneficiarySchema, 'the receiver for withdrawals; null for deposits'),
  counterpartyId: nullable(Type.String(), 'the saved counterparty a withdrawal was sent to'),
  remittanceMemo: nullable(Type.String()),
  endToEndId: Type.String({ description: 'ACH trace number, Fedwire IMAD or SWIFT UETR' }),
  receivingAccountNumber: nullable(Type.String(), 'deposits: the number the sender paid to'),
  returnCode: nullable(Type.String(), 'why the payment failed: an ACH R-code or an ISO 20022 reason code'),
  failureReason: nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
};

export const BankTransactionSchema = Type.Object(bankTransactionProperties, { title: 'BankTransaction' });

export const BankTransferGroupSchema = Type.Object(
  {
    ...bankTransactionProperties,
    id: Type.String({ description: 'the payment (the same as parentBankTransactionId)' }),
    type: Type.Union(BankTransactionTypeSchema.anyOf, { description: 'type of the latest record' }),
    children: Type.Array(BankTransactionSchema, { description: 'every record of the payment, oldest first' }),
  },
  { title: 'BankTransactionGroup' },
);

/** Every optional field of the withdrawal body takes null, which means the same as leaving it out. */
const optionalNullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Optional(Type.Union([schema, Type.Null()], description === undefined ? {} : { description }));
const optionalNullableText = (maxLength: number, description?: string) => optionalNullable(Type.String({ minLength: 1, maxLength }), description);
const nameOrAddressRule = 'no control characters, line breaks, invisible formatting characters (Unicode Cc, Cf) or noncharacters, not only white space';

export const WithdrawalBody = Type.Object(
  {
    walletId: Text.id({ description: 'the wallet paying; it must be linked to a virtual account' }),
    amount: Text.amount(),
    asset: optionalNullableText(16, 'USD (default); USD_TEST in the sandbox'),
    counterpartyId: optionalNullable(
      Text.id(),
      'a saved counterparty of the wallet\'s portfolio; it supplies the beneficiary fields, which the body then leaves out',
    ),
    name: optionalNullableText(140, `beneficiary name (required without counterpartyId); ${nameOrAddressRule}`),
    transferNetwork: optionalNullable(TransferNetworkSchema, 'ACH_DOMESTIC, ACH_CROSSBORDER, FEDWIRE_DOMESTIC, FEDWIRE_CROSSBORDER or SWIFT (required without counterpartyId)'),
    personTypeCode: PersonTypeCodeSchema,
    // No minLength: an empty identifier is given and malformed, answered by the network's rule
    // (INVALID_ROUTING_NUMBER, INVALID_SWIFT_CODE, not allowed) as on counterparties.
    routingNumber: optionalNullable(Type.String({ maxLength: 34 }), 'ABA routing number: required for ACH_DOMESTIC, ACH_CROSSBORDER and FEDWIRE_DOMESTIC, not allowed otherwise'),
    bicSwiftCode: optionalNullable(Type.String({ maxLength: 34 }), 'SWIFT/BIC: required for FEDWIRE_CROSSBORDER and SWIFT, not allowed otherwise'),
    accountNumber: optionalNullableText(accountNumberLengthMax, 'account number or IBAN (an IBAN is kept in its electronic form: upper case, no spaces)'),
    street1: optionalNullableText(140, nameOrAddressRule),
    street2: optionalNullableText(140, nameOrAddressRule),
    cityCounty: optionalNullableText(100, nameOrAddressRule),
    stateRegion: optionalNullableText(100, nameOrAddressRule),
    zip: optionalNullableText(20, nameOrAddressRule),
    countryCode: optionalNullableText(2, 'ISO 3166-1 alpha-2'),
    identificationTypeCode: optionalNullableText(35, 'party identification type'),
    identificationValue: optionalNullableText(35, 'party identification'),
    remittanceMemo: Type.Optional(Type.Union([RemittanceMemoSchema, Type.Null()])),
    intermediaryBankBic: optionalNullableText(20, 'intermediary bank of a cross-border payment: at most 11 characters, a valid BIC of a bank the directory knows (404 BANK_NOT_FOUND otherwise)'),
  },
  {
    additionalProperties: false,
    // One schema in the OpenAPI document for the route and its alias (the SDK types it once).
    title: 'BankWithdrawalRequest',
    examples: [
      {
        walletId: '019ca945-0a00-74c1-8797-3bfde107f365',
        amount: '250.00',
        name: 'Grace Hopper',
        transferNetwork: 'ACH_DOMESTIC',
        personTypeCode: 'P',
        routingNumber: '021000021',
        accountNumber: '123456789',
        street1: '1 Main Street',
        cityCounty: 'Arlington',
        stateRegion: 'VA',
        zip: '22201',
        countryCode: 'US',
        remittanceMemo: 'Invoice 42',
      },
    ],
  },
);
