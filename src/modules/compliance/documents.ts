import crypto from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { withoutRefusedCharacters } from '../../platform/text.js';

/**
 * Compliance documents: their types, the accepted file formats (decided by the content, never by
 * the file name or the declared content type) and the size limit.
 */

/** Documents of an individual (POST /v1/compliance/upload-document). */
export const individualDocumentTypes = [
  'DOC_SOURCE_OF_FUNDS',
  'DOC_FATCA_W9',
  'DOC_FATCA_W8BEN',
  'DOC_BIOMETRIC_REPORT',
  'DOC_PROOF_OF_ADDRESS',
] as const;

/** Documents of a business (POST /v1/compliance/business/upload-document). */
export const businessDocumentTypes = [
  'DOC_BUSINESS_REGISTRATION',
  'DOC_OWNERSHIP_STRUCTURE',
  'DOC_SOURCE_OF_FUNDS',
  'DOC_PROOF_OF_ADDRESS',
] as const;

export type IndividualDocumentType = (typeof individualDocumentTypes)[number];
export type BusinessDocumentType = (typeof businessDocumentTypes)[number];
export type DocumentType = IndividualDocumentType | BusinessDocumentType;

export const documentTypeDescriptions: Record<DocumentType, string> = {
  DOC_SOURCE_OF_FUNDS: 'Source-of-funds evidence or declaration',
  DOC_FATCA_W9: 'FATCA: IRS form W-9 (US persons)',
  DOC_FATCA_W8BEN: 'FATCA: IRS form W-8BEN (non-US individuals)',
  DOC_BIOMETRIC_REPORT: 'Biometric (selfie and liveness) report of an outside identity provider',
  DOC_PROOF_OF_ADDRESS: 'Proof of address: a recent utility bill or bank statement',
  DOC_BUSINESS_REGISTRATION: 'Certificate of incorporation or registration extract',
  DOC_OWNERSHIP_STRUCTURE: 'Ownership structure chart or shareholder register',
};

/** 10 MiB: the upload limit of every document. */
export const documentSizeMaxBytes = 10 * 1024 * 1024;
export const fileNameLengthMax = 255;

export const acceptedContentTypes = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type AcceptedContentType = (typeof acceptedContentTypes)[number];

/**
 * The content type of a document, read from its bytes by file-type (magic numbers): PDF, PNG and
 * JPEG only. Anything else, including a text file named ".pdf", answers undefined.
 */
export async function sniffDocumentType(content: Uint8Array): Promise<AcceptedContentType | undefined> {
  if (content.length === 0) return undefined;
  const detected = await fileTypeFromBuffer(content);
  const mime = detected?.mime;
  return (acceptedContentTypes as readonly string[]).includes(mime ?? '') ? (mime as AcceptedContentType) : undefined;
}

export function sha256(content: Uint8Array): Buffer {
  return crypto.createHash('sha256').update(content).digest();
}

/**
 * A file name kept for people: the last path segment, without control characters, invisible
 * formatting characters (a U+202E would show invoice\u202Efdp.exe as "invoiceexe.pdf") or line
 * separators, and at most 255 characters.
 */
export function cleanFileName(name: string | undefined): string | null {
  if (!name) return null;
  const lastSegment = withoutRefusedCharacters(name.split(/[\\/]/).pop() ?? '').trim();
  if (!lastSegment) return null;
  return [...lastSegment].slice(0, fileNameLengthMax).join('');
}
