import { fileURLToPath } from 'node:url';
import path from 'node:path';

// This file sits one level below the package root both in src/ (tsx, vitest) and in dist/ (built),
// so the package root is always its parent folder.
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const migrationsDir = path.join(packageRoot, 'migrations');
