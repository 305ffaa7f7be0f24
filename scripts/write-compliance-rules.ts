import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../src/paths.js';
import { renderRulesTables } from '../src/modules/compliance/rules-doc.js';

// Rewrites the rules tables of docs/compliance.md (between their two marker comments) from the code.
const file = path.join(packageRoot, 'docs', 'compliance.md');
const text = fs.readFileSync(file, 'utf8');
const start = text.indexOf('<!-- rules tables:');
const endMarker = '<!-- end of rules tables -->';
const end = text.indexOf(endMarker);
if (start < 0 || end < start) throw new Error('docs/compliance.md has no rules-table markers');
fs.writeFileSync(file, text.slice(0, start) + renderRulesTables() + text.slice(end + endMarker.length));
console.log('wrote docs/compliance.md');
