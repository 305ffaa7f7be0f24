/**
 * The event source of the webhooks benchmark, run as its own process so that recording does not
 * share an event loop with the receivers that time the deliveries: records CUSTOMER_CREATED
 * events round-robin across the given clients, one transaction each, at a steady rate, and prints
 * one line per event, "<event id> <commit time in ms since the epoch>", then "done <offered rate>".
 *
 *   node --import tsx bench/webhooks-recorder.ts <database url> <rate> <seconds> <events per transaction> <client id>...
 */
import { performance } from 'node:perf_hooks';
import { systemClock } from '../src/platform/clock.js';
import { openDatabase } from '../src/platform/db/database.js';
import { withTransaction } from '../src/platform/db/transaction.js';
import { recordEvent } from '../src/modules/webhooks/events.store.js';

const [databaseUrl, rateText, secondsText, perTransactionText, ...clientIds] = process.argv.slice(2);
const ratePerSecond = Number(rateText);
const seconds = Number(secondsText);
const perTransaction = Number(perTransactionText);
if (!databaseUrl || clientIds.length === 0 || !(ratePerSecond > 0) || !(seconds > 0) || !(perTransaction >= 1)) {
  console.error('usage: webhooks-recorder.ts <database url> <rate> <seconds> <events per transaction> <client id>...');
  process.exit(2);
}
/** At most one transaction per pooled connection: a recorder that falls behind shows as a lower offered rate. */
const connections = 20;
const database = await openDatabase({ databaseUrl, poolMax: connections, connectTimeoutMs: 30_000 });
const total = ratePerSecond * seconds;
const lines: string[] = [];
const pending = new Set<Promise<void>>();
const started = performance.now();
let issued = 0;
while (issued < total) {
  const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * ratePerSecond) + 1);
  while (issued < due && pending.size < connections) {
    const first = issued;
    const count = Math.min(perTransaction, total - issued);
    issued += count;
    const work = withTransaction(database.db, async (tx) => {
      const ids: string[] = [];
      for (let index = first; index < first + count; index++) {
        const clientId = clientIds[index % clientIds.length] ?? '';
        const event = await recordEvent(tx, { clientId, traceId: `bench-${index}`, now: systemClock.now() }, 'CUSTOMER_CREATED', {
          customerId: `customer-${index}`,
        });
        ids.push(event.id);
      }
      return ids;
    }).then((ids) => {
      const committed = performance.timeOrigin + performance.now();
      for (const id of ids) lines.push(`${id} ${committed}`);
    });
    const tracked = work.finally(() => pending.delete(tracked));
    pending.add(tracked);
  }
  await (pending.size >= connections ? Promise.race(pending) : new Promise((resolve) => setTimeout(resolve, 1)));
}
await Promise.all(pending);
const offeredRate = total / ((performance.now() - started) / 1000);
await database.close();
process.stdout.write(`${lines.join('\n')}\ndone ${offeredRate}\n`);
