// A webhook receiver that verifies every delivery's Standard Webhooks signature with node:crypto
// alone (no dependency), prints what it received, and answers 200 (or 400 when the signature
// does not verify). Usage: WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs [port]
import crypto from 'node:crypto';
import http from 'node:http';

const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_')) throw new Error('set WEBHOOK_SECRET to the whsec_… secret of your subscription');
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
const port = Number(process.argv[2] ?? process.env.RECEIVER_PORT ?? 9000);

/** True when one of the `v1,<base64>` signatures is the HMAC-SHA256 of `id.timestamp.body`, and the timestamp is within 5 minutes. */
function verified(headers, body) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  if (!id || !timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((entry) => {
      const [version, value] = entry.split(',');
      const given = Buffer.from(value ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && crypto.timingSafeEqual(given, expected);
    });
}

http
  .createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (!verified(request.headers, body)) {
        console.log(`REFUSED ${request.headers['webhook-id']}: the signature does not verify`);
        response.writeHead(400).end();
        return;
      }
      const event = JSON.parse(body);
      console.log(`verified ${event.type} ${event.id} ${JSON.stringify(event.data)}`);
      response.writeHead(200).end();
    });
  })
  .listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));
