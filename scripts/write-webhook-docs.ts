import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../src/paths.js';
import { withCatalogue } from '../src/modules/webhooks/event-catalogue-doc.js';

const target = path.join(packageRoot, 'docs', 'webhooks.md');
fs.writeFileSync(target, withCatalogue(fs.readFileSync(target, 'utf8')));
console.log(`wrote the event catalogue into ${path.relative(process.cwd(), target)}`);
