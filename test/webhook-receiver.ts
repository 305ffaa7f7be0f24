import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver saw it. */
export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAtMs: number;
}

/**
 * 'ok' answers 200; 'error' answers `errorStatus`; 'hang' never answers (until released or
 * stopped); 'redirect' answers 302 to `redirectTo`; 'hold' keeps requests until release() and
 * then answers 200, counting how many were open at once.
 */
export type ReceiverMode = 'ok' | 'error' | 'hang' | 'redirect' | 'hold';

/** A webhook receiver on 127.0.0.1 for tests: records every request, can fail on demand, can go down and come back. */
export class WebhookReceiver {
  /** Every receiver started in this test file, so a hook can verify everything they received. */
  static readonly started: WebhookReceiver[] = [];
  mode: ReceiverMode = 'ok';
  errorStatus = 500;
  /** Extra headers of the 'error' answers (Retry-After, say). */
  errorHeaders: Record<string, string> = {};
  responseBody = 'ok';
  /** In 'ok' mode, answer after this many milliseconds (keeps requests in flight for a while). */
  delayMs = 0;
  redirectTo = '';
  readonly requests: ReceivedWebhook[] = [];
  openNow = 0;
  openMax = 0;
  private server: http.Server | undefined;
  private readonly held: Array<() => void> = [];
  private readonly sockets = new Set<import('node:net').Socket>();
  private port = 0;

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await receiver.listen();
    WebhookReceiver.started.push(receiver);
    return receiver;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests whose webhook-id is `id` (and whose path is `path`, when given). */
  requestsFor(id: string, path?: string): ReceivedWebhook[] {
    return this.requests.filter((request) => request.headers['webhook-id'] === id && (path === undefined || request.path === path));
  }

  release(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  /** Closes the port: requests now fail with "connection refused". */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  async stop(): Promise<void> {
    await this.down();
  }

  private async listen(port = 0): Promise<void> {
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(request.headers)) {
          if (typeof value === 'string') headers[name] = value;
        }
        this.requests.push({ path: request.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8'), receivedAtMs: Date.now() });
        switch (this.mode) {
          case 'ok':
            if (this.delayMs > 0) {
              // Requests kept open by the delay are counted like held ones (openNow, openMax).
              this.openNow += 1;
              this.openMax = Math.max(this.openMax, this.openNow);
              setTimeout(() => {
                this.openNow -= 1;
                response.writeHead(200, { 'content-type': 'text/plain' }).end(this.responseBody);
              }, this.delayMs);
            } else {
              response.writeHead(200, { 'content-type': 'text/plain' }).end(this.responseBody);
            }
            return;
          case 'error':
            response.writeHead(this.errorStatus, { 'content-type': 'text/plain', ...this.errorHeaders }).end(this.responseBody);
            return;
          case 'redirect':
            response.writeHead(302, { location: this.redirectTo }).end();
            return;
          case 'hang':
            this.held.push(() => response.destroy());
            return;
          case 'hold':
            this.openNow += 1;
            this.openMax = Math.max(this.openMax, this.openNow);
            this.held.push(() => {
              this.openNow -= 1;
              response.writeHead(200).end('ok');
            });
            return;
        }
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }
}

/** Verifies a received webhook with the reference implementation; returns the parsed body or throws. */
export function verifyWebhook(secret: string, received: Pick<ReceivedWebhook, 'body' | 'headers'>): { id: string; type: string; createdAt: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(received.body, received.headers) as { id: string; type: string; createdAt: string; data: Record<string, unknown> };
}

/** True when the reference implementation accepts the webhook with this secret. */
export function verifiesWith(secret: string, received: ReceivedWebhook): boolean {
  try {
    verifyWebhook(secret, received);
    return true;
  } catch {
    return false;
  }
}

/** A port on 127.0.0.1 where nothing listens (connection refused). */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hooks`;
}

/**
 * Checks every request received so far (by every receiver of the file) with the reference
 * implementation: each must verify with one of the secrets its subscription had. The subscription
 * is found from the openbaas-delivery-id header. Returns the number of requests checked.
 */
export async function verifyEveryDelivery(
  subscriptionOf: (deliveryId: string) => Promise<string | undefined>,
  secretsBySubscription: ReadonlyMap<string, readonly string[]>,
): Promise<number> {
  let checked = 0;
  for (const receiver of WebhookReceiver.started) {
    for (const request of receiver.requests) {
      const deliveryId = request.headers['openbaas-delivery-id'];
      if (!deliveryId) throw new Error(`a request without openbaas-delivery-id reached ${request.path}`);
      const subscriptionId = await subscriptionOf(deliveryId);
      if (!subscriptionId) throw new Error(`delivery ${deliveryId} is unknown`);
      const secrets = secretsBySubscription.get(subscriptionId) ?? [];
      if (!secrets.some((secret) => verifiesWith(secret, request))) {
        throw new Error(`delivery ${deliveryId} to ${request.path} does not verify with any secret of subscription ${subscriptionId}`);
      }
      checked += 1;
    }
  }
  return checked;
}
