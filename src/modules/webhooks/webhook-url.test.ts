import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { ConfigError, loadConfig } from '../../platform/config.js';
import { AppError } from '../../platform/http/errors.js';
import { retryDelayMs } from './delivery-policy.js';
import { WebhookHttpClient } from './webhook-http.js';
import { generateSecret, signedHeaders } from './webhook-signing.js';
import { checkWebhookUrl, guardedLookup, isPublicAddress } from './webhook-url.js';

async function refusal(url: string, mode: 'sandbox' | 'production'): Promise<{ code: string; details: unknown } | undefined> {
  try {
    await checkWebhookUrl(url, mode);
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, details: error.details };
  }
}

describe('webhook URL rules', () => {
  it.each([
    'https://127.0.0.1/hooks',
    'https://10.1.2.3/hooks',
    'https://172.16.0.1/hooks',
    'https://192.168.1.1/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/hooks',
    'https://0.0.0.0/hooks',
    'https://[::1]/hooks',
    'https://[fe80::1]/hooks',
    'https://[fd12:3456::1]/hooks',
    'https://[::ffff:127.0.0.1]/hooks',
    'https://localhost/hooks',
    'https://api.localhost/hooks',
    'http://93.184.215.14/hooks',
  ])('production refuses %s', async (url) => {
    const refused = await refusal(url, 'production');
    expect(refused?.code).toBe('WEBHOOK_URL_NOT_ALLOWED');
    expect(refused?.details).toEqual([{ field: 'url', message: expect.any(String) }]);
  });

  it('production accepts https to a public address', async () => {
    expect(await refusal('https://93.184.215.14/hooks', 'production')).toBeUndefined();
    expect(await refusal('https://[2606:4700::6810:84e5]/hooks', 'production')).toBeUndefined();
  });

  it('sandbox accepts http to loopback, for local receivers', async () => {
    expect(await refusal('http://127.0.0.1:3000/hooks', 'sandbox')).toBeUndefined();
    expect(await refusal('http://localhost:3000/hooks', 'sandbox')).toBeUndefined();
  });

  // Until 2026-12-07 the sandbox took any address: a shared sandbox server could be made to POST to
  // its cloud's metadata service and show the answer in the delivery log (found by an audit).
  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]:3000/hooks',
    'http://0.0.0.0:4109/x',
    'http://[::]:4109/x',
    'http://224.0.0.1/hooks',
    'http://255.255.255.255/hooks',
    'http://[::ffff:169.254.169.254]/hooks',
    // Metadata services outside link-local, and IPv6 forms embedding an IPv4 address (found by the re-audit).
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://100.100.100.200/latest/meta-data/',
    'http://192.0.0.192/opc/v2/instance/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::1]/',
  ])('the sandbox refuses %s (link-local, unspecified, multicast, broadcast, metadata services, embedded IPv4)', async (url) => {
    const refused = await refusal(url, 'sandbox');
    expect(refused?.code).toBe('WEBHOOK_URL_NOT_ALLOWED');
    expect(refused?.details).toEqual([{ field: 'url', message: expect.stringMatching(/^url must not point to a link-local, unspecified, multicast or broadcast address, a cloud metadata service/) }]);
  });

  it('the sandbox accepts private addresses, for receivers on the developer\'s network', async () => {
    for (const url of ['http://10.0.0.1/x', 'http://192.168.1.20:8080/x', 'http://172.17.0.1:3000/hooks', 'http://[::1]:3000/x', 'http://[fd12:3456::1]/x', 'http://100.101.102.103:8080/x']) {
      expect(await refusal(url, 'sandbox'), url).toBeUndefined();
    }
  });

  it('a port outside 1 to 65535 is refused, naming the port', async () => {
    for (const [url, port] of [['http://127.0.0.1:0/hooks', '0'], ['http://127.0.0.1:99999/hooks', '99999'], ['https://example.com:65536', '65536']] as const) {
      const refused = await refusal(url, 'sandbox');
      expect(refused, url).toEqual({ code: 'VALIDATION_ERROR', details: [{ field: 'url', message: `has port ${port}; a port is 1 to 65535` }] });
    }
    expect(await refusal('http://127.0.0.1:65535/hooks', 'sandbox')).toBeUndefined();
  });

  it('credentials are refused in any mode', async () => {
    expect((await refusal('http://user:pass@127.0.0.1/hooks', 'sandbox'))?.code).toBe('VALIDATION_ERROR');
    expect((await refusal('https://user@93.184.215.14/hooks', 'production'))?.code).toBe('VALIDATION_ERROR');
  });

  it('only plain public unicast addresses count as public', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('2606:4700::1')).toBe(true);
    for (const address of ['127.0.0.1', '10.0.0.1', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', '224.0.0.1', '64:ff9b::a00:1', '::127.0.0.1', '::7f00:1', '::808:808', 'nonsense']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
});

