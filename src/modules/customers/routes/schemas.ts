import { Type, type TSchema } from 'typebox';
import {
  addressLimits,
  businessIdentificationTypeCodes,
  businessIdentificationTypes,
  businessStructureTypeCodes,
  businessStructureTypes,
  documentNumberLengthMax,
  emailLengthMax,
  nameLengthMax,
  occupationCodes,
  occupationGroups,
  personRoles,
  sexValues,
} from '../customer-rules.js';

/** Request and response schemas of the customers module: they validate, serialise and document. */

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const occupationDescription =
  'Occupation macro-category: a major group of the US Standard Occupational Classification (SOC 2018). ' +
  Object.entries(occupationGroups)
    .map(([code, name]) => `${code} ${name}`)
    .join('; ') +
  '.';

const structureTypeDescription =
  'Legal structure of the business: ' +
  Object.entries(businessStructureTypes)
    .map(([code, name]) => `${code} (${name})`)
    .join(', ') +
  '.';

const identificationTypeDescription =
  'Kind of company identifier: ' +
  Object.entries(businessIdentificationTypes)
    .map(([code, name]) => `${code} (${name})`)
    .join(', ') +
  '.';

const Country = (description: string) =>
  Type.String({ minLength: 1, maxLength: 8, description: `${description} (ISO 3166-1 alpha-2, capitals)`, examples: ['US'] });
const CalendarDate = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: 10, description: `${description} (YYYY-MM-DD)`, examples: [example] });
const Name = (description: string, example: string) => Type.String({ minLength: 1, maxLength: nameLengthMax, description, examples: [example] });
const DocumentNumber = (description: string) =>
  Type.String({ minLength: 1, maxLength: documentNumberLengthMax, description: `${description}; encrypted at rest` });

export const AddressInput = Type.Object(
  {
    street1: Type.String({ minLength: 1, maxLength: addressLimits.street, examples: ['350 Fifth Avenue'] }),
    street2: Type.Optional(nullable(Type.String({ maxLength: addressLimits.street, examples: ['Suite 4100'] }))),
    cityCounty: Type.String({ minLength: 1, maxLength: addressLimits.cityCounty, examples: ['New York'] }),
    stateRegion: Type.String({ minLength: 1, maxLength: addressLimits.stateRegion, examples: ['NY'] }),
    zip: Type.String({ minLength: 1, maxLength: addressLimits.zip, examples: ['10118'] }),
    countryCode: Country('country'),
  },
  { additionalProperties: false, title: 'AddressInput' },
);

export const AddressView = Type.Object(
  {
    street1: Type.String(),
    street2: nullable(Type.String()),
    cityCounty: Type.String(),
    stateRegion: Type.String(),
    zip: Type.String(),
    countryCode: Type.String(),
  },
  { title: 'Address' },
);

const Email = Type.String({ format: 'email', minLength: 3, maxLength: emailLengthMax, examples: ['ada@example.com'] });
const PhoneNumber = Type.String({
  minLength: 2,
  maxLength: 30,
  description: 'national number; spaces, dots, dashes and parentheses are removed',
  examples: ['212 555 0123'],
});
const PhoneCountryCode = Type.String({ minLength: 1, maxLength: 5, description: 'dialling code, 1 to 4 digits (a leading + is dropped)', examples: ['1'] });
const MembershipProgramRef = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'membership program id or display name (case-insensitive); the default program when omitted',
  examples: ['Premium'],
});
const Occupation = Type.Enum(occupationCodes, { description: occupationDescription, examples: ['15'] });
const Sex = Type.Enum(sexValues, { description: 'sex as on the identity document' });
const IpAddress = Type.String({ minLength: 2, maxLength: 45, description: 'IPv4 or IPv6 address of the customer at sign-up', examples: ['203.0.113.7'] });

const kycCreateProperties = {
  firstName: Name('given name', 'Ada'),
  middleName: Type.Optional(nullable(Type.String({ maxLength: nameLengthMax }))),
  lastName: Name('family name', 'Lovelace'),
  sex: Type.Optional(nullable(Sex)),
  birthDate: CalendarDate('date of birth, a real date in the past', '1990-12-10'),
  nationality: Country('nationality'),
  documentSsn: Type.Optional(
    nullable(Type.String({ minLength: 1, maxLength: 11, description: 'US Social Security number (123-45-6789 or 9 digits); encrypted at rest and only ever returned masked', examples: ['123-45-6789'] })),
  ),
  documentIdCard: Type.Optional(nullable(DocumentNumber('identity card number'))),
  documentLicense: Type.Optional(nullable(DocumentNumber('driving licence number'))),
  documentPassport: Type.Optional(nullable(DocumentNumber('passport number'))),
  taxIdCountry: Type.Optional(nullable(Country('country that issued the SSN or tax id; may differ from nationality'))),
  occupation: Type.Optional(nullable(Occupation)),
  ipAddress: Type.Optional(nullable(IpAddress)),
  mainAddress: Type.Optional(nullable(AddressInput)),
};

