import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext, type TestResponse } from './harness.js';

/**
 * Names and reasons outside the money routes follow the text rule of src/platform/text.ts
 * (docs/api-design.md): control characters, line breaks and invisible formatting characters are a
 * 400 VALIDATION_ERROR naming the field and the character. The money routes' fields are tested
 * with their modules.
 */
const adminKey = 'admin-key-0123456789abcdef';
const missingId = '019c0000-0000-7000-8000-000000000000';
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp({ env: { OPENBAAS_ADMIN_KEY: adminKey } });
});
afterAll(async () => {
  await t.close();
});

async function webhookId(): Promise<string> {
  const created = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'Plain', url: 'http://127.0.0.1:9/plain', subscribedEventTypes: ['*'] } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data.id as string;
}

const cases: ReadonlyArray<readonly [label: string, send: (text: string) => Promise<TestResponse>]> = [
  ['POST /v1/webhooks name', (name) => t.request({ method: 'POST', url: '/v1/webhooks', body: { name, url: 'http://127.0.0.1:9/a', subscribedEventTypes: ['*'] } })],
  ['PATCH /v1/webhooks/:id name', async (name) => t.request({ method: 'PATCH', url: `/v1/webhooks/${await webhookId()}`, body: { name } })],
  ['POST /v1/sandbox/snapshots name', (name) => t.request({ method: 'POST', url: '/v1/sandbox/snapshots', body: { name } })],
  ['POST /v1/admin/clients name', (name) => t.request({ method: 'POST', url: '/v1/admin/clients', key: adminKey, body: { name } })],
  ['POST /v1/sandbox/crypto-transactions/:id/fail reason', (reason) => t.request({ method: 'POST', url: `/v1/sandbox/crypto-transactions/${missingId}/fail`, body: { reason } })],
];
const field = (label: string) => label.split(' ').at(-1);

describe.each(cases)('%s', (label, send) => {
  it.each([
    ['\n', 'U+000A'],
    ['\u202e', 'U+202E'],
    ['\u200b', 'U+200B'],
    ['\u0007', 'U+0007'],
  ])('400 VALIDATION_ERROR for %j, named by its code point', async (character, shown) => {
    const response = await send(`Ops${character}alerts`);
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details[0].field).toBe(field(label));
    expect(response.body.details[0].message).toContain(`(${shown})`);
  });

  it('a text that shows nothing (a Hangul filler, the braille blank) is refused as empty', async () => {
    for (const text of ['\u3164', ' \u2800 ']) {
      const response = await send(text);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.details[0].field).toBe(field(label));
    }
  });

  it('letters of any script pass the rule', async () => {
    const response = await send('Café Ünïcode 東京');
    // The fail control then looks the transfer up: 404 for the id no transfer has.
    expect(response.status, JSON.stringify(response.body)).toBe(label.includes('/fail') ? 404 : label.startsWith('PATCH') ? 200 : 201);
  });
});
