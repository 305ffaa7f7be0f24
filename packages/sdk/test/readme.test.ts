import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDatabase } from '../../../test/harness.js';
import { startSdkServer, type SdkServer } from './server.js';

/**
 * The README's code, as written: its quick start (also in the main README's SDK section) runs
 * against a listening server (on each database) and prints what the README says; both blocks
 * type-check against the SDK.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const sdkRoot = path.resolve(here, '..');
const readme = fs.readFileSync(path.join(sdkRoot, 'README.md'), 'utf8');
const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## The client'));
const [journey = '', receiver = ''] = [...quickStart.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
/** A folder of its own per run and database, inside test/ so the blocks import the sources by a relative path. */
const folder = path.join(here, `.readme-${testDatabase}-${process.pid}`);
const asWritten = (code: string) => code.replaceAll("from '@openbaas/sdk'", "from '../../src/index.js'");

let server: SdkServer;

beforeAll(async () => {
  server = await startSdkServer();
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'journey.ts'), asWritten(journey));
  fs.writeFileSync(path.join(folder, 'receiver.ts'), asWritten(receiver));
});
afterAll(async () => {
  fs.rmSync(folder, { recursive: true, force: true });
  await server?.close();
});

describe('packages/sdk/README.md', () => {
  it('has the two blocks, importing the package by its name; the main README\'s SDK section shows the same quick start', () => {
    expect(journey).toContain("from '@openbaas/sdk'");
    expect(receiver).toContain('verifyWebhook(body, request.headers');
    const main = fs.readFileSync(path.resolve(sdkRoot, '..', '..', 'README.md'), 'utf8');
    const section = main.slice(main.indexOf('## SDK\n'), main.indexOf('## Running on PostgreSQL'));
    expect(section).toContain(`\`\`\`ts\n${journey}\`\`\``);
  });

  it('runs the quick start against a real server and prints what it says', async () => {
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
      printed.push(values.map(String).join(' '));
    });
    vi.stubEnv('OPENBAAS_API_KEY', server.t.clientA.key);
    vi.stubEnv('OPENBAAS_BASE_URL', server.baseUrl);
    try {
      await import(path.join(folder, 'journey.ts'));
    } finally {
      log.mockRestore();
      vi.unstubAllEnvs();
    }
    expect(printed).toEqual(['COMPLETED', 'DEBIT 25.00', 'DEBIT 30.00', 'CREDIT 100.00', '45.00']);
  });

  // Type-checking does not depend on the database: once, in the PGlite project.
  if (testDatabase === 'pglite') {
    it('type-checks both blocks with the repository\'s compiler settings', () => {
      const root = path.resolve(sdkRoot, '..', '..');
      const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), (file) => ts.sys.readFile(file));
      const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
      const program = ts.createProgram({ rootNames: [path.join(folder, 'journey.ts'), path.join(folder, 'receiver.ts')], options: { ...config.options, noEmit: true } });
      const problems = ts
        .getPreEmitDiagnostics(program)
        .map((diagnostic) => `${diagnostic.file ? path.basename(diagnostic.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
      expect(problems).toEqual([]);
    });
  }
});
