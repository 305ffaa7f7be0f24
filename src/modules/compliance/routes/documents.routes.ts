import multipart from '@fastify/multipart';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { Envelope } from '../../../platform/http/envelope.js';
import { AppError, validationError } from '../../../platform/http/errors.js';
import { runWrite } from '../../../platform/http/idempotency.js';
import { uploadBodyLimitBytes, validatorCompiler } from '../../../platform/http/validation.js';
import * as compliance from '../compliance.service.js';
import {
  businessDocumentTypes,
  cleanFileName,
  documentSizeMaxBytes,
  documentTypeDescriptions,
  individualDocumentTypes,
  sha256,
  sniffDocumentType,
  type DocumentType,
} from '../documents.js';
import { DocumentSchema } from './schemas.js';

/** Each text part's limit in characters (its schema's), and the form's in bytes: four per character, the most UTF-8 takes. */
const customerIdLengthMax = 64;
const partLengthMax = { customerId: customerIdLengthMax, documentType: 50 } as const;
const formFieldLengthMax = 4 * customerIdLengthMax;
// The limits of the multipart form are one part above what a good form holds (two fields, one
// file, three parts), so that the part one too many is read and refused naming it (an unknown
// part, a file part without a file name, a part sent twice) rather than by a limit, which names
// no part; past that, the limit answers naming `body`.
const formLimits = { fileSize: documentSizeMaxBytes, files: 2, fields: 3, parts: 4, fieldSize: formFieldLengthMax, fieldNameSize: 50, headerPairs: 20 };

interface ParsedUpload {
  customerId: string;
  documentType: DocumentType;
  file: compliance.UploadedFile;
}

