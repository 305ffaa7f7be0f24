import { Type, type Static } from 'typebox';
import { onboardingStatuses } from './onboarding.js';

/**
 * Payloads of the events the compliance module emits, as the specification's KYC and KYB tables
 * give them (traceId is added by recordEvent). VIRTUAL_ACCOUNT_CREATED is recorded by the
 * virtual-accounts module on approval and on request.
 */

const Status = Type.Enum([...onboardingStatuses], { description: 'the onboarding status after the change' });

export const KycEventPayload = Type.Object(
  { customerId: Type.String(), status: Status, onboardingId: Type.String() },
  { title: 'CUSTOMER_KYC_*', additionalProperties: false, description: 'STARTED, SDK_FLOW_REQUIRED, SDK_FLOW_COMPLETED, FINISHED, SDK_EXPIRED' },
);
export type KycEventPayload = Static<typeof KycEventPayload>;

export const KycRestartedPayload = Type.Object(
  { customerId: Type.String(), status: Status, onboardingId: Type.String({ description: 'the new onboarding' }), previousOnboardingId: Type.String() },
  { title: 'CUSTOMER_KYC_RESTARTED', additionalProperties: false },
);
export type KycRestartedPayload = Static<typeof KycRestartedPayload>;

export const KycErrorPayload = Type.Object(
  {
    customerId: Type.String(),
    status: Status,
    onboardingId: Type.String(),
    errorType: Type.Optional(Type.String()),
    errorMessage: Type.Optional(Type.String()),
  },
  { title: 'CUSTOMER_KYC_ERROR', additionalProperties: false },
);
export type KycErrorPayload = Static<typeof KycErrorPayload>;

export const KybEventPayload = Type.Object(
  { customerId: Type.String(), status: Status, businessOnboardingId: Type.String() },
  { title: 'CUSTOMER_KYB_*', additionalProperties: false, description: 'STARTED, FINISHED' },
);
export type KybEventPayload = Static<typeof KybEventPayload>;

export const VirtualAccountCreatedPayload = Type.Object(
  { customerId: Type.String(), walletId: Type.String() },
  { title: 'VIRTUAL_ACCOUNT_CREATED', additionalProperties: false },
);

/** The payload schema of each event type the module emits. */
export const complianceEventPayloads = {
  CUSTOMER_KYC_STARTED: KycEventPayload,
  CUSTOMER_KYC_SDK_FLOW_REQUIRED: KycEventPayload,
  CUSTOMER_KYC_SDK_FLOW_COMPLETED: KycEventPayload,
  CUSTOMER_KYC_FINISHED: KycEventPayload,
  CUSTOMER_KYC_SDK_EXPIRED: KycEventPayload,
  CUSTOMER_KYC_RESTARTED: KycRestartedPayload,
  CUSTOMER_KYC_ERROR: KycErrorPayload,
  CUSTOMER_KYB_STARTED: KybEventPayload,
  CUSTOMER_KYB_FINISHED: KybEventPayload,
  VIRTUAL_ACCOUNT_CREATED: VirtualAccountCreatedPayload,
} as const;
