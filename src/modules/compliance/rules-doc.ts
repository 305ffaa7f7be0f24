import {
  businessCheckRules,
  businessNextActionRules,
  individualCheckRules,
  individualNextActionRules,
  type CheckRule,
  type NextActionRule,
} from './compliance-rules.js';

/**
 * The rules tables of docs/compliance.md, rendered from the rules in code. A test checks that the
 * document holds exactly this text, so the document cannot drift from the code.
 */

const yes = (value: boolean) => (value ? 'yes' : 'no');

function checkTable<F, N extends string, A extends string>(rules: ReadonlyArray<CheckRule<F, N, A>>, failedAction: (rule: CheckRule<F, N, A>) => string): string {
  const lines = ['| check | passes when | required (STANDARD) | required (EXTERNAL) | suggested action when failed | sandbox can force |', '|---|---|---|---|---|---|'];
  for (const rule of rules) {
    lines.push(`| \`${rule.name}\` | ${rule.passesWhen} | ${yes(rule.required.STANDARD)} | ${yes(rule.required.EXTERNAL)} | ${failedAction(rule)} | ${yes(rule.forceable)} |`);
  }
  return lines.join('\n');
}

function nextActionTable<F, N extends string, A extends string>(rules: ReadonlyArray<NextActionRule<F, N, A>>): string {
  const lines = ['| # | when | nextAction |', '|---|---|---|'];
  rules.forEach((rule, index) => lines.push(`| ${index + 1} | ${rule.when} | ${rule.action === null ? '`null` (compliant)' : `\`${rule.action}\``} |`));
  return lines.join('\n');
}

/** What a failed check suggests, in words: most rules always suggest one action. */
const individualActionText: Record<string, string> = {
  SDK_VERIFICATION_COMPLETED: '`START_KYC` (no onboarding or expired), `COMPLETE_SDK_FLOW` (flow not finished), `WAIT` (manual review), `RERUN_KYC` (system error), `CONTACT_SUPPORT` (denied)',
  KYC_STATUS: '`START_KYC` (no onboarding or expired), `CONTACT_SUPPORT` (denied), else `WAIT`',
};
const businessActionText: Record<string, string> = {
  UBO_KYC_APPROVED: '`CONTACT_SUPPORT` when a related person was denied, else `COMPLETE_UBO_KYC`',
  KYB_REVIEW_COMPLETED: '`START_KYB` (no KYB), `CONTACT_SUPPORT` (denied), else `WAIT`',
  KYB_STATUS: '`START_KYB` (no KYB), `CONTACT_SUPPORT` (denied), else `WAIT`',
};

function fixedAction(texts: Record<string, string>, byCategory: Record<string, string>) {
  return (rule: { name: string; category: string }) => texts[rule.name] ?? `\`${byCategory[rule.category] ?? ''}\``;
}

export function renderRulesTables(): string {
  return [
    '<!-- rules tables: generated from src/modules/compliance/compliance-rules.ts (see rules-doc.ts); a test keeps them equal -->',
    '### Individual checks',
    '',
    checkTable(individualCheckRules, fixedAction(individualActionText, { profile: 'UPDATE_PROFILE', document: 'UPLOAD_DOCUMENT', verification: 'START_KYC' })),
    '',
    '### Individual next action (first matching row wins)',
    '',
    nextActionTable(individualNextActionRules),
    '',
    '### Business checks',
    '',
    checkTable(
      businessCheckRules,
      (rule) =>
        businessActionText[rule.name] ??
        (rule.name === 'RELATED_PERSONS' ? '`ADD_PERSON_RELATIONS`' : rule.name === 'KYB_STARTED' ? '`START_KYB`' : rule.category === 'document' ? '`UPLOAD_BUSINESS_DOCUMENT`' : '`UPDATE_BUSINESS_DATA`'),
    ),
    '',
    '### Business next action (first matching row wins)',
    '',
    nextActionTable(businessNextActionRules),
    '<!-- end of rules tables -->',
  ].join('\n');
}
