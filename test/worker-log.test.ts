import { describe, expect, it } from 'vitest';
import { errorsAsObjects } from '../src/main.js';

// The `worker` command's log lines (runWorkersOnly): until 2026-12-05 an error was written as
// "err":{} (JSON.stringify sees none of an Error's fields), the cause lost (found by an audit).
describe('the worker command\'s log', () => {
  it('writes an error as its type, message, code and stack', () => {
    const error = Object.assign(new TypeError('cannot open the secret'), { code: 'FIELD_KEY_MISMATCH' });
    const line = JSON.parse(JSON.stringify({ level: 'error', msg: 'x', err: error, deliveryId: 'd1' }, errorsAsObjects));
    expect(line).toMatchObject({ deliveryId: 'd1', err: { type: 'TypeError', message: 'cannot open the secret', code: 'FIELD_KEY_MISMATCH' } });
    expect(line.err.stack).toContain('cannot open the secret');
  });
});
