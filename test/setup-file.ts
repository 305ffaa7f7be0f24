import { resetIdSequence } from '../src/platform/ids.js';
import { WebhookReceiver } from './webhook-receiver.js';

// Runs before each test file. Files share their worker process and its modules (vitest.config.ts,
// `isolate: false`), so what a module keeps for the whole process starts afresh for each file here.
resetIdSequence();
WebhookReceiver.started.length = 0;
