import { isUuid } from '../ids.js';
import { errorCodes, type ErrorCode } from './error-codes.js';

export interface ErrorDetail {
  field: string;
  message: string;
}

/** An expected outcome that ends a request with a 4xx: a stable code, a status and a message for a person. */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.code = code;
    this.statusCode = errorCodes[code].status;
    this.details = options.details;
    this.headers = options.headers;
  }
}

/** 404: the resource, and the body field that named it when there is one (`details`). */
export function notFound(resource: string, field?: string): AppError {
  const details = field === undefined ? undefined : [{ field, message: `no such ${resource.toLowerCase()}` }];
  return new AppError('NOT_FOUND', `${resource} not found`, details ? { details } : {});
}

export function validationError(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `${field}: ${message}`, { details: [{ field, message }] });
}

/**
 * A list filter that matches a link between records (`parentTransactionId`, `cryptoTransactionId`,
 * …; docs/api-design.md, Lists) names no resource, so an id nothing links to answers an empty page;
 * a value that is not an id at all is a mistake, refused naming the filter (until 2026-12-08 it
 * answered an empty page too, so a typo looked like "no records"; found by an audit). Nothing is
 * told about what exists: no id of any client has that shape.
 */
export function requireLinkFilterId(field: string, value: string): string {
  if (!isUuid(value)) throw validationError(field, 'must be an id (a UUID); an id nothing links to answers an empty page');
  return value;
}
