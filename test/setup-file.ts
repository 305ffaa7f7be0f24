import { afterAll } from 'vitest';
import { forgetPreparedStatementNames } from '../src/platform/db/prepared-statements.js';
import { resetIdSequence } from '../src/platform/ids.js';
import { removeTemporaryFolders } from './support/temp-folder.js';
import { WebhookReceiver } from './webhook-receiver.js';

// Runs before each test file. Files share their worker process and its modules (vitest.config.ts,
// `isolate: false`), so what a module keeps for the whole process starts afresh for each file here.
resetIdSequence();
// Prepared statements are planned again after 64 runs in the process, 512 and so on: counted from
// this file's start, a file sees the same replans whichever files ran before it in its worker
// (one that counts statements would otherwise count a DEALLOCATE now and then).
forgetPreparedStatementNames();
WebhookReceiver.started.length = 0;
// Folders made by temporaryFolder (test/support/temp-folder.ts) go when the file ends; a file's own
// afterAll hooks (stopping what still runs in them) run before this one.
afterAll(removeTemporaryFolders);
