import { describe, expect, it } from 'vitest';
import { coopAuthEventTypeOf, describeMti, expectsResponse, firstSendingOf, isAdvice, isSandboxMti, responseMtiOf, sandboxMtis, sendingsOf } from './mti.js';

describe('reading an MTI', () => {
  it('names class, function and origin', () => {
    expect(describeMti('0100')).toEqual({ mti: '0100', messageClass: 'AUTHORIZATION', messageFunction: 'REQUEST', origin: 'ACQUIRER', repeat: false });
    expect(describeMti('0230')).toMatchObject({ messageClass: 'FINANCIAL', messageFunction: 'ADVICE_RESPONSE' });
    expect(describeMti('0421')).toMatchObject({ messageClass: 'REVERSAL_CHARGEBACK', messageFunction: 'ADVICE', origin: 'ACQUIRER_REPEAT', repeat: true });
    expect(describeMti('0800')).toMatchObject({ messageClass: 'NETWORK_MANAGEMENT' });
  });

  it('is null for anything that is not a 1987 MTI', () => {
    for (const mti of ['1100', '0000', '0190', '0106', '010', '01000', 'O100']) expect(describeMti(mti)).toBeNull();
  });
});

describe('responses', () => {
  it('answers each sandbox request and advice with the MTI one function higher, itself in the table', () => {
    expect(['0100', '0120', '0200', '0220', '0400', '0420'].map(responseMtiOf)).toEqual(['0110', '0130', '0210', '0230', '0410', '0430']);
    for (const mti of Object.keys(sandboxMtis)) {
      const response = responseMtiOf(mti);
      if (response !== null) expect(isSandboxMti(response)).toBe(true);
    }
  });

  it('answers a repeat like its first sending', () => {
    expect(responseMtiOf('0101')).toBe('0110');
    expect(responseMtiOf('0421')).toBe('0430');
    expect(firstSendingOf('0101')).toBe('0100');
    expect(firstSendingOf('0221')).toBe('0220');
    expect(firstSendingOf('0100')).toBe('0100');
  });

  it('lists exactly the MTIs sent as a first sending (for database lookups)', () => {
    expect(sendingsOf('0100')).toEqual(['0100', '0101']);
    expect(sendingsOf('0420')).toEqual(['0420', '0421']);
    expect(sendingsOf('0101')).toEqual([]);
    const all = Array.from({ length: 10_000 }, (_, index) => String(index).padStart(4, '0'));
    for (const first of ['0100', '0120', '0200', '0220', '0400', '0420', '0101', '0110', '0109', '0800']) {
      expect(sendingsOf(first)).toEqual(all.filter((mti) => firstSendingOf(mti) === first));
    }
  });

  it('has none for a response or a malformed MTI', () => {
    for (const mti of ['0110', '0130', '0430', 'abcd']) {
      expect(responseMtiOf(mti)).toBeNull();
      expect(expectsResponse(mti)).toBe(false);
    }
  });

  it('tells advices (which cannot be declined) from requests', () => {
    expect(['0120', '0220', '0420', '0421'].every(isAdvice)).toBe(true);
    expect(['0100', '0200', '0400', '0130'].some(isAdvice)).toBe(false);
  });
});

describe('cooperative authorization events', () => {
  it('maps the five message types and their repeats, and nothing else', () => {
    expect(['0100', '0101', '0120', '0200', '0220', '0420', '0421'].map(coopAuthEventTypeOf)).toEqual([
      'COOP_AUTH_0100',
      'COOP_AUTH_0100',
      'COOP_AUTH_0120',
      'COOP_AUTH_0200',
      'COOP_AUTH_0220',
      'COOP_AUTH_0420',
      'COOP_AUTH_0420',
    ]);
    for (const mti of ['0110', '0400', '0800']) expect(coopAuthEventTypeOf(mti)).toBeNull();
  });
});
