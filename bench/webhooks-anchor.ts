/**
 * The anchor of the webhooks benchmark, run as its own process (like the delivery worker it is
 * compared with): posts `count` signed bodies round-robin to the given receiver URLs, with
 * `concurrency` requests in flight per receiver over keep-alive connections, and no database.
 *
 *   node --import tsx bench/webhooks-anchor.ts <count> <concurrency> <secret> <url>...
 */
import http from 'node:http';
import { deliveryBody } from '../src/modules/webhooks/delivery-policy.js';
import { signedHeaders } from '../src/modules/webhooks/webhook-signing.js';

const [countText, concurrencyText, secret, ...urls] = process.argv.slice(2);
const count = Number(countText);
const concurrency = Number(concurrencyText);
if (!secret || urls.length === 0 || !Number.isInteger(count) || !Number.isInteger(concurrency)) {
  console.error('usage: webhooks-anchor.ts <count> <concurrency> <secret> <url>...');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true });

function post(url: string, index: number): Promise<void> {
  const id = `anchor-${index}`;
  const body = deliveryBody({ id, type: 'CUSTOMER_CREATED', createdAt: new Date().toISOString(), data: { customerId: `c-${index}`, traceId: 'anchor' } });
  const headers = signedHeaders([secret ?? ''], id, Math.floor(Date.now() / 1000), body);
  return new Promise<void>((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST',
      agent,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve());
    });
    request.on('error', reject);
    request.end(body);
  });
}

await Promise.all(
  urls.map(async (url, receiver) => {
    const mine: number[] = [];
    for (let index = receiver; index < count; index += urls.length) mine.push(index);
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < mine.length) {
          const index = mine[next++];
          if (index !== undefined) await post(url, index);
        }
      }),
    );
  }),
);
agent.destroy();
