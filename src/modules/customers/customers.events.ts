import { Type, type Static } from 'typebox';

/** Payloads of the events the customers module emits (traceId is added by recordEvent). */
export const CustomerCreatedPayload = Type.Object(
  { customerId: Type.String({ description: 'the new customer' }) },
  { title: 'CUSTOMER_CREATED', additionalProperties: false },
);
export type CustomerCreatedPayload = Static<typeof CustomerCreatedPayload>;
