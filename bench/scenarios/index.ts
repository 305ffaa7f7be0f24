import type { Scenario } from '../lib.js';
import { balance } from './balance.js';
import { cardAuth } from './card-auth.js';
import { coopAuth } from './coop-auth.js';
import { cryptoConfirm } from './crypto-confirm.js';
import { embedded } from './embedded.js';
import { hotAccount } from './hot-account.js';
import { ltvReprice } from './ltv-reprice.js';
import { snapshotRestore } from './snapshot-restore.js';
import { start } from './start.js';
import { transfers } from './transfers.js';
import { trades } from './trades.js';
import { webhooksScenario } from './webhooks.js';
import { webhooksApi, webhooksApiEmbedded, webhooksApiWorker } from './webhooks-api.js';

/** Every benchmark scenario; `npm run bench -- <name>` runs one, `npm run bench` runs all. */
export const scenarios: Scenario[] = [transfers, trades, cardAuth, coopAuth, hotAccount, balance, embedded, webhooksScenario, webhooksApi, webhooksApiWorker, webhooksApiEmbedded, snapshotRestore, start, cryptoConfirm, ltvReprice];
