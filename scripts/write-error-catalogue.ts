import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../src/paths.js';
import { renderErrorCatalogue } from '../src/platform/http/error-catalogue.js';

const target = path.join(packageRoot, 'docs', 'errors.md');
fs.writeFileSync(target, renderErrorCatalogue());
console.log(`wrote ${path.relative(process.cwd(), target)}`);
