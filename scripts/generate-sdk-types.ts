import fs from 'node:fs';
import path from 'node:path';
import { generateSdkTypes, sdkTypesFile } from './sdk-types.js';

// `npm run sdk:generate`: rewrites the SDK's generated types from the app's OpenAPI document.
const text = await generateSdkTypes();
fs.mkdirSync(path.dirname(sdkTypesFile), { recursive: true });
const before = fs.existsSync(sdkTypesFile) ? fs.readFileSync(sdkTypesFile, 'utf8') : '';
fs.writeFileSync(sdkTypesFile, text);
console.log(`${before === text ? 'unchanged' : 'wrote'} ${path.relative(process.cwd(), sdkTypesFile)} (${text.split('\n').length} lines)`);
