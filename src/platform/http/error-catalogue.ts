import { errorCodes } from './error-codes.js';

/** The text of docs/errors.md, generated from the registry (npm run docs:errors writes it; a test compares). */
export function renderErrorCatalogue(): string {
  const rows = Object.entries(errorCodes)
    .sort(([codeA, a], [codeB, b]) => a.status - b.status || codeA.localeCompare(codeB))
    .map(([code, entry]) => `| \`${code}\` | ${entry.status} | ${entry.description} |`);
  return [
    '# Error catalogue',
    '',
    'Generated from `src/platform/http/error-codes.ts` by `npm run docs:errors`; a test fails when this file and the',
    'registry differ. Every error body is `{ "message", "code", "details"?: [{ "field", "message" }], "traceId" }`:',
    '`code` is stable and meant for programs, `message` is for people and may change, `details` names each offending',
    'field by its path (`kyc.mainAddress.zip`, `items[2].amount`; query parameters by their name).',
    '',
    '| code | HTTP status | meaning |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
