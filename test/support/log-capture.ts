import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.js';
import { logRedactPaths, logSerializers } from '../../src/platform/log.js';
import type { TestContext } from '../harness.js';

/**
 * A second app on the test's database that logs everything (trace level, with the production
 * redaction) into a string: for the tests that scan logs for secrets. Close it when done.
 */
export async function appWithLogCapture(t: TestContext) {
  let logged = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged += chunk.toString('utf8');
      done();
    },
  });
  const { app } = await buildApp(t.deps, { logger: { level: 'trace', stream, redact: { paths: logRedactPaths, censor: '[REDACTED]' }, serializers: logSerializers } });
  return { app, logged: () => logged, close: () => app.close() };
}