function isFastifyError(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

/**
 * Reads the form: fields customerId and documentType and one file part named file. Unknown
 * parts, a missing part, a file over 10 MiB and a file that is not a PDF, PNG or JPEG (by its
 * content) are refused, each naming the part.
 */
async function readUpload(request: FastifyRequest, allowedTypes: readonly DocumentType[]): Promise<ParsedUpload> {
  if (!request.isMultipart()) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the document as multipart/form-data with the parts customerId, documentType and file.');
  }
  const fields: Record<string, string> = {};
  let file: { content: Buffer; fileName: string | null } | undefined;
  try {
    for await (const part of request.parts({ limits: formLimits })) {
      // A part without a name cannot be named back: until 2026-12-07 it answered 500 (an error
      // naming an undefined field failed to serialize; found by an audit).
      if (!part.fieldname) {
        if (part.type === 'file') await part.toBuffer().catch(() => undefined);
        throw validationError('body', 'every part needs a name (name="…" in its Content-Disposition): customerId, documentType or file');
      }
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file) {
          await part.toBuffer().catch(() => undefined);
          throw validationError(part.fieldname, part.fieldname === 'file' ? 'only one file may be sent' : 'is not a known part; send the document as the part named file');
        }
        file = { content: await part.toBuffer(), fileName: cleanFileName(part.filename) };
      } else {
        if (part.fieldname === 'file') throw validationError('file', 'must be sent as a file, with a file name (filename="…" in its Content-Disposition)');
        if (part.fieldname !== 'customerId' && part.fieldname !== 'documentType') throw validationError(part.fieldname, 'is not a known part');
        // Until 2026-12-07 a part sent twice was refused by a limit naming `body` (found by an audit).
        if (part.fieldname in fields) throw validationError(part.fieldname, 'is sent more than once; send each part once');
        // Until 2026-12-07 a part over the form's byte limit was told "at most 100 characters", the
        // customerId's limit being 64 (and 60 two-byte characters were over it; found by an audit).
        if (part.valueTruncated) throw validationError(part.fieldname, `must be at most ${partLengthMax[part.fieldname]} characters`);
        if (typeof part.value !== 'string') throw validationError(part.fieldname, 'must be text');
        fields[part.fieldname] = part.value;
      }
    }
  } catch (error) {
    if (isFastifyError(error, 'FST_REQ_FILE_TOO_LARGE')) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${documentSizeMaxBytes / 1024 / 1024} MiB.`, { details: [{ field: 'file', message: 'is larger than 10 MiB' }] });
    }
    if (isFastifyError(error, 'FST_PARTS_LIMIT') || isFastifyError(error, 'FST_FILES_LIMIT') || isFastifyError(error, 'FST_FIELDS_LIMIT')) {
      throw validationError('body', 'send exactly the parts customerId, documentType and one file');
    }
    if (error instanceof AppError) throw error;
    // Only the form is read in this block: what else fails is the body itself (no boundary, cut short).
    const reason = error instanceof Error ? error.message : String(error);
    throw new AppError('BAD_REQUEST', `The multipart body could not be read (${reason}).`, { details: [{ field: 'body', message: 'is not a complete multipart/form-data body' }] });
  }
  const customerId = fields.customerId;
  const documentType = fields.documentType;
  const missing = [customerId === undefined ? 'customerId' : undefined, documentType === undefined ? 'documentType' : undefined, file ? undefined : 'file'].filter(
    (field): field is string => field !== undefined,
  );
  if (missing.length > 0 || customerId === undefined || documentType === undefined || !file) {
    throw new AppError('VALIDATION_ERROR', `Missing parts: ${missing.join(', ')}.`, { details: missing.map((field) => ({ field, message: 'is required' })) });
  }
  // The 1 to 64 characters of its schema, without NUL, as in the JSON routes (until 2026-12-07 ids
  // of 65 to 100 characters, an empty one and one with NUL got 404; found by audits).
  if (customerId === '') throw validationError('customerId', 'must not be empty');
  if (customerId.includes('\u0000')) throw validationError('customerId', 'may not contain the NUL character');
  if ([...customerId].length > customerIdLengthMax) throw validationError('customerId', `must be at most ${customerIdLengthMax} characters`);
  if (!(allowedTypes as readonly string[]).includes(documentType)) {
    throw validationError('documentType', `must be one of ${allowedTypes.join(', ')}`);
  }
  if (file.content.length === 0) throw validationError('file', 'is empty');
  const contentType = await sniffDocumentType(file.content);
  if (!contentType) {
    throw new AppError('UNSUPPORTED_FILE_TYPE', 'The file is not a PDF, PNG or JPEG (its content was checked, not its name).', {
      details: [{ field: 'file', message: 'must be a PDF, PNG or JPEG' }],
    });
  }
  return { customerId, documentType: documentType as DocumentType, file: { content: file.content, fileName: file.fileName, contentType } };
}

/**
 * The form as the OpenAPI document shows it. The handler reads the parts itself (readUpload), so
 * this schema documents the body and is never compiled into a validator.
 */
function formSchema(types: readonly DocumentType[]) {
  return {
    type: 'object',
    required: ['customerId', 'documentType', 'file'],
    properties: {
      customerId: { type: 'string', minLength: 1, maxLength: customerIdLengthMax, description: 'the customer the document belongs to' },
      documentType: { type: 'string', maxLength: partLengthMax.documentType, enum: [...types] },
      file: { type: 'string', format: 'binary', maxLength: documentSizeMaxBytes, description: 'PDF, PNG or JPEG (by content), at most 10 MiB' },
    },
    examples: [{ customerId: '019ca945-09f0-7a61-b2c4-55e0d1c0a0b1', documentType: types[0], file: '(the file: PDF, PNG or JPEG)' }],
  };
}

const documentedOnly: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' ? () => true : validatorCompiler(route);

function typeList(types: readonly DocumentType[]): string {
  return types.map((type) => `${type} (${documentTypeDescriptions[type]})`).join('; ');
}

export function registerDocumentRoutes(app: App, deps: Deps, runtime: compliance.ComplianceRuntime): void {
  const routes = [
    { url: '/v1/compliance/upload-document', operationId: 'compliance.uploadDocument', customerType: 'PRIVATE' as const, types: individualDocumentTypes, who: 'an individual' },
    { url: '/v1/compliance/business/upload-document', operationId: 'compliance.uploadBusinessDocument', customerType: 'LEGAL' as const, types: businessDocumentTypes, who: 'a business' },
  ];
  // Multipart parsing exists only inside this scope: every other route keeps JSON only.
  void app.register(async (scope) => {
    await scope.register(multipart, { limits: formLimits, throwFileSizeLimit: true });
    // A JSON body is not read here, valid or not: 415, told to send multipart/form-data (until
    // 2026-12-07 one that was not valid JSON answered the JSON parser's 400; found by an audit).
    scope.removeContentTypeParser('application/json');
    for (const route of routes) {
      scope.post(
        route.url,
        {
          bodyLimit: uploadBodyLimitBytes + 64 * 1024,
          validatorCompiler: documentedOnly,
          schema: {
            operationId: route.operationId,
            body: formSchema(route.types),
            tags: ['Compliance'],
            summary: `Upload a compliance document of ${route.who}`,
            description:
              `multipart/form-data with the parts customerId, documentType and file. Types: ${typeList(route.types)}. ` +
              'The file must be a PDF, PNG or JPEG by its content (415 UNSUPPORTED_FILE_TYPE) and at most 10 MiB (413). ' +
              'It is stored with its SHA-256; an upload may complete the onboarding.',
            consumes: ['multipart/form-data'],
            response: { 201: Envelope(DocumentSchema) },
          },
        },
        async (request, reply) => {
          const upload = await readUpload(request, route.types);
          // The idempotency fingerprint covers the fields and the file's digest.
          request.body = { customerId: upload.customerId, documentType: upload.documentType, fileName: upload.file.fileName, sha256: sha256(upload.file.content).toString('hex') };
          return runWrite(request, reply, deps, async (tx, context) => ({
            statusCode: 201,
            message: 'Document uploaded',
            data: await compliance.uploadDocument(tx, context, runtime, { customerType: route.customerType, ...upload }),
          }));
        },
      );
    }
  });
}