describe('delivery-time address check (production)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
  });

  it('the connection refuses a public-looking name that now resolves to a loopback address (DNS rebinding), before connecting', async () => {
    const port = new URL(receiver.url()).port;
    // A resolver playing the attacker's DNS: the name answers 127.0.0.1 at delivery time.
    const client = new WebhookHttpClient('production', {
      resolve: (_hostname, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    try {
      const outcome = await client.post(`https://hooks.example.com:${port}/hooks`, {}, '{}', { timeoutMs: 2000 });
      expect(outcome).toMatchObject({ ok: false, httpStatus: null });
      expect(outcome.error).toBe('address not allowed: hooks.example.com resolves to 127.0.0.1, which is not a public address');
      const literal = await client.post(`https://[::1]:${port}/hooks`, {}, '{}', { timeoutMs: 2000 });
      expect(literal.error).toMatch(/^url must not point to a loopback/);
      const plain = await client.post(`http://93.184.215.14:${port}/hooks`, {}, '{}', { timeoutMs: 2000 });
      expect(plain.error).toBe('url must use https in production');
      expect(receiver.requests).toHaveLength(0);
    } finally {
      client.close();
    }
  });

  it('the guarded lookup itself refuses loopback answers', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      guardedLookup('localhost', {}, (lookupError) => resolve(lookupError));
    });
    expect(error?.code).toBe('EADDRNOTALLOWED');
  });

  it('a kept-alive connection the receiver resets as it is reused is tried once more on a new one, within the timeout; a reset on a new connection is not', async () => {
    // Until 2026-12-05 it was a failed attempt, retried 5 s later (a soak test by an audit saw 9 in 44,187).
    const { default: net } = await import('node:net');
    let connections = 0;
    const requestsSeen: string[] = [];
    let resetEveryFirstRequest = false;
    const server = net.createServer((socket) => {
      connections += 1;
      let served = 0;
      socket.on('data', (chunk) => {
        requestsSeen.push(String(chunk).split('\r\n')[0] ?? '');
        // Each connection answers its first request and resets on the next, as a receiver whose
        // idle timeout closes the connection just as it is reused.
        if (served > 0 || resetEveryFirstRequest) {
          socket.resetAndDestroy();
          return;
        }
        served += 1;
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
    const client = new WebhookHttpClient('sandbox');
    try {
      expect(await client.post(url, {}, '{"n":1}', { timeoutMs: 2000 })).toMatchObject({ ok: true, httpStatus: 200 });
      expect(await client.post(url, {}, '{"n":2}', { timeoutMs: 2000 })).toMatchObject({ ok: true, httpStatus: 200, responseBody: 'ok', error: null });
      expect(connections).toBe(2);
      expect(requestsSeen).toHaveLength(3);
      // A new connection reset before any answer is a failure as before: the receiver read the request.
      resetEveryFirstRequest = true;
      const fresh = new WebhookHttpClient('sandbox');
      try {
        expect(await fresh.post(url, {}, '{"n":3}', { timeoutMs: 2000 })).toMatchObject({ ok: false, httpStatus: null, error: 'connection reset by the receiver' });
      } finally {
        fresh.close();
      }
      expect(connections).toBe(3);
    } finally {
      client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('the sandbox client refuses a name that resolves to a link-local address, before connecting', async () => {
    const client = new WebhookHttpClient('sandbox', {
      resolve: (_hostname, _options, callback) => callback(null, [{ address: '169.254.169.254', family: 4 }]),
    });
    try {
      const outcome = await client.post('http://metadata.example.com/latest/meta-data/', {}, '{}', { timeoutMs: 2000 });
      expect(outcome).toMatchObject({ ok: false, httpStatus: null });
      expect(outcome.error).toBe('address not allowed: metadata.example.com resolves to 169.254.169.254, which is link-local, unspecified, multicast or broadcast, a cloud metadata service or an IPv6 form of an IPv4 address');
      const literal = await client.post('http://169.254.169.254/latest/meta-data/', {}, '{}', { timeoutMs: 2000 });
      expect(literal.error).toMatch(/^url must not point to a link-local/);
    } finally {
      client.close();
    }
  });

  it('the sandbox client reaches a loopback receiver', async () => {
    const client = new WebhookHttpClient('sandbox');
    try {
      const outcome = await client.post(receiver.url(), {}, '{"a":1}', { timeoutMs: 2000 });
      expect(outcome).toMatchObject({ ok: true, httpStatus: 200, responseBody: 'ok', error: null });
      expect(receiver.requests[0]?.body).toBe('{"a":1}');
    } finally {
      client.close();
    }
  });
});

describe('signing', () => {
  it('produces what the standardwebhooks reference implementation produces', () => {
    const secret = generateSecret();
    const body = JSON.stringify({ id: 'evt', type: 'CUSTOMER_CREATED', data: { customerId: 'c', traceId: 't' } });
    const timestamp = 1_772_366_400;
    const ours = signedHeaders([secret], 'msg_1', timestamp, body);
    expect(ours['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body));
  });
});

describe('configuration', () => {
  it('reads the retry schedule with units, and refuses nonsense', () => {
    expect(loadConfig({}).webhookRetryScheduleMs).toEqual([5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '50ms, 2s,1m' }).webhookRetryScheduleMs).toEqual([50, 2000, 60_000]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: 'none' }).webhookRetryScheduleMs).toEqual([]);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5 minutes' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0s' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_LEASE_MS: '5000' })).toThrow(/WEBHOOK_LEASE_MS/);
  });

  it('spreads retry delays by the jitter, within bounds', () => {
    const config = { webhookRetryScheduleMs: [1000, 5000], webhookRetryJitterPercent: 10 };
    expect(retryDelayMs(config, 1, () => 0)).toBe(900);
    expect(retryDelayMs(config, 1, () => 1)).toBe(1100);
    expect(retryDelayMs(config, 2, () => 0.5)).toBe(5000);
    expect(retryDelayMs(config, 9, () => 0.5)).toBe(5000);
  });
});
