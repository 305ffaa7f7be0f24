import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { Envelope } from '../../platform/http/envelope.js';
import {
  ensureBuiltInDirectory,
  validateIban,
  validateRoutingNumber,
  validateSwiftCode,
  type IbanInfo,
  type RoutingNumberInfo,
} from './bank-directory.service.js';

const nullableText = (description: string, example: string) =>
  Type.Union([Type.String(), Type.Null()], { description, examples: [example] });

const RoutingNumberSchema = Type.Object(
  {
    routingNumber: Type.String({ examples: ['021000021'] }),
    bankName: Type.String({ examples: ['JPMorgan Chase Bank, N.A.'] }),
    address: nullableText('street address; null when the directory has none (numbers known only to Fedwire)', '1111 Polaris Parkway'),
    city: nullableText('city', 'Columbus'),
    state: nullableText('two-letter US state or territory code', 'OH'),
    zipCode: nullableText('ZIP code, with the +4 extension when known', '43240'),
    phoneNumber: Type.Optional(Type.String({ description: 'present when the directory lists one', examples: ['813-432-3700'] })),
    supportsAch: Type.Boolean({ description: 'the number is in the FedACH directory: it takes ACH entries' }),
    supportsFedwire: Type.Boolean({ description: 'the number is in the Fedwire directory, eligible for funds transfers and not settlement-only' }),
    newRoutingNumber: Type.Optional(
      Type.String({ description: 'present when the Federal Reserve sends this number\'s ACH entries to another routing number' }),
    ),
  },
  { title: 'RoutingNumberValidation' },
);

const SwiftCodeSchema = Type.Object(
  {
    swiftCode: Type.String({ description: 'the code as given, in upper case', examples: ['DEUTDEFF'] }),
    bankName: Type.String({ examples: ['Deutsche Bank AG'] }),
    address: nullableText('street address; null when the directory has none', 'Taunusanlage 12'),
    city: nullableText('city', 'Frankfurt am Main'),
    country: Type.String({ description: 'country name (English)', examples: ['Germany'] }),
    countryCode: Type.String({ description: 'ISO 3166-1 alpha-2 code (characters 5–6 of the code)', examples: ['DE'] }),
  },
  { title: 'SwiftCodeValidation' },
);

const IbanSchema = Type.Object(
  {
    iban: Type.String({ description: 'electronic form: upper case, no spaces', examples: ['DE89370400440532013000'] }),
    valid: Type.Boolean({ description: 'always true: an invalid IBAN answers 400 INVALID_IBAN' }),
    country: Type.String({ description: 'country name (English)', examples: ['Germany'] }),
    countryCode: Type.String({ examples: ['DE'] }),
    bankCode: Type.Optional(Type.String({ description: 'the national bank identifier inside the IBAN', examples: ['37040044'] })),
    bankName: Type.Optional(Type.String({ description: 'present when the bank directory knows the bank', examples: ['Commerzbank AG'] })),
    bic: Type.Optional(Type.String({ description: 'the bank\'s BIC, when the directory knows it', examples: ['COBADEFFXXX'] })),
  },
  { title: 'IbanValidation' },
);

/** Optional fields are left out when the directory does not know them. */
function routingNumberView(info: RoutingNumberInfo) {
  const { phoneNumber, newRoutingNumber, ...always } = info;
  return { ...always, ...(phoneNumber === null ? {} : { phoneNumber }), ...(newRoutingNumber === null ? {} : { newRoutingNumber }) };
}

function ibanView(info: IbanInfo) {
  const { bankCode, bankName, bic, ...always } = info;
  return {
    ...always,
    ...(bankCode === null ? {} : { bankCode }),
    ...(bankName === null ? {} : { bankName }),
    ...(bic === null ? {} : { bic }),
  };
}

export function registerBankDirectoryRoutes(app: App, deps: Deps): void {
  // The directory is global reference data: before the server takes requests, load the
  // built-in directory for any kind that is missing or outdated (imported data is kept).
  app.addHook('onReady', async () => {
    await ensureBuiltInDirectory(deps.db, deps.clock.now());
  });

  app.get(
    '/v1/payments/validate/routing/:routingNumber',
    {
      schema: {
        operationId: 'bankDirectory.validateRoutingNumber',
        tags: ['Bank directory'],
        summary: 'Validate a US ABA routing number and return its bank',
        description:
          'Checks the 9 digits and the ABA checksum (400 INVALID_ROUTING_NUMBER with the reason), then looks the number up in the FedACH ' +
          'and Fedwire directories (404 BANK_NOT_FOUND when in neither).',
        params: Type.Object({ routingNumber: Type.String({ description: '9 digits', examples: ['021000021'] }) }),
        response: { 200: Envelope(RoutingNumberSchema) },
      },
    },
    async (request) => {
      const info = await validateRoutingNumber(deps.db, request.params.routingNumber);
      return {
        message: 'Routing number is valid',
        data: routingNumberView(info),
        traceId: String(request.id),
      };
    },
  );

  app.get(
    '/v1/payments/validate/swift/:swiftCode',
    {
      schema: {
        operationId: 'bankDirectory.validateSwiftCode',
        tags: ['Bank directory'],
        summary: 'Validate a SWIFT/BIC code and return its bank',
        description:
          'Checks the ISO 9362 form: 8 or 11 letters and digits, an ISO 3166-1 country code in characters 5–6, a branch code that ' +
          'starts with X only as XXX (400 INVALID_SWIFT_CODE with the reason). An 8-character code names the primary office, the same as ' +
          'its 11-character form ending in XXX. Unknown codes answer 404 BANK_NOT_FOUND. Letters may be given in either case.',
        params: Type.Object({ swiftCode: Type.String({ description: '8 or 11 characters', examples: ['DEUTDEFF'] }) }),
        response: { 200: Envelope(SwiftCodeSchema) },
      },
    },
    async (request) => ({
      message: 'SWIFT code is valid',
      data: await validateSwiftCode(deps.db, request.params.swiftCode),
      traceId: String(request.id),
    }),
  );

  app.get(
    '/v1/payments/validate/iban/:iban',
    {
      schema: {
        operationId: 'bankDirectory.validateIban',
        tags: ['Bank directory'],
        summary: 'Validate an IBAN and return its country and, when known, its bank',
        description:
          'Checks the ISO 13616 structure per country (IBAN registry country, length, BBAN format), the mod-97 check digits and any ' +
          'national check digits (400 INVALID_IBAN with the reason). Spaces (print form) and lower case are accepted. A valid IBAN ' +
          'always answers 200; bankName, bankCode and bic are present when known.',
        params: Type.Object({ iban: Type.String({ description: 'electronic or print form', examples: ['DE89370400440532013000'] }) }),
        response: { 200: Envelope(IbanSchema) },
      },
    },
    async (request) => {
      const info = await validateIban(deps.db, request.params.iban);
      return {
        message: 'IBAN is valid',
        data: ibanView(info),
        traceId: String(request.id),
      };
    },
  );
}
