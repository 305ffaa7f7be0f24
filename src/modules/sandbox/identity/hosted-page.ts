import escapeHtml from 'escape-html';
import type { VerificationOutcome } from '../../compliance/index.js';

/**
 * The hosted verification page of the sandbox identity vendor: plain server-rendered HTML, no
 * script. Every value printed goes through escapeHtml, whatever its origin.
 */

export type HostedPageView =
  | { kind: 'open'; token: string; fullName: string; expiresAt: Date; magicOutcome: VerificationOutcome }
  | { kind: 'done'; fullName: string; onboardingStatus: string; verificationStatus: string }
  | { kind: 'expired'; fullName: string | null }
  | { kind: 'refused'; token: string; problem: string }
  | { kind: 'not-found' };

export const outcomeLabels: Record<VerificationOutcome, string> = {
  APPROVED: 'Approve',
  DENIED_COMPLIANCE: 'Deny (compliance)',
  DENIED_IDENTITY_THEFT: 'Deny (identity theft)',
  MANUAL_REVIEW: 'Send to manual review',
  ERROR: 'Fail with a system error',
};

const verificationTexts: Record<string, string> = {
  APPROVED: 'Your identity was verified.',
  MANUAL_REVIEW: 'Your verification was submitted and is being reviewed by a person. You will hear back soon.',
  DENIED_COMPLIANCE: 'We could not verify your identity.',
  DENIED_IDENTITY_THEFT: 'We could not verify your identity.',
  ERROR: 'Something went wrong on our side while checking your documents. Please ask for a new verification link.',
  PENDING: 'Your verification has not been completed yet.',
  EXPIRED: 'This verification link has expired.',
  NOT_REQUIRED: 'No verification is needed.',
};

const style = `
  body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f3f4f6; color: #111827; margin: 0; }
  main { max-width: 34rem; margin: 3rem auto; background: #fff; border-radius: 12px; padding: 2rem; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
  h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
  .banner { background: #fef3c7; color: #92400e; border-radius: 6px; padding: .4rem .8rem; font-size: .85rem; margin-bottom: 1.2rem; }
  .steps { padding-left: 1.2rem; line-height: 1.6; }
  button { font: inherit; border: 0; border-radius: 8px; padding: .6rem 1rem; cursor: pointer; }
  .primary { background: #2563eb; color: #fff; width: 100%; font-size: 1.05rem; margin: .8rem 0 1.5rem; }
  .outcomes { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem; }
  .outcomes button { background: #e5e7eb; color: #111827; }
  .muted { color: #6b7280; font-size: .9rem; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
  dt { color: #6b7280; }
`;

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<main>
<div class="banner">Sandbox identity verification: no real documents are checked.</div>
${body}
</main>
</body>
</html>
`;
}

export function renderHostedPage(view: HostedPageView): string {
  switch (view.kind) {
    case 'open': {
      const action = `/hosted/kyc/${encodeURIComponent(view.token)}`;
      const outcomeButtons = (Object.keys(outcomeLabels) as VerificationOutcome[])
        .map((outcome) => `<button type="submit" name="outcome" value="${escapeHtml(outcome)}" data-outcome="${escapeHtml(outcome)}">${escapeHtml(outcomeLabels[outcome])}</button>`)
        .join('\n');
      return layout(
        'Verify your identity',
        `<h1>Verify your identity</h1>
<p>Hello <strong id="person-name">${escapeHtml(view.fullName)}</strong>, please confirm who you are.</p>
<ol class="steps">
<li>Photograph the front and back of your ID document.</li>
<li>Take a selfie so we can match it to the document.</li>
</ol>
<form method="post" action="${escapeHtml(action)}">
<button type="submit" class="primary" name="outcome" value="AUTO" id="complete">Complete verification</button>
<p class="muted">Completing it ends in <strong>${escapeHtml(view.magicOutcome)}</strong> for this person (see the magic last names in the sandbox guide). Or choose the outcome:</p>
<div class="outcomes">
${outcomeButtons}
</div>
</form>
<p class="muted">This link expires at ${escapeHtml(view.expiresAt.toISOString())}.</p>`,
      );
    }
    case 'done':
      return layout(
        'Verification submitted',
        `<h1>Thank you, ${escapeHtml(view.fullName)}</h1>
<p id="result">${escapeHtml(verificationTexts[view.verificationStatus] ?? 'Your verification was submitted.')}</p>
<dl>
<dt>Verification</dt><dd id="verification-status">${escapeHtml(view.verificationStatus)}</dd>
<dt>Onboarding</dt><dd id="onboarding-status">${escapeHtml(view.onboardingStatus)}</dd>
</dl>
<p class="muted">You can close this page.</p>`,
      );
    case 'expired':
      return layout(
        'Link expired',
        `<h1>This link has expired</h1>
<p>${view.fullName ? `${escapeHtml(view.fullName)}, this` : 'This'} verification link is no longer valid. Please ask for a new one.</p>`,
      );
    case 'refused': {
      // A submission the page does not understand (nothing was changed): say what the form sends.
      const accepted = ['AUTO', ...Object.keys(outcomeLabels)].map((value) => `<code>${escapeHtml(value)}</code>`).join(', ');
      return layout(
        'Submission not accepted',
        `<h1>This submission was not accepted</h1>
<p id="problem">${escapeHtml(view.problem)}</p>
<p>The form is sent as <code>application/x-www-form-urlencoded</code> with one field <code>outcome</code>, whose value is one of ${accepted}. Nothing was changed.</p>
<p><a href="${escapeHtml(`/hosted/kyc/${encodeURIComponent(view.token)}`)}">Back to the verification page</a></p>`,
      );
    }
    case 'not-found':
      return layout('Link not found', '<h1>Link not found</h1>\n<p>This verification link is not valid. Check that you copied all of it.</p>');
  }
}
