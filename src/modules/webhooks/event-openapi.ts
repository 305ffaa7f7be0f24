import { eventPayloadSchemas, testEventPayloadSchema, testEventType } from './event-payloads.js';
import { eventTypes, everyEventType } from './event-types.js';

/**
 * The event catalogue as OpenAPI components, for code generators: one schema per event type (the
 * body of its webhook delivery and of GET /v1/events/:id), `WebhookEvent` as their `oneOf` with a
 * discriminator on `type`, the enums `EventType` and `SubscribedEventType`, and the OpenAPI 3.1
 * `webhooks` section (one entry per event type: the POST your endpoint receives).
 */

type JsonSchema = Record<string, unknown>;

/** CUSTOMER_KYC_STARTED → CustomerKycStartedEvent; COOP_AUTH_0100 → CoopAuth0100Event. */
export function eventSchemaName(type: string): string {
  return `${type
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Event`;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function eventSchema(type: string, data: unknown): JsonSchema {
  return {
    type: 'object',
    title: eventSchemaName(type),
    required: ['id', 'type', 'createdAt', 'data'],
    properties: {
      id: { type: 'string', description: 'the event id: the webhook-id header of every delivery of it' },
      type: { type: 'string', const: type },
      createdAt: { type: 'string', format: 'date-time' },
      data: JSON.parse(JSON.stringify(data)) as JsonSchema,
    },
  };
}

export interface EventOpenApi {
  schemas: Record<string, JsonSchema>;
  webhooks: Record<string, JsonSchema>;
}

export function eventOpenApi(): EventOpenApi {
  const schemas: Record<string, JsonSchema> = {
    EventType: { type: 'string', enum: [...eventTypes], description: 'An event type of the catalogue (GET /v1/events/types).' },
    SubscribedEventType: {
      type: 'string',
      enum: [everyEventType, ...eventTypes],
      description: `What a subscription lists: event types of the catalogue, or "${everyEventType}" alone for every type, today's and later ones.`,
    },
  };
  const all: Array<[string, unknown]> = [...Object.entries(eventPayloadSchemas), [testEventType, testEventPayloadSchema]];
  for (const [type, data] of all) schemas[eventSchemaName(type)] = eventSchema(type, data);
  schemas.WebhookEvent = {
    description: 'The body of every webhook delivery, told apart by `type`.',
    oneOf: all.map(([type]) => ref(eventSchemaName(type))),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(all.map(([type]) => [type, `#/components/schemas/${eventSchemaName(type)}`])) },
  };
  const webhooks: Record<string, JsonSchema> = {};
  for (const [type, data] of all) {
    webhooks[type] = {
      post: {
        operationId: `webhookEvents.${type}`,
        tags: ['Webhook events'],
        summary: (data as { description?: string }).description ?? type,
        description:
          'Sent to the URL of every active subscription that lists this type (or "*"), signed as Standard Webhooks ' +
          '(webhook-id, webhook-timestamp, webhook-signature headers). Answer 2xx within the timeout; anything else is retried.',
        requestBody: { required: true, content: { 'application/json': { schema: ref(eventSchemaName(type)) } } },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery.' } },
      },
    };
  }
  return { schemas, webhooks };
}
