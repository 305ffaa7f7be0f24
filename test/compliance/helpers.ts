import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { TestClient, TestContext } from '../harness.js';
import { complianceEventPayloads } from '../../src/modules/compliance/index.js';
import { address, businessBody, individualBody } from '../customers/fixtures.js';
import { multipart, samplePdf } from './files.js';

/** Helpers shared by the compliance tests. Tests read response bodies freely. */
/* eslint-disable @typescript-eslint/no-explicit-any */

/** An individual with everything KYC needs: identity data, registration address and tax country. */
export async function createReadyIndividual(t: TestContext, client: TestClient = t.clientA, kyc: Record<string, unknown> = {}): Promise<any> {
  const body = individualBody({}, { mainAddress: address, taxIdCountry: 'US', occupation: '15', ...kyc });
  const response = await t.request({ method: 'POST', url: '/v1/customers/individual', key: client.key, body });
  if (response.status !== 201) throw new Error(`creating an individual failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function createBusinessWith(t: TestContext, client: TestClient = t.clientA, kyb: Record<string, unknown> = {}): Promise<any> {
  const response = await t.request({ method: 'POST', url: '/v1/customers/business', key: client.key, body: businessBody({}, kyb) });
  if (response.status !== 201) throw new Error(`creating a business failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function startKyc(t: TestContext, customerId: string, client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ method: 'POST', url: '/v1/compliance/kyc', key: client.key, body: { customerId } });
  if (response.status !== 201) throw new Error(`starting KYC failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function complianceStatus(t: TestContext, customerId: string, client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ url: `/v1/compliance/status/${customerId}`, key: client.key });
  if (response.status !== 200) throw new Error(`status failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function businessStatus(t: TestContext, customerId: string, client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ url: `/v1/compliance/business/status/${customerId}`, key: client.key });
  if (response.status !== 200) throw new Error(`business status failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function setOutcome(t: TestContext, onboardingId: string, outcome: string, client: TestClient = t.clientA) {
  return t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${onboardingId}/outcome`, key: client.key, body: { outcome } });
}

export interface UploadOptions {
  customerId: string;
  documentType: string;
  content?: Buffer;
  fileName?: string;
  business?: boolean;
  key?: string | null;
  idempotencyKey?: string;
}

export async function upload(t: TestContext, options: UploadOptions) {
  const form = multipart([
    { name: 'customerId', value: options.customerId },
    { name: 'documentType', value: options.documentType },
    { name: 'file', file: { content: options.content ?? (await samplePdf()), fileName: options.fileName ?? 'document.pdf', contentType: 'application/pdf' } },
  ]);
  return t.request({
    method: 'POST',
    url: options.business ? '/v1/compliance/business/upload-document' : '/v1/compliance/upload-document',
    rawBody: form.body,
    contentType: form.contentType,
    ...(options.key === undefined ? {} : { key: options.key }),
    ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
  });
}

/** The path of an SDK link (the test app is reached by inject, not by its public address). */
export function pathOf(link: string): string {
  return new URL(link).pathname;
}

/** Events of one customer, oldest first. */
export async function eventsOf(t: TestContext, customerId: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: '/v1/events?limit=200', key: client.key });
  return (response.body.data as any[]).filter((event) => event.data.customerId === customerId).reverse();
}

/** A full approval of an individual through the sandbox: KYC, SDK approved, documents. */
export async function approveIndividual(t: TestContext, client: TestClient = t.clientA): Promise<any> {
  const customer = await createReadyIndividual(t, client);
  const started = await startKyc(t, customer.id, client);
  await setOutcome(t, started.onboardingId, 'APPROVED', client);
  await upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9', key: client.key });
  await upload(t, { customerId: customer.id, documentType: 'DOC_SOURCE_OF_FUNDS', key: client.key });
  const status = await complianceStatus(t, customer.id, client);
  if (status.onboardingStatus !== 'APPROVED') throw new Error(`approval failed: ${JSON.stringify(status)}`);
  return { ...customer, onboardingId: started.onboardingId };
}

export async function relate(t: TestContext, businessId: string, userId: string, role: 'SHAREHOLDER' | 'REPRESENTATIVE', client: TestClient = t.clientA) {
  const body = role === 'SHAREHOLDER' ? { userId, role, ownershipPercentage: '50' } : { userId, role };
  const response = await t.request({ method: 'POST', url: `/v1/customers/business/${businessId}/related-persons`, key: client.key, body });
  if (response.status !== 201) throw new Error(`relating a person failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** Every compliance event matches its payload schema exactly (besides traceId). */
export function expectPayloadsMatchSchemas(events: any[]): number {
  let checked = 0;
  for (const event of events) {
    const schema = (complianceEventPayloads as Record<string, TSchema>)[event.type];
    if (!schema) continue;
    const { traceId, ...payload } = event.data;
    if (typeof traceId !== 'string' || !Value.Check(schema, payload)) {
      throw new Error(`${event.type} does not match its payload schema: ${JSON.stringify(event.data)}`);
    }
    checked++;
  }
  return checked;
}
