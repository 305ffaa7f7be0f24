import type { Scenario } from '../lib.js';
import { webhooksScenario } from './webhooks.js';

/** Every benchmark scenario; `npm run bench -- <name>` runs one, `npm run bench` runs all. */
export const scenarios: Scenario[] = [webhooksScenario];
