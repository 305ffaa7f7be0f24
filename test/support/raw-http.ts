import net from 'node:net';
import type { App } from '../../src/platform/http/app-type.js';

/**
 * One raw HTTP/1.1 exchange with an app listening on a port: status, headers (lower case) and body.
 * Raw, so a test can send what an HTTP client would not: two headers of one name written apart
 * (the keys of `headers` differ in case), an absolute-form request line.
 */
export async function rawExchange(port: number, requestLine: string, headers: Record<string, string>, body = ''): Promise<{ status: number; headers: Record<string, string>; body: { data?: unknown } | null }> {
  const socket = net.connect(port, '127.0.0.1');
  const lines = [requestLine, 'Host: localhost', 'Connection: close', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  if (body !== '') lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const [head = '', payload = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const parsed = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers: parsed, body: payload === '' ? null : JSON.parse(payload) };
}

/** The port of `app` listening on loopback (started on first use). */
export async function listeningPort(app: App): Promise<number> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app is not listening on a port');
  return address.port;
}
