import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSdkTypes, sdkTypesFile } from '../../../scripts/sdk-types.js';

/**
 * The CI check of the SDK's generated types: they are made again from the app's OpenAPI document,
 * in memory, and must equal the committed file. The document does not depend on the database, so
 * this runs once (in the PGlite project), not once per database.
 */
describe('packages/sdk/src/generated/openapi.ts', () => {
  it('is what the running app\'s OpenAPI document generates', async () => {
    const expected = await generateSdkTypes();
    const committed = fs.existsSync(sdkTypesFile) ? fs.readFileSync(sdkTypesFile, 'utf8') : '';
    if (committed !== expected) {
      const committedLines = committed.split('\n');
      const expectedLines = expected.split('\n');
      const line = expectedLines.findIndex((text, index) => text !== committedLines[index]);
      expect.fail(
        `The SDK's generated types are out of date with the routes' schemas (first difference at line ${line + 1}: ` +
          `${JSON.stringify(committedLines[line] ?? '')} should be ${JSON.stringify(expectedLines[line] ?? '')}). Run \`npm run sdk:generate\` and commit the result.`,
      );
    }
  });
});
