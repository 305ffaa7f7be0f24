import { describe, expect, it } from 'vitest';
import { coopOutcome, readClientAnswer, standInAnswer, verdictText, type ClientExchange } from './coop-answer.js';
import { defaultCoopAuth } from '../program-settings.js';

const answered = (body: unknown, httpStatus = 200): ClientExchange => ({
  ok: httpStatus >= 200 && httpStatus < 300,
  httpStatus,
  latencyMs: 3,
  responseBody: typeof body === 'string' ? body : JSON.stringify(body),
  error: null,
});

describe('readClientAnswer: answers used as they are', () => {
  it('"00" alone, or with approvedAmountMinor equal to the request, is a full approval', () => {
    expect(readClientAnswer(answered({ responseCode: '00' }), 1000n)).toMatchObject({ kind: 'APPROVE', approvedMinor: 1000n, partial: false, responseCode: '00' });
    expect(readClientAnswer(answered({ responseCode: '00', approvedAmountMinor: 1000 }), 1000n)).toMatchObject({ kind: 'APPROVE', partial: false });
  });

  it('"00" or "10" below the request is a partial approval answered "10" (the client\'s own code kept as sent)', () => {
    const partial = readClientAnswer(answered({ responseCode: '00', approvedAmountMinor: 1 }), 1000n);
    expect(partial).toMatchObject({ kind: 'APPROVE', approvedMinor: 1n, partial: true, responseCode: '00' });
    expect(coopOutcome(partial, defaultCoopAuth, 1000n, true)).toMatchObject({ responseCode: '10', approvedMinor: 1n });
    expect(verdictText(partial, '10')).toBe('PARTIAL 1');
    expect(verdictText(partial, '05')).toBe('PARTIAL 1 not allowed (program or terminal): declined 05');
    expect(readClientAnswer(answered({ responseCode: '10', approvedAmountMinor: 999 }), 1000n)).toMatchObject({ kind: 'APPROVE', partial: true });
  });

  it('an optional field sent as null is taken as absent (many JSON writers write every field of a type)', () => {
    const nulls = { approvedAmountMinor: null, authCode: null, message: null, metadata: null };
    expect(readClientAnswer(answered({ responseCode: '00', ...nulls }), 1000n)).toEqual({ kind: 'APPROVE', approvedMinor: 1000n, partial: false, authCode: null, message: null, metadata: null, responseCode: '00' });
    expect(readClientAnswer(answered({ responseCode: '51', ...nulls }), 1000n)).toEqual({ kind: 'DECLINE', responseCode: '51', message: null, metadata: null });
    // The code itself is not optional.
    expect(readClientAnswer(answered({ responseCode: null }), 1000n)).toMatchObject({ kind: 'STAND_IN', reason: 'BAD_BODY' });
  });

  it('any other two-character code declines with it; message, metadata and unknown extra fields are kept or ignored', () => {
    const verdict = readClientAnswer(answered({ responseCode: 'Z3', message: 'no', metadata: { a: 1 }, extra: true }), 1000n);
    expect(verdict).toEqual({ kind: 'DECLINE', responseCode: 'Z3', message: 'no', metadata: { a: 1 } });
    expect(verdictText(verdict, 'Z3')).toBe('DECLINED Z3');
  });
});

describe('readClientAnswer: answers the stand-in replaces', () => {
  const badBodies: Array<[string, unknown]> = [
    ['"10" without an amount', { responseCode: '10' }],
    ['"10" with the whole amount (a partial approval of everything asked, contract §12.4)', { responseCode: '10', approvedAmountMinor: 1000 }],
    ['a zero amount', { responseCode: '00', approvedAmountMinor: 0 }],
    ['a negative amount', { responseCode: '00', approvedAmountMinor: -5 }],
    ['an amount as a string', { responseCode: '00', approvedAmountMinor: '500' }],
    ['a lower-case code', { responseCode: 'ab' }],
    ['a numeric code', { responseCode: 0 }],
    ['an authCode of the wrong shape', { responseCode: '00', authCode: 'abc' }],
    ['an authCode of 000000 (no approval code)', { responseCode: '00', authCode: '000000' }],
    ['a message too long', { responseCode: '05', message: 'x'.repeat(201) }],
    ['metadata with 21 keys', { responseCode: '00', metadata: Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`k${index}`, index])) }],
    ['metadata that is an array', { responseCode: '00', metadata: [] }],
    ['a JSON array', [{ responseCode: '00' }]],
    ['JSON null', null],
    ['an empty body', ''],
  ];
  for (const [name, body] of badBodies) {
    it(`${name}: BAD_BODY`, () => {
      expect(readClientAnswer(answered(body), 1000n)).toMatchObject({ kind: 'STAND_IN', reason: 'BAD_BODY' });
    });
  }

  it('an answer cut at the read limit: BAD_BODY saying so, even when the part read would parse', () => {
    const cut: ClientExchange = { ...answered({ responseCode: '00' }), responseBodyTruncatedAtBytes: 16384 };
    expect(readClientAnswer(cut, 1000n)).toEqual({ kind: 'STAND_IN', reason: 'BAD_BODY', detail: 'the body is longer than 16384 bytes, the most read of an answer' });
  });

  it('no answer: TIMEOUT for a timeout, UNREACHABLE for anything else; a non-2xx: NON_2XX', () => {
    const none = (error: string): ClientExchange => ({ ok: false, httpStatus: null, latencyMs: 2000, responseBody: null, error });
    expect(readClientAnswer(none('timed out after 2000 ms'), 1n)).toMatchObject({ reason: 'TIMEOUT' });
    expect(readClientAnswer(none('connection refused'), 1n)).toMatchObject({ reason: 'UNREACHABLE' });
    expect(readClientAnswer(answered({ responseCode: '00' }, 302), 1n)).toMatchObject({ reason: 'NON_2XX', detail: 'HTTP 302' });
  });
});

describe('standInAnswer', () => {
  it('DECLINE with its code, APPROVE, APPROVE_UP_TO inclusive of the maximum', () => {
    expect(standInAnswer(defaultCoopAuth, 5n)).toEqual({ approved: false, responseCode: '91' });
    expect(standInAnswer({ ...defaultCoopAuth, standIn: { mode: 'DECLINE', responseCode: '05', maxAmountMinor: null } }, 5n)).toEqual({ approved: false, responseCode: '05' });
    expect(standInAnswer({ ...defaultCoopAuth, standIn: { mode: 'APPROVE', responseCode: '91', maxAmountMinor: null } }, 5n)).toEqual({ approved: true, responseCode: '00' });
    const upTo = { ...defaultCoopAuth, standIn: { mode: 'APPROVE_UP_TO' as const, responseCode: '91', maxAmountMinor: 500 } };
    expect(standInAnswer(upTo, 500n).approved).toBe(true);
    expect(standInAnswer(upTo, 501n)).toEqual({ approved: false, responseCode: '91' });
  });
});
