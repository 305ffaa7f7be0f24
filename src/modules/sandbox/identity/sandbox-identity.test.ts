import { describe, expect, it } from 'vitest';
import { renderHostedPage } from './hosted-page.js';
import { SandboxIdentityProvider, hashSdkToken, sandboxOutcomeFor, sdkTokenPattern } from './sandbox-identity-provider.js';

describe('sandbox identity provider', () => {
  const provider = new SandboxIdentityProvider({ publicBaseUrl: 'https://sandbox.example', linkTtlMs: 30 * 60_000 });
  const now = new Date('2026-03-01T12:00:00Z');

  it('issues a link under PUBLIC_BASE_URL with an unguessable token, keeps only its hash, and expires by the clock', async () => {
    const session = await provider.startSession({ onboardingId: 'o1', person: { firstName: 'Ada', lastName: 'Lovelace' }, now });
    const match = /^https:\/\/sandbox\.example\/hosted\/kyc\/(.+)$/.exec(session.link);
    const token = match?.[1] ?? '';
    expect(token).toMatch(sdkTokenPattern);
    expect(session.tokenSha256.equals(hashSdkToken(token))).toBe(true);
    expect(session.expiresAt.toISOString()).toBe('2026-03-01T12:30:00.000Z');
    const other = await provider.startSession({ onboardingId: 'o1', person: { firstName: 'Ada', lastName: 'Lovelace' }, now });
    expect(other.link).not.toBe(session.link);
  });

  it('decides a person by the magic last names, case-insensitively', () => {
    const outcome = (lastName: string) => sandboxOutcomeFor({ firstName: 'A', lastName });
    expect(outcome('Lovelace')).toBe('APPROVED');
    expect(outcome('Deny')).toBe('DENIED_COMPLIANCE');
    expect(outcome(' THEFT ')).toBe('DENIED_IDENTITY_THEFT');
    expect(outcome('review')).toBe('MANUAL_REVIEW');
    expect(outcome('Error')).toBe('ERROR');
  });

  it('reviews a business from its related persons and magic words in its legal name', () => {
    expect(provider.reviewBusiness({ legalName: 'Engines LLC', relatedPersonStatuses: ['APPROVED', 'APPROVED'] })).toBe('APPROVED');
    expect(provider.reviewBusiness({ legalName: 'Engines LLC', relatedPersonStatuses: ['APPROVED', 'PENDING'] })).toBe('PENDING');
    expect(provider.reviewBusiness({ legalName: 'Engines LLC', relatedPersonStatuses: [] })).toBe('PENDING');
    expect(provider.reviewBusiness({ legalName: 'Engines LLC', relatedPersonStatuses: ['APPROVED', 'DENIED_IDENTITY_THEFT'] })).toBe('DENIED_COMPLIANCE');
    expect(provider.reviewBusiness({ legalName: 'Deny Holdings Inc', relatedPersonStatuses: ['APPROVED'] })).toBe('DENIED_COMPLIANCE');
    expect(provider.reviewBusiness({ legalName: 'Peer-Review Partners', relatedPersonStatuses: ['APPROVED'] })).toBe('MANUAL_REVIEW');
    expect(provider.reviewBusiness({ legalName: 'Reviewers Guild', relatedPersonStatuses: ['APPROVED'] })).toBe('APPROVED');
  });
});

describe('hosted page HTML', () => {
  it('escapes everything it prints', () => {
    const html = renderHostedPage({
      kind: 'open',
      token: 'tok',
      fullName: '<script>alert("x")</script> & "Ada"',
      expiresAt: new Date('2026-03-01T12:30:00Z'),
      magicOutcome: 'APPROVED',
    });
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;Ada&quot;');
    expect(html).toContain('action="/hosted/kyc/tok"');
    for (const outcome of ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR']) {
      expect(html).toContain(`value="${outcome}"`);
    }
  });

  it('shows the result, the expiry, the refused submission and the unknown link pages', () => {
    expect(renderHostedPage({ kind: 'done', fullName: 'Ada <b>', onboardingStatus: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' })).toContain('Ada &lt;b&gt;');
    expect(renderHostedPage({ kind: 'expired', fullName: 'Ada' })).toContain('has expired');
    expect(renderHostedPage({ kind: 'not-found' })).toContain('Link not found');
    const refused = renderHostedPage({ kind: 'refused', token: 'tok', problem: 'The outcome "<b>" is not one the page knows.' });
    expect(refused).toContain('&quot;&lt;b&gt;&quot;');
    expect(refused).toContain('href="/hosted/kyc/tok"');
  });
});
