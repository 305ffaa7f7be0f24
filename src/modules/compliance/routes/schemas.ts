import { Type, type TSchema, type TSchemaOptions } from 'typebox';
import { Text } from '../../../platform/http/envelope.js';
import { businessActions, businessCheckNames, complianceActions, individualCheckNames } from '../compliance-rules.js';
import { onboardingKinds, onboardingStatuses, onboardingStrategies, verificationOutcomes, verificationStatuses } from '../onboarding.js';
import { fundSourceDescriptionLengthMax, fundSourceTypes } from '../source-of-funds.js';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const literals = <const T extends readonly string[]>(values: T, options: TSchemaOptions = {}) => Type.Enum([...values] as T[number][], options);

export const OnboardingStatusSchema = literals(onboardingStatuses, { description: 'onboarding status' });
export const VerificationStatusSchema = literals(verificationStatuses, { description: 'what the identity verification (SDK flow or business review) has said so far' });
export const StrategySchema = literals(onboardingStrategies, { description: 'STANDARD: SDK identity verification; EXTERNAL: an outside provider already verified the person' });

export const CustomerIdBody = Type.Object(
  { customerId: Text.id({ description: 'the customer to onboard' }) },
  { additionalProperties: false, examples: [{ customerId: '019ca945-0a00-74c1-8797-3bfde107f365' }] },
);

export const SdkSchema = Type.Object(
  {
    link: Type.String({ description: 'the hosted verification page the person opens', examples: ['http://localhost:8080/hosted/kyc/3q2-7wJkR1…'] }),
    qrCode: Type.String({ description: 'the link as a QR code: a data:image/png;base64,… URL', examples: ['data:image/png;base64,iVBORw0KGgo…'] }),
  },
  { title: 'SdkLinks' },
);

export const StartedKycSchema = Type.Object(
  {
    onboardingId: Type.String({ format: 'uuid' }),
    status: OnboardingStatusSchema,
    sdk: nullable(SdkSchema),
  },
  { title: 'KycStarted', description: 'sdk is null under the EXTERNAL strategy (no SDK flow)' },
);

export const RerunSchema = Type.Object(
  {
    onboardingId: Type.String({ format: 'uuid', description: 'the new onboarding' }),
    previousOnboardingId: Type.String({ format: 'uuid', description: 'the archived one' }),
    status: OnboardingStatusSchema,
    sdk: nullable(SdkSchema),
  },
  { title: 'KycRerun' },
);

export const StartedKybSchema = Type.Object(
  {
    businessOnboardingId: Type.String({ format: 'uuid' }),
    status: OnboardingStatusSchema,
    verificationStatus: VerificationStatusSchema,
  },
  { title: 'KybStarted' },
);

function checkSchema<N extends readonly string[], A extends readonly string[]>(names: N, actions: A, title: string) {
  return Type.Object(
    {
      name: literals(names),
      passed: Type.Boolean(),
      required: Type.Boolean({ description: 'depends on the onboarding strategy' }),
      suggestedAction: nullable(literals(actions, { description: 'for a failed check; null when it passed' })),
    },
    { title },
  );
}

function summarySchema<N extends readonly string[]>(names: N) {
  return Type.Object({
    passed: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    requiredFailed: Type.Array(literals(names)),
  });
}

export const IndividualStatusSchema = Type.Object(
  {
    customerId: Type.String({ format: 'uuid' }),
    onboardingId: nullable(Type.String({ format: 'uuid' })),
    onboardingStatus: nullable(OnboardingStatusSchema),
    verificationStatus: nullable(VerificationStatusSchema),
    onboardingStrategy: StrategySchema,
    isCompliant: Type.Boolean({ description: 'every required check passes' }),
    nextAction: nullable(literals(complianceActions, { description: 'what to do next; null when compliant' })),
    checks: Type.Array(checkSchema(individualCheckNames, complianceActions, 'ComplianceCheck')),
    summary: summarySchema(individualCheckNames),
  },
  { title: 'ComplianceStatus' },
);