export const IndividualCreateBody = Type.Object(
  {
    email: Email,
    phoneNumber: PhoneNumber,
    phoneCountryCode: PhoneCountryCode,
    membershipProgram: Type.Optional(MembershipProgramRef),
    kyc: Type.Object(kycCreateProperties, { additionalProperties: false, description: 'identity data (KYC)' }),
    billingAddress: Type.Optional(nullable(AddressInput)),
    deliveryAddress: Type.Optional(nullable(AddressInput)),
  },
  {
    additionalProperties: false,
    title: 'IndividualCustomerCreate',
    examples: [
      {
        email: 'ada@example.com',
        phoneNumber: '212 555 0123',
        phoneCountryCode: '1',
        membershipProgram: 'Standard',
        kyc: {
          firstName: 'Ada',
          lastName: 'Lovelace',
          sex: 'FEMALE',
          birthDate: '1990-12-10',
          nationality: 'US',
          documentSsn: '123-45-6789',
          taxIdCountry: 'US',
          occupation: '15',
          ipAddress: '203.0.113.7',
          mainAddress: { street1: '350 Fifth Avenue', cityCounty: 'New York', stateRegion: 'NY', zip: '10118', countryCode: 'US' },
        },
      },
    ],
  },
);

export const IndividualPatchBody = Type.Object(
  {
    email: Type.Optional(Email),
    phoneNumber: Type.Optional(PhoneNumber),
    phoneCountryCode: Type.Optional(PhoneCountryCode),
    membershipProgram: Type.Optional(MembershipProgramRef),
    kyc: Type.Optional(
      Type.Object(
        {
          ...kycCreateProperties,
          firstName: Type.Optional(kycCreateProperties.firstName),
          lastName: Type.Optional(kycCreateProperties.lastName),
          birthDate: Type.Optional(kycCreateProperties.birthDate),
          nationality: Type.Optional(kycCreateProperties.nationality),
        },
        {
          additionalProperties: false,
          minProperties: 1,
          description:
            'fields to change (at least one); null clears an optional field. Names, sex, birth date, nationality, documents and mainAddress can change only before onboarding or while it is PENDING or PROCESSING; a change after the identity verification approved the person sends the verification to MANUAL_REVIEW.',
        },
      ),
    ),
    billingAddress: Type.Optional(nullable(AddressInput)),
    deliveryAddress: Type.Optional(nullable(AddressInput)),
  },
  { additionalProperties: false, minProperties: 1, title: 'IndividualCustomerUpdate', examples: [{ membershipProgram: 'Premium', kyc: { occupation: '13' } }] },
);

const TaxInformation = Type.Object(
  {
    taxId: Type.String({ minLength: 1, maxLength: 30, description: 'tax identification number, for example a US EIN', examples: ['12-3456789'] }),
    taxIdCountry: Country('country that issued the tax id'),
  },
  { additionalProperties: false },
);
const Identification = Type.Object(
  {
    type: Type.Enum(businessIdentificationTypeCodes, { description: identificationTypeDescription }),
    number: Type.String({ minLength: 1, maxLength: 40, examples: ['5512345'] }),
    issuingCountry: Country('country of the register or issuer'),
  },
  { additionalProperties: false },
);

