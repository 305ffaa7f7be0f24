import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { createTestApp, type TestAppOptions, type TestContext } from '../harness.js';

/**
 * What the console's browser tests share: Debian's Chromium driven by playwright-core, the app
 * listening on loopback, a tab signed in with a key, and the checks they make on every page.
 */

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = fs.existsSync(chromiumPath);
export const skipReason = `Chromium not found at ${chromiumPath}: install Debian's chromium package (apt-get install -y chromium) to run the browser test`;

/** Makes the test app listen on a free loopback port; answers its base URL. */
export async function listen(t: TestContext): Promise<string> {
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app is not listening on a TCP port');
  return `http://127.0.0.1:${address.port}`;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** What a console browser test file reads once its `beforeAll` has run: see `consoleSuite`. */
export interface ConsoleSuite {
  /** The test app, on the test project's database. */
  readonly t: TestContext;
  /** Where the app listens on loopback (only where Chromium is installed). */
  readonly baseUrl: string;
  /** Chromium, or undefined where it is not installed: each test then skips itself with `skipReason`. */
  readonly browser: Browser | undefined;
}

/**
 * The setup every console browser test file shares, registered as its `beforeAll` and `afterAll`:
 * a test app built with `options` (those of `createTestApp`) listening on loopback, and Chromium
 * started; then both closed. Where Chromium is not installed, it warns and starts neither browser
 * nor listener. The database is the test project's: a file named *.pglite.test.ts runs on PGlite
 * only. A file with more to set up (a webhook receiver, say) adds its own hooks after this call.
 *
 * @example const suite = consoleSuite({ env: { WEBHOOK_RETRY_SCHEDULE: 'none' } });
 */
export function consoleSuite(options: TestAppOptions = {}): ConsoleSuite {
  let t: TestContext | undefined;
  let started: { baseUrl: string; browser: Browser } | undefined;
  beforeAll(async () => {
    t = await createTestApp(options);
    if (!hasChromium) {
      console.warn(`console browser test skipped: ${skipReason}`);
      return;
    }
    started = { baseUrl: await listen(t), browser: await launchChromium() };
  });
  afterAll(async () => {
    await started?.browser.close();
    await t?.close();
  });
  return {
    get t() {
      if (!t) throw new Error('the test app is built in beforeAll: read suite.t inside a hook or a test');
      return t;
    },
    get baseUrl() {
      if (!started) throw new Error('the app listens only where Chromium is installed: check suite.browser first');
      return started.baseUrl;
    },
    get browser() {
      return started?.browser;
    },
  };
}

// The page-side snippets are strings: this project's type check has no DOM types (Node only).

/** Every form control on the page has an accessible name (a label, aria-label or its text). */
export async function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`[...document.querySelectorAll('input, select, textarea, button')]
    .filter((element) => {
      const labelled = (element.labels?.length ?? 0) > 0 || element.getAttribute('aria-label') || element.getAttribute('aria-labelledby');
      const text = element.tagName === 'BUTTON' ? (element.textContent ?? '').trim() : '';
      return !labelled && text === '';
    })
    .map((element) => element.outerHTML.slice(0, 120))`);
}

/** A fresh tab signed in with `key`, collecting the page's errors (uncaught ones and console errors). */
export async function signedIn(
  browser: Browser,
  baseUrl: string,
  key: string,
  viewport = { width: 1280, height: 900 },
  options: { pollMs?: number } = {},
): Promise<{ page: Page; pageErrors: string[] }> {
  const page = await browser.newPage({ viewport });
  // A test about reading again sets a shorter interval than the console's 5 s (docs/console.md).
  if (options.pollMs !== undefined) await page.addInitScript(`localStorage.setItem('openbaas.pollMs', '${options.pollMs}')`);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('API key').fill(key);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
  return { page, pageErrors };
}
