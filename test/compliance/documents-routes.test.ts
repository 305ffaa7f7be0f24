import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { approveIndividual, complianceStatus, createBusinessWith, createReadyIndividual, startKyc, upload } from './helpers.js';
import { multipart, sampleGif, sampleJpeg, samplePdf, samplePng, sampleText } from './files.js';

/** Document uploads, source-of-funds declarations and virtual accounts, by outcome. */

let t: TestContext;
const missingId = '019ca945-0a00-74c1-8797-3bfde107f365';

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function expectCode(response: { status: number; body: { code: string } }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.code).toBe(code);
}

async function sendForm(parts: Parameters<typeof multipart>[0], url = '/v1/compliance/upload-document') {
  const form = multipart(parts);
  return t.request({ method: 'POST', url, rawBody: form.body, contentType: form.contentType });
}

describe('POST /v1/compliance/upload-document', () => {
  describe('201', () => {
    it.each([
      ['a PDF', samplePdf, 'application/pdf'],
      ['a PNG', samplePng, 'image/png'],
      ['a JPEG', async () => sampleJpeg(), 'image/jpeg'],
    ])('stores %s in the database with its SHA-256, whatever its declared name and type', async (_name, make, contentType) => {
      const customer = await createReadyIndividual(t);
      const content = await make();
      const response = await sendForm([
        { name: 'customerId', value: customer.id },
        { name: 'documentType', value: 'DOC_PROOF_OF_ADDRESS' },
        { name: 'file', file: { content, fileName: 'C:\\scans\\bill.bin', contentType: 'application/octet-stream' } },
      ]);
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data).toMatchObject({ customerId: customer.id, documentType: 'DOC_PROOF_OF_ADDRESS', contentType, fileName: 'bill.bin', sizeBytes: content.length, onboardingId: null });
      const row = await t.deps.db.selectFrom('compliance_documents').selectAll().where('id', '=', response.body.data.documentId).executeTakeFirstOrThrow();
      expect(row.content.equals(content)).toBe(true);
      expect(row.sha256.toString('hex')).toBe(response.body.data.sha256);
      expect(row.client_id).toBe(t.clientA.id);
    });

    it('keeps a file name people can read: no bidi override or zero-width character, at most 255 characters', async () => {
      const customer = await createReadyIndividual(t);
      const named = async (fileName: string) => {
        const response = await sendForm([
          { name: 'customerId', value: customer.id },
          { name: 'documentType', value: 'DOC_PROOF_OF_ADDRESS' },
          { name: 'file', file: { content: await samplePdf(), fileName, contentType: 'application/pdf' } },
        ]);
        expect(response.status, JSON.stringify(response.body)).toBe(201);
        return response.body.data.fileName as string;
      };
      expect(await named('invoice\u202efdp.exe')).toBe('invoicefdp.exe');
      expect(await named('bill\u200b\u2060.pdf')).toBe('bill.pdf');
      expect(await named('é'.repeat(300))).toBe('é'.repeat(255));
    });

    it('replays an upload sent again with the same Idempotency-Key, storing one document', async () => {
      const customer = await createReadyIndividual(t);
      const form = multipart([
        { name: 'customerId', value: customer.id },
        { name: 'documentType', value: 'DOC_FATCA_W9' },
        { name: 'file', file: { content: await samplePdf(), fileName: 'w9.pdf', contentType: 'application/pdf' } },
      ]);
      const send = () => t.request({ method: 'POST', url: '/v1/compliance/upload-document', rawBody: form.body, contentType: form.contentType, idempotencyKey: `upload-${customer.id}` });
      const first = await send();
      const second = await send();
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      const rows = await t.deps.db.selectFrom('compliance_documents').select('id').where('customer_id', '=', customer.id).execute();
      expect(rows).toHaveLength(1);
    });
  });

  describe('400', () => {
    it('names a missing part', async () => {
      const customer = await createReadyIndividual(t);
      const response = await sendForm([{ name: 'customerId', value: customer.id }, { name: 'documentType', value: 'DOC_FATCA_W9' }]);
      await expectCode(response, 400, 'VALIDATION_ERROR');
      expect(response.body.details).toEqual([{ field: 'file', message: 'is required' }]);
    });

    it('names the file part sent without a file name (a multipart file needs one)', async () => {
      const customer = await createReadyIndividual(t);
      const response = await sendForm([
        { name: 'customerId', value: customer.id },
        { name: 'documentType', value: 'DOC_FATCA_W9' },
        { name: 'file', value: 'a part with no filename parameter is a text field' },
      ]);
      await expectCode(response, 400, 'VALIDATION_ERROR');
      expect(response.body.details).toEqual([{ field: 'file', message: expect.stringContaining('with a file name') }]);
      // A third field that is not the file is still named as unknown.
      const extra = await sendForm([{ name: 'customerId', value: customer.id }, { name: 'documentType', value: 'DOC_FATCA_W9' }, { name: 'note', value: 'x' }]);
      expect(extra.body.details).toEqual([{ field: 'note', message: 'is not a known part' }]);
    });

    it('refuses a customerId longer than its schema\'s 64 characters, as the JSON routes do', async () => {
      // Until 2026-12-07 ids of 65 to 100 characters (the form's own limit) answered 404, and longer
      // ones, or 60 two-byte characters, were told "at most 100 characters" (found by audits).
      const pdf = await samplePdf();
      for (const value of ['a'.repeat(65), 'a'.repeat(100), 'a'.repeat(101), 'a'.repeat(300), 'é'.repeat(65)]) {
        const response = await sendForm([
          { name: 'customerId', value },
          { name: 'documentType', value: 'DOC_FATCA_W9' },
          { name: 'file', file: { content: pdf, fileName: 'a.pdf', contentType: 'application/pdf' } },
        ]);
        await expectCode(response, 400, 'VALIDATION_ERROR');
        expect(response.body.details).toEqual([{ field: 'customerId', message: 'must be at most 64 characters' }]);
      }
      // 60 two-byte characters are within the limit: the customer is then looked up (none has such an id).
      const within = await sendForm([
        { name: 'customerId', value: 'é'.repeat(60) },
        { name: 'documentType', value: 'DOC_FATCA_W9' },
        { name: 'file', file: { content: pdf, fileName: 'a.pdf', contentType: 'application/pdf' } },
      ]);
      await expectCode(within, 404, 'NOT_FOUND');
    });

    it('refuses an empty customerId and one holding NUL, naming it, as the JSON routes do (they were looked up and answered 404)', async () => {
      const pdf = await samplePdf();
      for (const [value, message] of [
        ['', 'must not be empty'],
        ['a\u0000b', 'may not contain the NUL character'],
      ] as const) {
        const response = await sendForm([
          { name: 'customerId', value },
          { name: 'documentType', value: 'DOC_FATCA_W9' },
          { name: 'file', file: { content: pdf, fileName: 'a.pdf', contentType: 'application/pdf' } },
        ]);
        await expectCode(response, 400, 'VALIDATION_ERROR');
        expect(response.body.details).toEqual([{ field: 'customerId', message }]);
      }
    });

    it('names a part sent twice, wherever the second comes (it was refused by a limit naming body)', async () => {
      const customer = await createReadyIndividual(t);
      const pdf = await samplePdf();
      const file = { name: 'file', file: { content: pdf, fileName: 'a.pdf', contentType: 'application/pdf' } };
      const customerId = { name: 'customerId', value: customer.id };
      const documentType = { name: 'documentType', value: 'DOC_FATCA_W9' };
      for (const [parts, field] of [
        [[customerId, customerId, documentType, file], 'customerId'],
        [[customerId, documentType, file, customerId], 'customerId'],
        [[customerId, documentType, file, documentType], 'documentType'],
        [[customerId, documentType, file, file], 'file'],
      ] as const) {
        const response = await sendForm([...parts]);
        await expectCode(response, 400, 'VALIDATION_ERROR');
        expect(response.body.details, JSON.stringify(parts.map((part) => part.name))).toEqual([{ field, message: expect.stringMatching(/more than once|only one file/) }]);
      }
      expect(await t.deps.db.selectFrom('compliance_documents').select('id').where('customer_id', '=', customer.id).execute()).toEqual([]);
    });

    it('refuses an unknown part, an unknown document type and an empty file', async () => {
      const customer = await createReadyIndividual(t);
      const pdf = await samplePdf();
      const unknown = await sendForm([
        { name: 'customerId', value: customer.id },
        { name: 'note', value: 'hello' },
        { name: 'file', file: { content: pdf, fileName: 'a.pdf', contentType: 'application/pdf' } },
      ]);
      await expectCode(unknown, 400, 'VALIDATION_ERROR');
      expect(unknown.body.details[0].field).toBe('note');
      const wrongType = await sendForm([
        { name: 'customerId', value: customer.id },
        { name: 'documentType', value: 'DOC_BUSINESS_REGISTRATION' },
        { name: 'file', file: { content: pdf, fileName: 'a.pdf', contentType: 'application/pdf' } },
      ]);
      await expectCode(wrongType, 400, 'VALIDATION_ERROR');
      expect(wrongType.body.details[0].field).toBe('documentType');
      const empty = await sendForm([
        { name: 'customerId', value: customer.id },
        { name: 'documentType', value: 'DOC_FATCA_W9' },
        { name: 'file', file: { content: Buffer.alloc(0), fileName: 'a.pdf', contentType: 'application/pdf' } },
      ]);
      await expectCode(empty, 400, 'VALIDATION_ERROR');
      expect(empty.body.details[0].field).toBe('file');
    });

    it('refuses a business on the individual route', async () => {
      const business = await createBusinessWith(t);
      const response = await upload(t, { customerId: business.id, documentType: 'DOC_FATCA_W9' });
      await expectCode(response, 400, 'WRONG_CUSTOMER_TYPE');
      expect(response.body.details).toEqual([{ field: 'customerId', message: 'is a business (LEGAL) customer; use POST /v1/compliance/business/upload-document' }]);
    });

    it.each([
      ['without a boundary', 'multipart/form-data', 'garbage'],
      ['without its boundary in the body', 'multipart/form-data; boundary=xyz', 'garbage'],
      ['cut short', 'multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="customerId"\r\n\r\nabc'],
    ])('refuses a multipart body %s with 400 BAD_REQUEST naming body, on both routes', async (_name, contentType, body) => {
      for (const url of ['/v1/compliance/upload-document', '/v1/compliance/business/upload-document']) {
        const response = await t.request({ method: 'POST', url, rawBody: Buffer.from(body), contentType });
        expect(response.status, `${url}: ${JSON.stringify(response.body)}`).toBe(400);
        expect(response.body).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'body' }] });
      }
    });
  });

  describe('404', () => {
    it('answers the same for a missing, malformed and other client\'s customer', async () => {
      const other = await createReadyIndividual(t, t.clientB);
      for (const customerId of [missingId, 'zzz', other.id]) {
        await expectCode(await upload(t, { customerId, documentType: 'DOC_FATCA_W9' }), 404, 'NOT_FOUND');
      }
    });
  });

  describe('413', () => {
    it('refuses a file over 10 MiB', async () => {
      const customer = await createReadyIndividual(t);
      const big = Buffer.concat([await samplePdf(), Buffer.alloc(10 * 1024 * 1024, 0x20)]);
      const response = await upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9', content: big });
      await expectCode(response, 413, 'PAYLOAD_TOO_LARGE');
      expect(response.body.details).toEqual([{ field: 'file', message: 'is larger than 10 MiB' }]);
    });
  });

  describe('415', () => {
    it.each([
      ['text named .pdf', sampleText],
      ['a GIF', sampleGif],
    ])('refuses %s: the content decides, not the name', async (_name, make) => {
      const customer = await createReadyIndividual(t);
      const response = await upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9', content: make(), fileName: 'w9.pdf' });
      await expectCode(response, 415, 'UNSUPPORTED_FILE_TYPE');
      expect(response.body.details).toEqual([{ field: 'file', message: 'must be a PDF, PNG or JPEG' }]);
    });

    it('refuses a JSON body', async () => {
      await expectCode(await t.request({ method: 'POST', url: '/v1/compliance/upload-document', body: { customerId: missingId } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('refuses a part without a name, naming the body (it answered 500)', async () => {
      const customer = await createReadyIndividual(t);
      const pdf = await samplePdf();
      const boundary = '----openbaas-test-unnamed';
      for (const unnamed of [
        'Content-Disposition: form-data\r\n\r\nx\r\n',
        'Content-Disposition: form-data; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n',
      ]) {
        const rawBody = Buffer.concat([
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="customerId"\r\n\r\n${customer.id}\r\n--${boundary}\r\n${unnamed}--${boundary}\r\n`),
          Buffer.from(`Content-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
          pdf,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]);
        const response = await t.request({ method: 'POST', url: '/v1/compliance/upload-document', rawBody, contentType: `multipart/form-data; boundary=${boundary}` });
        await expectCode(response, 400, 'VALIDATION_ERROR');
        expect(response.body.details).toEqual([{ field: 'body', message: expect.stringContaining('every part needs a name') }]);
        expect(response.body.traceId).toBeTypeOf('string');
      }
    });

    it('answers a JSON body 415 whether or not it is valid JSON (one that was not answered the parser\'s 400)', async () => {
      for (const rawBody of ['{"customerId": ', '{"customerId":"x"}']) {
        const response = await t.request({ method: 'POST', url: '/v1/compliance/upload-document', rawBody, contentType: 'application/json' });
        await expectCode(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
        expect(response.body.message).toContain('multipart/form-data');
      }
    });

    it('tells a body of another type to be multipart/form-data, not JSON as the other routes do', async () => {
      for (const url of ['/v1/compliance/upload-document', '/v1/compliance/business/upload-document']) {
        const response = await t.request({ method: 'POST', url, rawBody: 'customerId=x', contentType: 'text/plain' });
        await expectCode(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
        expect(response.body.message).toContain('multipart/form-data');
        expect(response.body.message).not.toContain('application/json');
      }
      const json = await t.request({ method: 'POST', url: '/v1/customers', rawBody: 'x', contentType: 'text/plain' });
      expect(json.body.message).toContain('application/json');
    });
  });
});

describe('POST /v1/compliance/onboardings/:onboardingId/source-of-funds', () => {
  it('400: a source declared twice, OTHER without a description, an unknown source, no source', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const url = `/v1/compliance/onboardings/${started.onboardingId}/source-of-funds`;
    const twice = await t.request({ method: 'POST', url, body: { sources: [{ type: 'SAVINGS' }, { type: 'SAVINGS' }] } });
    await expectCode(twice, 400, 'VALIDATION_ERROR');
    expect(twice.body.details[0].field).toBe('sources[1].type');
    const other = await t.request({ method: 'POST', url, body: { sources: [{ type: 'OTHER', description: '   ' }] } });
    await expectCode(other, 400, 'VALIDATION_ERROR');
    expect(other.body.details[0].field).toBe('sources[0].description');
    await expectCode(await t.request({ method: 'POST', url, body: { sources: [{ type: 'LOTTERY' }] } }), 400, 'VALIDATION_ERROR');
    await expectCode(await t.request({ method: 'POST', url, body: { sources: [] } }), 400, 'VALIDATION_ERROR');
    // The text rule, as for every free text: a right-to-left override is refused naming the field,
    // and a description that shows nothing (a Hangul filler) is none.
    const override = await t.request({ method: 'POST', url, body: { sources: [{ type: 'SAVINGS', description: 'Salary \u202egnirts' }] } });
    await expectCode(override, 400, 'VALIDATION_ERROR');
    expect(override.body.details[0]).toMatchObject({ field: 'sources[0].description', message: expect.stringContaining('U+202E') });
    const filler = await t.request({ method: 'POST', url, body: { sources: [{ type: 'OTHER', description: '\u3164' }] } });
    expect(filler.body.details[0]).toEqual({ field: 'sources[0].description', message: 'is required for OTHER' });
  });

  it('404: a KYB onboarding on the individual route, and the reverse', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await expectCode(
      await t.request({ method: 'POST', url: `/v1/compliance/business/onboardings/${started.onboardingId}/source-of-funds`, body: { sources: [{ type: 'SAVINGS' }] } }),
      404,
      'NOT_FOUND',
    );
    await expectCode(await t.request({ method: 'POST', url: `/v1/compliance/onboardings/${missingId}/source-of-funds`, body: { sources: [{ type: 'SAVINGS' }] } }), 404, 'NOT_FOUND');
  });

  it('201: the declaration keeps the declared sources beside the PDF', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const response = await t.request({
      method: 'POST',
      url: `/v1/compliance/onboardings/${started.onboardingId}/source-of-funds`,
      body: { sources: [{ type: 'OTHER', description: '  Prize money  ' }, { type: 'INHERITANCE_OR_GIFT' }] },
    });
    expect(response.status).toBe(201);
    const row = await t.deps.db.selectFrom('compliance_documents').selectAll().where('id', '=', response.body.data.documentId).executeTakeFirstOrThrow();
    expect(row.declaration).toEqual({ sources: [{ type: 'OTHER', description: 'Prize money' }, { type: 'INHERITANCE_OR_GIFT', description: null }] });
    expect(row.onboarding_id).toBe(started.onboardingId);
    expect(row.content_type).toBe('application/pdf');
  });
});

describe('POST /v1/virtual-accounts', () => {
  it('409 KYC_NOT_APPROVED while the customer is not approved', async () => {
    const customer = await createReadyIndividual(t);
    const walletId: string = customer.portfolios[0].wallets[0];
    const before = await t.request({ method: 'POST', url: '/v1/virtual-accounts', body: { walletId } });
    await expectCode(before, 409, 'KYC_NOT_APPROVED');
    await startKyc(t, customer.id);
    await expectCode(await t.request({ method: 'POST', url: '/v1/baas/virtual-accounts', body: { walletId } }), 409, 'KYC_NOT_APPROVED');
  });

  it('404 for a missing, malformed and other client\'s wallet', async () => {
    const other = await approveIndividual(t, t.clientB);
    for (const walletId of [missingId, 'w', other.portfolios[0].wallets[0]]) {
      await expectCode(await t.request({ method: 'POST', url: '/v1/virtual-accounts', body: { walletId } }), 404, 'NOT_FOUND');
    }
  });

  it('numbers are unique across clients and never repeat', async () => {
    const numbers: string[] = [];
    for (const client of [t.clientA, t.clientB, t.clientA]) {
      const customer = await approveIndividual(t, client);
      const view = await t.request({ url: `/v1/customers/${customer.id}`, key: client.key });
      numbers.push(view.body.data.bankingInfo.virtual_account_number);
    }
    expect(new Set(numbers).size).toBe(3);
    const unique = await t.deps.db
      .selectFrom('wallets')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('virtual_account_number', 'is not', null)
      .executeTakeFirstOrThrow();
    const distinct = await t.deps.db
      .selectFrom('wallets')
      .select((eb) => eb.fn.count<string>('virtual_account_number').distinct().as('count'))
      .executeTakeFirstOrThrow();
    expect(distinct.count).toBe(unique.count);
  });
});

describe('compliance status of an approved customer after a forced failure', () => {
  it('is no longer compliant and names the action', async () => {
    const customer = await approveIndividual(t);
    const forced = await t.request({ method: 'POST', url: `/v1/sandbox/customers/${customer.id}/compliance-checks`, body: { name: 'DOC_FATCA', passed: false } });
    expect(forced.status).toBe(200);
    expect(forced.body.data).toMatchObject({ onboardingStatus: 'APPROVED', isCompliant: false, nextAction: 'UPLOAD_DOCUMENT' });
    const status = await complianceStatus(t, customer.id);
    expect(status.summary.requiredFailed).toEqual(['DOC_FATCA']);
  });

  it('400 for a check that cannot be forced', async () => {
    const customer = await createReadyIndividual(t);
    const response = await t.request({ method: 'POST', url: `/v1/sandbox/customers/${customer.id}/compliance-checks`, body: { name: 'KYC_STATUS', passed: true } });
    await expectCode(response, 400, 'VALIDATION_ERROR');
    expect(response.body.details[0].field).toBe('name');
  });
});
