import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.js';
import { logRedactPaths, logSerializers } from '../../src/platform/log.js';
import type { TestContext } from '../harness.js';

/**
 * A second app on the test's database that logs everything (trace level, with the production
 * redaction unless `redaction` is false) into a string: for the tests that scan logs for secrets.
 * Close it when done.
 */
export async function appWithLogCapture(t: TestContext, options: { redaction?: boolean } = {}) {
  let logged = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged += chunk.toString('utf8');
      done();
    },
  });
  const redaction = options.redaction === false ? {} : { redact: { paths: logRedactPaths, censor: '[REDACTED]' }, serializers: logSerializers };
  const { app } = await buildApp(t.deps, { logger: { level: 'trace', stream, ...redaction } });
  return { app, logged: () => logged, close: () => app.close() };
}