const kybProperties = {
  legalName: Type.String({ minLength: 1, maxLength: 200, description: 'registered legal name', examples: ['Analytical Engines LLC'] }),
  tradeName: Type.Optional(nullable(Type.String({ maxLength: 200, description: 'name the business trades under' }))),
  structureType: Type.Optional(nullable(Type.Enum(businessStructureTypeCodes, { description: structureTypeDescription }))),
  naicsCode: Type.Optional(
    nullable(Type.String({ minLength: 1, maxLength: 6, description: 'NAICS sector code, 2 to 6 digits (for example 52 Finance and Insurance, 5415 Computer Systems Design)', examples: ['5415'] })),
  ),
  incorporationDate: Type.Optional(nullable(CalendarDate('date of incorporation', '2019-04-01'))),
  incorporationCountry: Type.Optional(nullable(Country('country of incorporation'))),
  // http or https only: a script URL (javascript:) is a URI too, and a UI may render this as a link.
  website: Type.Optional(nullable(Type.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/]', maxLength: 200, description: 'an http or https URL of a domain name, without a user name or password', examples: ['https://engines.example.com'] }))),
  taxInformation: Type.Optional(nullable(TaxInformation)),
  identification: Type.Optional(nullable(Identification)),
  mainAddress: Type.Optional(nullable(AddressInput)),
};

export const BusinessCreateBody = Type.Object(
  {
    email: Email,
    // Optional for a business: both or neither; null is the same as absent (as a PATCH clears it).
    phoneNumber: Type.Optional(nullable(PhoneNumber)),
    phoneCountryCode: Type.Optional(nullable(PhoneCountryCode)),
    membershipProgram: Type.Optional(MembershipProgramRef),
    kyb: Type.Optional(Type.Object(kybProperties, { additionalProperties: false, description: 'business data (KYB); mainAddress is the main business address' })),
    billingAddress: Type.Optional(nullable(AddressInput)),
    deliveryAddress: Type.Optional(nullable(AddressInput)),
  },
  {
    additionalProperties: false,
    title: 'BusinessCustomerCreate',
    examples: [
      {
        email: 'finance@engines.example.com',
        phoneNumber: '212 555 0188',
        phoneCountryCode: '1',
        kyb: {
          legalName: 'Analytical Engines LLC',
          structureType: 'LLC',
          naicsCode: '5415',
          incorporationDate: '2019-04-01',
          incorporationCountry: 'US',
          taxInformation: { taxId: '12-3456789', taxIdCountry: 'US' },
          identification: { type: 'REGISTRATION_NUMBER', number: '5512345', issuingCountry: 'US' },
          mainAddress: { street1: '1 Market Street', cityCounty: 'San Francisco', stateRegion: 'CA', zip: '94105', countryCode: 'US' },
        },
      },
    ],
  },
);

export const BusinessPatchBody = Type.Object(
  {
    email: Type.Optional(Email),
    // A business's phone is optional: both null clear it (both or neither, as at creation).
    phoneNumber: Type.Optional(nullable(PhoneNumber)),
    phoneCountryCode: Type.Optional(nullable(PhoneCountryCode)),
    membershipProgram: Type.Optional(MembershipProgramRef),
    kyb: Type.Optional(
      Type.Object(
        { ...kybProperties, legalName: Type.Optional(kybProperties.legalName) },
        {
          additionalProperties: false,
          minProperties: 1,
          description:
            'fields to change (at least one); null clears an optional field. Changes only before onboarding or while it is PENDING or PROCESSING; a change after the business review\'s verdict sends the review back to PENDING.',
        },
      ),
    ),
    billingAddress: Type.Optional(nullable(AddressInput)),
    deliveryAddress: Type.Optional(nullable(AddressInput)),
  },
  { additionalProperties: false, minProperties: 1, title: 'BusinessCustomerUpdate', examples: [{ kyb: { naicsCode: '52' } }] },
);

// ---- responses ----

export const WalletView = Type.Object(
  {
    id: Type.String(),
    customerId: Type.String(),
    portfolioId: Type.String(),
    name: Type.String(),
    primary: Type.Boolean({ description: 'the customer\'s primary wallet (used when a walletId is omitted, for example by debit cards)' }),
    virtualAccount: nullable(
      Type.Object({
        virtualAccountNumber: Type.String(),
        dedicatedAccountNumber: nullable(Type.String()),
        vrn: nullable(Type.String()),
      }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Wallet', description: 'a multi-asset wallet: its balances per asset come from GET /v1/wallets/:id/balance' },
);

export const PortfolioView = Type.Object(
  {
    id: Type.String(),
    customerId: Type.String(),
    name: Type.String(),
    default: Type.Boolean(),
    wallets: Type.Array(Type.String(), { description: 'wallet ids, oldest first' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Portfolio' },
);

const KycView = Type.Object(
  {
    firstName: Type.String(),
    middleName: nullable(Type.String()),
    lastName: Type.String(),
    sex: nullable(Type.String()),
    birthDate: nullable(Type.String()),
    documentSsn: nullable(Type.String({ description: 'masked, for example ***-**-6789' })),
    documentIdCard: nullable(Type.String({ description: 'masked: the last four characters, for example *D-99 (the clear value: the vault\'s documents:reveal)' })),
    documentLicense: nullable(Type.String({ description: 'masked: the last four characters' })),
    documentPassport: nullable(Type.String({ description: 'masked: the last four characters, for example ****4567' })),
    nationality: nullable(Type.String()),
    taxIdCountry: nullable(Type.String()),
    occupation: nullable(Type.String()),
    ipAddress: nullable(Type.String()),
    mainAddress: nullable(AddressView),
  },
  { title: 'CustomerKyc' },
);

const KybView = Type.Object(
  {
    legalName: nullable(Type.String()),
    tradeName: nullable(Type.String()),
    structureType: nullable(Type.String()),
    naicsCode: nullable(Type.String()),
    incorporationDate: nullable(Type.String()),
    incorporationCountry: nullable(Type.String()),
    website: nullable(Type.String()),
    taxInformation: nullable(Type.Object({ taxId: Type.String(), taxIdCountry: Type.String() })),
    identification: nullable(Type.Object({ type: Type.String(), number: Type.String(), issuingCountry: Type.String() })),
    mainAddress: nullable(AddressView),
  },
  { title: 'CustomerKyb' },
);

export const CustomerView = Type.Object(
  {
    id: Type.String(),
    type: Type.Enum(['PRIVATE', 'LEGAL'], { description: 'PRIVATE for individuals, LEGAL for businesses' }),
    email: Type.String(),
    phoneNumber: nullable(Type.String()),
    phoneCountryCode: nullable(Type.String()),
    onboardingId: nullable(Type.String({ description: 'most recent onboarding (KYC or KYB); null before the first' })),
    membershipProgramId: Type.String(),
    kyc: Type.Optional(KycView),
    kyb: Type.Optional(KybView),
    billingAddress: nullable(AddressView),
    deliveryAddress: nullable(AddressView),
    portfolios: Type.Array(PortfolioView),
    bankingInfo: Type.Optional(
      Type.Object(
        {
          virtual_account_number: Type.String(),
          virtual_reference_number: Type.Optional(Type.String()),
        },
        { description: 'only on GET /v1/customers/:id and only when the primary wallet has a virtual account' },
      ),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Customer', description: 'individuals (PRIVATE) carry kyc, businesses (LEGAL) carry kyb' },
);

export const MembershipProgramView = Type.Object(
  {
    id: Type.String(),
    name: Type.String({ examples: ['Standard'] }),
    default: Type.Boolean(),
    features: Type.Array(Type.String()),
  },
  { title: 'MembershipProgram' },
);

// ---- business person relations ----

const RepresentingRange = Type.Object(
  {
    startDate: CalendarDate('first day of the role', '2024-01-01'),
    endDate: Type.Optional(nullable(CalendarDate('last day of the role; open-ended when absent', '2026-12-31'))),
  },
  { additionalProperties: false },
);
const OwnershipPercentage = Type.String({
  minLength: 1,
  maxLength: 8,
  description: 'decimal string, more than 0 and at most 100, up to 4 decimals; required for SHAREHOLDER, refused otherwise',
  examples: ['25.5'],
});
const Role = Type.Enum(personRoles);
const PersonId = Type.String({ minLength: 1, maxLength: 64, description: 'id of an individual (PRIVATE) customer of the same client' });

export const RelationCreateBody = Type.Object(
  {
    userId: PersonId,
    role: Role,
    ownershipPercentage: Type.Optional(OwnershipPercentage),
    representingRange: Type.Optional(RepresentingRange),
  },
  {
    additionalProperties: false,
    title: 'PersonRelationCreate',
    examples: [{ userId: '019ca945-09f0-7a61-b2c4-55e0d1c0a0b1', role: 'SHAREHOLDER', ownershipPercentage: '25.5' }],
  },
);

export const RelationPatchBody = Type.Object(
  {
    userId: PersonId,
    role: Role,
    ownershipPercentage: Type.Optional(OwnershipPercentage),
    representingRange: Type.Optional(nullable(RepresentingRange)),
  },
  {
    additionalProperties: false,
    title: 'PersonRelationUpdate',
    description: 'userId and role name the relation; the other fields are its new values (at least one of them)',
    examples: [{ userId: '019ca945-09f0-7a61-b2c4-55e0d1c0a0b1', role: 'REPRESENTATIVE', representingRange: { startDate: '2024-01-01', endDate: null } }],
  },
);

export const RelationDeleteBody = Type.Object({ userId: PersonId, role: Role }, {
  additionalProperties: false,
  title: 'PersonRelationDelete',
  examples: [{ userId: '019ca945-09f0-7a61-b2c4-55e0d1c0a0b1', role: 'SHAREHOLDER' }],
});

export const RelationView = Type.Object(
  {
    userId: Type.String(),
    role: Type.String(),
    ownershipPercentage: nullable(Type.String()),
    representingRange: nullable(Type.Object({ startDate: Type.String(), endDate: nullable(Type.String()) })),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'PersonRelation' },
);

export const RelationsResult = Type.Object({
  personRelations: Type.Array(RelationView),
  action: Type.Enum(['ADD', 'UPDATE', 'REMOVE']),
});
export const RelationsList = Type.Object({ personRelations: Type.Array(RelationView) });

export const PortfolioCreateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, examples: ['Savings'] }) },
  { additionalProperties: false, title: 'PortfolioCreate', examples: [{ name: 'Savings' }] },
);
export const WalletCreateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, examples: ['Travel money'] }) },
  { additionalProperties: false, title: 'WalletCreate', examples: [{ name: 'Travel money' }] },
);
