import { describe, expect, it } from 'vitest';
import { declineReasons, describeResponseCode, isApproval, isResponseCodeShape, responseCodeOf, responseCodes, type DeclineReason } from './response-codes.js';

describe('approvals', () => {
  it('00 approves, 10 approves partially; neither has a decline reason', () => {
    expect(describeResponseCode('00')).toMatchObject({ outcome: 'APPROVED', declineReason: null });
    expect(describeResponseCode('10')).toMatchObject({ outcome: 'PARTIALLY_APPROVED', declineReason: null });
    expect(isApproval('00') && isApproval('10')).toBe(true);
  });
});

describe('declines', () => {
  it('covers the codes the contract uses, each with its decline reason', () => {
    const used = ['05', '13', '14', '51', '54', '55', '57', '59', '61', '62', '65', '91', '94', '96'];
    for (const code of used) {
      const entry = describeResponseCode(code);
      expect(entry?.outcome).toBe('DECLINED');
      expect(isApproval(code)).toBe(false);
      expect(entry?.declineReason).not.toBeNull();
    }
    expect(describeResponseCode('51')?.declineReason).toBe('INSUFFICIENT_FUNDS');
    expect(describeResponseCode('91')?.declineReason).toBe('ISSUER_UNAVAILABLE');
  });

  it('every declined entry maps back to its own code through its decline reason', () => {
    for (const entry of responseCodes.values()) {
      if (entry.declineReason !== null) expect(responseCodeOf(entry.declineReason)).toBe(entry.code);
    }
  });

  it('every decline reason answers with a code in the table that is a decline', () => {
    for (const reason of Object.keys(declineReasons) as DeclineReason[]) {
      expect(responseCodes.get(responseCodeOf(reason))?.outcome).toBe('DECLINED');
    }
    expect(responseCodeOf('LTV_PURCHASE_RESTRICTED')).toBe('57');
    expect(responseCodeOf('PARTIAL_APPROVAL_NOT_ALLOWED')).toBe('05');
  });

  it('a well-formed code outside the table declines with that code', () => {
    expect(describeResponseCode('N7')).toMatchObject({ code: 'N7', outcome: 'DECLINED', declineReason: 'DECLINED_BY_CLIENT' });
    expect(isApproval('N7')).toBe(false);
  });
});

describe('shape', () => {
  it('is two capital letters or digits', () => {
    expect(['00', '10', 'N7', 'Z3'].every(isResponseCodeShape)).toBe(true);
    for (const value of ['0', '000', 'n7', ' 0', 0, null]) expect(isResponseCodeShape(value)).toBe(false);
    expect(describeResponseCode('0')).toBeNull();
  });
});
