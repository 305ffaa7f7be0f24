import type { Scenario } from '../lib.js';
import { transfers } from './transfers.js';

/** Every benchmark scenario; `npm run bench -- <name>` runs one, `npm run bench` runs all. */
export const scenarios: Scenario[] = [transfers];
