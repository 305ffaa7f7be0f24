/* eslint-disable @typescript-eslint/no-explicit-any */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

/** One decision request as the client's endpoint saw it. */
export interface DecisionRequest {
  headers: Record<string, string>;
  body: string;
  parsed: { id: string; type: string; createdAt: string; data: Record<string, any> };
}

/**
 * What the endpoint answers: a status, a body (a string is sent as is, anything else as JSON) and a
 * delay; or, with `later`, whatever that promise gives once it settles (a test answers when it chooses).
 */
export interface DecisionAnswer {
  status?: number;
  body: unknown;
  delayMs?: number;
  later?: Promise<{ status?: number; body: unknown }>;
}

/**
 * A cooperative client's decision endpoint on 127.0.0.1 for tests: records every request and
 * answers what `answer` returns for it (by default approve everything with "00").
 */
export class CoopReceiver {
  readonly requests: DecisionRequest[] = [];
  answer: (request: DecisionRequest) => DecisionAnswer = () => ({ body: { responseCode: '00' } });
  /** Answers that reached the socket after the caller had given up (closed or not read). */
  lateAnswers = 0;
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private port = 0;

  static async start(): Promise<CoopReceiver> {
    const receiver = new CoopReceiver();
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
        const body = Buffer.concat(chunks).toString('utf8');
        const received: DecisionRequest = { headers, body, parsed: JSON.parse(body) };
        receiver.requests.push(received);
        const answer = receiver.answer(received);
        const send = (given: { status?: number; body: unknown } = answer) => {
          if (response.destroyed) {
            receiver.lateAnswers += 1;
            return;
          }
          const text = typeof given.body === 'string' ? given.body : JSON.stringify(given.body);
          response.writeHead(given.status ?? 200, { 'content-type': 'application/json' }).end(text);
        };
        if (answer.later) void answer.later.then((given) => send(given));
        else if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    server.on('connection', (socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    receiver.port = (server.address() as AddressInfo).port;
    receiver.server = server;
    return receiver;
  }

  /**
   * From now on answers `body` after `delayMs`; resolves with the first request received, so a
   * test can act while that request waits for its answer.
   */
  holdAnswers(body: unknown, delayMs: number): Promise<DecisionRequest> {
    return new Promise((resolve) => {
      let first = true;
      this.answer = (request) => {
        if (first) {
          first = false;
          resolve(request);
        }
        return { body, delayMs };
      };
    });
  }

  url(path = '/coop'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The requests for one card transaction record (data.cardTransactionId). */
  requestsFor(cardTransactionId: string): DecisionRequest[] {
    return this.requests.filter((request) => request.parsed.data.cardTransactionId === cardTransactionId);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
