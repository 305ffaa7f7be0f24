/* eslint-disable @typescript-eslint/no-explicit-any */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { issuedCard } from '../cards/fixtures.js';
import { cardVaultOf } from '../../src/modules/cards/index.js';

/**
 * The hosted reveal frame in a real browser (Debian's Chromium through playwright-core, as the
 * hosted KYC page test does). The embedding page is served from another origin (localhost instead
 * of 127.0.0.1, another port), as a client's app would be. Without Chromium the test reports
 * itself skipped with the reason; .ci/run installs it.
 */

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = fs.existsSync(chromiumPath);
const skipReason = `Chromium not found at ${chromiumPath}: install Debian's chromium package (apt-get install -y chromium) to run the browser test`;

let t: TestContext;
let apiOrigin: string;
let parentServer: http.Server | undefined;
let parentOrigin: string;
let browser: BrowserContext | undefined;
let profileDir: string | undefined;

/** The client's app: a page on its own origin embedding the frame and noting every message it receives. */
function parentPage(frameUrl: string): string {
  return `<!doctype html><html><head><title>Client app</title></head><body>
<iframe id="vault" src="${frameUrl}" width="420" height="220" allow="clipboard-write; clipboard-read"></iframe>
<script>
  window.received = [];
  window.addEventListener('message', function (event) { window.received.push({ origin: event.origin, data: event.data }); });
  window.readFrame = function () {
    try { return document.getElementById('vault').contentDocument ? 'readable' : 'blocked'; } catch (e) { return 'blocked'; }
  };
</script></body></html>`;
}

beforeAll(async () => {
  t = await createTestApp();
  if (!hasChromium) {
    console.warn(`vault frame browser test skipped: ${skipReason}`);
    return;
  }
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app is not listening on a TCP port');
  apiOrigin = `http://127.0.0.1:${address.port}`;
  let served = '';
  parentServer = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(served);
  });
  await new Promise<void>((resolve) => parentServer?.listen(0, '127.0.0.1', resolve));
  const parentAddress = parentServer.address();
  if (parentAddress === null || typeof parentAddress === 'string') throw new Error('the parent page server has no port');
  parentOrigin = `http://localhost:${parentAddress.port}`;
  (globalThis as any).setParentPage = (html: string) => (served = html);
  profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-chromium-'));
  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
  await new Promise((resolve) => (parentServer ? parentServer.close(resolve) : resolve(undefined)));
  await t.close();
});

async function openEmbedded(token: string): Promise<{ page: Page; frame: Frame }> {
  (globalThis as any).setParentPage(parentPage(`${apiOrigin}/vault/frame#token=${token}`));
  const page = await (browser as BrowserContext).newPage();
  await page.goto(`${parentOrigin}/`);
  let frame: Frame | undefined;
  for (let attempt = 0; attempt < 50 && !frame; attempt++) {
    frame = page.frames().find((candidate) => candidate.url().startsWith(`${apiOrigin}/vault/frame`));
    if (!frame) await page.waitForTimeout(100);
  }
  if (!frame) throw new Error('the vault frame did not load');
  return { page, frame };
}

describe('the hosted reveal frame in headless Chromium', () => {
  it('shows the card to the cardholder, copies a value, and tells the embedding page only events', async (context) => {
    if (!hasChromium || !browser) {
      context.skip(skipReason);
      return;
    }
    const { wallet, cardId } = await issuedCard(t);
    const issued = await t.request({ method: 'POST', url: '/v1/vault/token', body: { userId: wallet.customerId, cardId } });
    const { page, frame } = await openEmbedded(issued.body.data.token);
    await frame.waitForSelector('#card:not([hidden])', { timeout: 15_000 });

    const card = (await t.request({ url: `/v1/cards/${cardId}` })).body.data;
    const row = await t.deps.db.selectFrom('cards').select('pan_encrypted').where('id', '=', cardId).executeTakeFirstOrThrow();
    const pan = cardVaultOf(t.deps).decryptPan(row.pan_encrypted, t.clientA.id, cardId);
    const shownPan = (await frame.locator('#pan').textContent()) ?? '';
    expect(shownPan.replace(/ /g, '')).toBe(pan);
    expect(shownPan.endsWith(card.last4)).toBe(true);
    expect(await frame.locator('#cvv').textContent()).toMatch(/^[0-9]{3}$/);
    expect(await frame.locator('#expiry').textContent()).toBe(`${String(card.expiryMonth).padStart(2, '0')}/${String(card.expiryYear % 100).padStart(2, '0')}`);
    // The token left the frame's address bar once read.
    expect(frame.url()).toBe(`${apiOrigin}/vault/frame`);

    for (const origin of [apiOrigin, parentOrigin]) await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await frame.locator('button[data-copy="cvv"]').click();
    await page.waitForFunction(() => (globalThis as any).received.some((message: any) => message.data.event === 'copied'));
    expect(await frame.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(await frame.locator('#cvv').textContent());

    // The embedding page, on another origin, cannot reach into the frame, and what it was told holds no value.
    expect(await page.evaluate(() => (globalThis as any).readFrame())).toBe('blocked');
    const received = (await page.evaluate(() => (globalThis as any).received)) as Array<{ origin: string; data: Record<string, unknown> }>;
    expect(received.map((message) => message.data.event)).toEqual(['ready', 'revealed', 'copied']);
    expect(received.every((message) => message.origin === apiOrigin)).toBe(true);
    // What the messages carry (their origin, checked above, is the API's address: its port's digits
    // could match a CVV or the last four).
    const told = JSON.stringify(received.map((message) => message.data));
    expect(told).not.toContain(pan);
    expect(told).not.toContain(pan.slice(-4));
    expect(told).not.toContain((await frame.locator('#cvv').textContent()) ?? 'none');
    await page.close();
  });

  it('an expired token shows a clear message and tells the page the error code', async (context) => {
    if (!hasChromium || !browser) {
      context.skip(skipReason);
      return;
    }
    const { wallet, cardId } = await issuedCard(t);
    const issued = await t.request({ method: 'POST', url: '/v1/vault/token', body: { userId: wallet.customerId, cardId } });
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 400 } });
    const { page, frame } = await openEmbedded(issued.body.data.token);
    await frame.waitForSelector('#error:not([hidden])', { timeout: 15_000 });
    expect(await frame.locator('#error').textContent()).toBe('This link has expired. Close it and open the card details again.');
    expect(await frame.locator('#card').isHidden()).toBe(true);
    await page.waitForFunction(() => (globalThis as any).received.some((message: any) => message.data.event === 'error'));
    const received = (await page.evaluate(() => (globalThis as any).received)) as Array<{ data: Record<string, unknown> }>;
    expect(received.at(-1)?.data).toEqual({ source: 'openbaas-vault', event: 'error', code: 'VAULT_TOKEN_EXPIRED' });
    await page.close();
  });

  it('is served with its Content-Security-Policy, frame-ancestors from configuration, and no-store', async () => {
    const response = await t.request({ url: '/vault/frame', key: null });
    expect(response.status).toBe(200);
    const policy = String(response.headers['content-security-policy']);
    expect(policy).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+'/);
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toContain(`frame-ancestors ${t.config.vaultFrameAncestors}`);
    expect(response.headers['cache-control']).toBe('no-store');
  });
});
