import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../paths.js';
import { eventTypes } from './event-types.js';
import { renderEventCatalogue, withCatalogue } from './event-catalogue-doc.js';

describe('event catalogue in docs/webhooks.md', () => {
  it('matches the payload schemas in code (run npm run docs:webhooks)', () => {
    const document = fs.readFileSync(path.join(packageRoot, 'docs', 'webhooks.md'), 'utf8');
    expect(document).toBe(withCatalogue(document));
  });

  it('lists every event type of the catalogue with its fields', () => {
    const rendered = renderEventCatalogue();
    for (const type of eventTypes) expect(rendered).toContain(`- \`${type}\`: `);
    expect(rendered).toContain('| `counterparty.accountNumber` | string | yes |');
    expect(rendered).toContain('| `amounts.fees[].amount` | number | yes |');
  });
});