export const BusinessStatusSchema = Type.Object(
  {
    customerId: Type.String({ format: 'uuid' }),
    businessOnboardingId: nullable(Type.String({ format: 'uuid' })),
    onboardingStatus: nullable(OnboardingStatusSchema),
    verificationStatus: nullable(VerificationStatusSchema),
    onboardingStrategy: StrategySchema,
    isCompliant: Type.Boolean(),
    nextAction: nullable(literals(businessActions)),
    checks: Type.Array(checkSchema(businessCheckNames, businessActions, 'BusinessComplianceCheck')),
    summary: summarySchema(businessCheckNames),
  },
  { title: 'BusinessComplianceStatus' },
);

export const OnboardingSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    customerId: Type.String({ format: 'uuid' }),
    kind: literals(onboardingKinds),
    strategy: StrategySchema,
    status: OnboardingStatusSchema,
    verificationStatus: VerificationStatusSchema,
    previousOnboardingId: nullable(Type.String({ format: 'uuid' })),
    sdkExpiresAt: nullable(Type.String({ format: 'date-time' })),
    sdkCompletedAt: nullable(Type.String({ format: 'date-time' })),
    errorType: nullable(Type.String()),
    errorMessage: nullable(Type.String()),
    decidedAt: nullable(Type.String({ format: 'date-time' })),
    archivedAt: nullable(Type.String({ format: 'date-time' })),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Onboarding' },
);

export const DocumentSchema = Type.Object(
  {
    documentId: Type.String({ format: 'uuid' }),
    customerId: Type.String({ format: 'uuid' }),
    onboardingId: nullable(Type.String({ format: 'uuid' })),
    documentType: Type.String(),
    fileName: nullable(Type.String()),
    contentType: literals(['application/pdf', 'image/png', 'image/jpeg'] as const, { description: 'read from the content' }),
    sizeBytes: Type.Integer({ minimum: 1 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'ComplianceDocument' },
);

export const SourceOfFundsBody = Type.Object(
  {
    sources: Type.Array(
      Type.Object(
        {
          type: literals(fundSourceTypes),
          description: Type.Optional(Type.String({ minLength: 1, maxLength: fundSourceDescriptionLengthMax, description: 'required for OTHER' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: fundSourceTypes.length, description: 'each type at most once' },
    ),
  },
  {
    additionalProperties: false,
    examples: [{ sources: [{ type: 'INCOME', description: 'Salary as a software engineer' }, { type: 'SAVINGS' }] }],
  },
);

export const SourceOfFundsResult = Type.Object(
  {
    documentId: Type.String({ format: 'uuid', description: 'the stored DOC_SOURCE_OF_FUNDS declaration (a PDF)' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    sizeBytes: Type.Integer({ minimum: 1 }),
  },
  { title: 'SourceOfFundsDeclaration' },
);

export const SettingsSchema = Type.Object({ onboardingStrategy: StrategySchema }, { title: 'ComplianceSettings' });
export const SettingsBody = Type.Object({ onboardingStrategy: StrategySchema }, { additionalProperties: false, examples: [{ onboardingStrategy: 'EXTERNAL' }] });

export const OutcomeBody = Type.Object(
  {
    outcome: literals(verificationOutcomes),
    errorMessage: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'with ERROR only (400 with another outcome): the message of CUSTOMER_KYC_ERROR' })),
    completeRequirements: Type.Optional(
      Type.Boolean({
        description:
          'with APPROVED on a KYC: also put every required document the person lacks on file (a source-of-funds declaration and a placeholder ' +
          'FATCA form), so the onboarding is approved in this call, with the events of the long path',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ outcome: 'APPROVED', completeRequirements: true }, { outcome: 'MANUAL_REVIEW' }] },
);

export const ForceCheckBody = Type.Object(
  {
    name: Text.short({ description: 'a data or document check name of the customer\'s status (individual or business)' }),
    passed: Type.Boolean(),
  },
  { additionalProperties: false, examples: [{ name: 'DOC_PROOF_OF_ADDRESS', passed: true }] },
);

export const onboardingParams = Type.Object({ onboardingId: Text.id() });
export const customerParams = Type.Object({ customerId: Text.id() });
