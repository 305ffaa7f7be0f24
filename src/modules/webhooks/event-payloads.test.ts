import { describe, expect, it } from 'vitest';
import { eventPayloadValidator, eventPayloadSchemas } from './event-payloads.js';
import { eventTypes } from './event-types.js';

// The payload checks are compiled when first used (event-payloads.ts); this compiles every one, so
// a schema strict Ajv refuses fails here rather than at its event's first emission.
describe('event payload schemas', () => {
  it('every event type has a payload schema that compiles under strict Ajv', () => {
    expect(Object.keys(eventPayloadSchemas).sort()).toEqual([...eventTypes].sort());
    for (const type of eventTypes) expect(typeof eventPayloadValidator(type), type).toBe('function');
  });

  it('a type that is not one has none, whatever its name', () => {
    for (const type of ['NOT_AN_EVENT', 'toString', '__proto__', 'constructor']) expect(eventPayloadValidator(type), type).toBeUndefined();
  });
});
