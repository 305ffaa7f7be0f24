import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths.js';
import { renderErrorCatalogue } from '../src/platform/http/error-catalogue.js';
import { errorCodes } from '../src/platform/http/error-codes.js';

describe('error catalogue', () => {
  it('docs/errors.md matches the error-code registry (run npm run docs:errors)', () => {
    const documented = fs.readFileSync(path.join(packageRoot, 'docs', 'errors.md'), 'utf8');
    expect(documented).toBe(renderErrorCatalogue());
  });

  it('every code is upper snake case with a 4xx or 5xx status', () => {
    for (const [code, entry] of Object.entries(errorCodes)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
    }
  });
});
