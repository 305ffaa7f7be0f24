import type { AddressInfo } from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/modules/tenants/tenants.service.js';
import type { TestClient } from '../harness.js';
import { balanceOf, deposit, fund, linkedWallet, withdrawalBody } from '../bank/fixtures.js';
import { createReadyIndividual } from '../compliance/helpers.js';
import { createIndividual } from '../customers/fixtures.js';
import { issuedCard } from '../cards/fixtures.js';
import { creditCard, openLine } from '../credit/fixtures.js';
import { consoleSuite, signedIn, skipReason, unnamedControls } from './browser-support.js';

/**
 * The console in Chromium against the real app, on both databases: the Simulate page uses the
 * wallet or card its link names (never another), shows a list it cannot read as an error and
 * recovers, says whether a swipe was approved or declined; the KYC button of a customer who never
 * started; lists that say how many rows of how many they show; a narrow screen. Each was found by
 * an audit of the console (2026-12-04).
 */

const suite = consoleSuite();

/** Waits until `read()` answers `expected` (a select's value, a count), or fails with the last answer. */
async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (last !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await read();
  }
  expect(last).toBe(expected);
}

/** `count` approved customers with a primary wallet and its account number, made in one call (oldest first). */
async function seed(client: TestClient, count: number): Promise<{ customerId: string; walletId: string; virtualAccountNumber: string }[]> {
  const response = await suite.t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body: { count } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data.customers;
}

async function openSimulate(page: Page, query: string): Promise<void> {
  await page.goto(`${suite.baseUrl}/console#/simulate${query}`);
  await page.getByRole('heading', { level: 1, name: 'Simulate' }).waitFor();
}

/** The text of the option a select shows. */
function shownOption(select: Locator): Promise<string | null> {
  return select.locator('option:checked').textContent();
}

describe('the Simulate and Transactions pages use the wallet or card the link names, never another one', () => {
  it('deposits into a wallet older than the newest 100 from its page, and lists its transactions under it', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('more than 100 wallets');
    const [oldest] = await seed(client, 1);
    const rest = await seed(client, 100);
    const newest = rest[rest.length - 1];
    if (!oldest || !newest) return expect.fail('no wallets seeded');
    // The oldest wallet is not among the newest 100 the page's select lists.
    const listed = await suite.t.request({ url: '/v1/wallets?limit=100', key: client.key });
    expect((listed.body.data as { id: string }[]).map((wallet) => wallet.id)).not.toContain(oldest.walletId);
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key);

    await page.goto(`${suite.baseUrl}/console#/wallets/${oldest.walletId}`);
    await page.getByRole('link', { name: 'Simulate a deposit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Simulate' }).waitFor();
    const form = page.getByRole('form', { name: 'Bank deposit' });
    const select = form.getByLabel('Wallet');
    await eventually(() => select.inputValue(), oldest.walletId);
    // The select names the wallet once its own read has answered ("Reading the wallet in the link…" until then).
    await eventually(async () => (await shownOption(select))?.includes(oldest.virtualAccountNumber) ?? false, true);
    await form.getByLabel('Amount (USD)').fill('12.34');
    await form.getByRole('button', { name: 'Send deposit' }).click();
    await page.getByRole('region', { name: 'Bank deposit' }).getByRole('status').filter({ hasText: 'Deposit received' }).waitFor();
    expect(await balanceOf(suite.t, oldest.walletId, 'USD', client)).toMatchObject({ PENDING: '12.34' });
    expect(await balanceOf(suite.t, newest.walletId, 'USD', client)).toMatchObject({ PENDING: '0.00' });

    // The Transactions page names the same wallet in its select and shows its deposit.
    await page.goto(`${suite.baseUrl}/console#/transactions?walletId=${oldest.walletId}`);
    const walletSelect = page.getByRole('form', { name: 'Filter transactions' }).getByLabel('Wallet');
    await eventually(() => walletSelect.inputValue(), oldest.walletId);
    await eventually(async () => (await shownOption(walletSelect))?.includes(oldest.virtualAccountNumber), true);
    await page.getByRole('list', { name: 'Transactions by parent' }).getByText('12.34 USD').first().waitFor();
    expect(await unnamedControls(page)).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  // Until 2026-12-07 the select offered those of the newest 100 wallets that had an account number,
  // so 100 newer customers without KYC (wallets without one) left it empty (found by an audit).
  it('offers the wallets with an account number when none of the newest 100 wallets has one, and deposits into the chosen one', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('accounts behind 100 wallets');
    const withAccount = await seed(client, 2);
    for (let index = 0; index < 101; index += 1) await createIndividual(suite.t, client);
    const newest = await suite.t.request({ url: '/v1/wallets?limit=100', key: client.key });
    expect(newest.body.data).toHaveLength(100);
    expect((newest.body.data as { virtualAccount: unknown }[]).filter((wallet) => wallet.virtualAccount)).toEqual([]);
    const [older, newer] = withAccount;
    if (!older || !newer) return expect.fail('no wallets seeded');
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key);

    await openSimulate(page, '');
    const form = page.getByRole('form', { name: 'Bank deposit' });
    const select = form.getByLabel('Wallet');
    // The newest wallet with an account number is chosen; both are offered, nothing else.
    await eventually(() => select.inputValue(), newer.walletId);
    const options = await select.locator('option').allTextContents();
    expect(options).toHaveLength(2);
    expect(options[0]).toContain(newer.virtualAccountNumber);
    expect(options[1]).toContain(older.virtualAccountNumber);
    await form.getByLabel('Amount (USD)').fill('7.00');
    await form.getByRole('button', { name: 'Send deposit' }).click();
    await page.getByRole('region', { name: 'Bank deposit' }).getByRole('status').filter({ hasText: 'Deposit received' }).waitFor();
    expect(await balanceOf(suite.t, newer.walletId, 'USD', client)).toMatchObject({ PENDING: '7.00' });
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('says a wallet in the link that does not exist cannot be read, and deposits nowhere', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('a wallet link to nowhere');
    const [only] = await seed(client, 1);
    if (!only) return expect.fail('no wallet seeded');
    const { page } = await signedIn(suite.browser, suite.baseUrl, client.key);
    const missing = '0190f0f0-0000-7000-8000-000000000000';

    await openSimulate(page, `?walletId=${missing}`);
    const region = page.getByRole('region', { name: 'Bank deposit' });
    await region.getByRole('alert').filter({ hasText: `The wallet in the link (${missing}) cannot be read` }).waitFor();
    const select = region.getByLabel('Wallet');
    await expect(select.inputValue()).resolves.toBe(missing);
    await expect(shownOption(select)).resolves.toContain('cannot be used');
    await region.getByRole('button', { name: 'Send deposit' }).click();
    // The answer says what to do; the reason stays shown once, above (it showed twice until 2026-12-06).
    await region.getByRole('alert').filter({ hasText: 'Nothing was sent: the one in the link cannot be used (above). Choose a wallet' }).waitFor();
    expect(await region.getByRole('alert').filter({ hasText: 'cannot be read' }).count()).toBe(1);
    expect(await region.getByRole('status').count()).toBe(0);
    const transfers = await suite.t.request({ url: '/v1/baas/transactions?limit=1', key: client.key });
    expect(transfers.body.pagination.totalResults).toBe(0);
    expect(await balanceOf(suite.t, only.walletId, 'USD', client)).toMatchObject({ PENDING: '0.00' });
    await page.close();
  });

  it("swipes the card its page links to, even a blocked one, and the network's decline is shown", async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const issued = await issuedCard(suite.t);
    expect((await suite.t.request({ method: 'PATCH', url: `/v1/cards/${issued.cardId}`, body: { status: 'SUSPENDED' } })).status).toBe(200);
    // A newer active card, which the select would list first.
    await issuedCard(suite.t, suite.t.clientA, { wallet: issued.wallet });
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, suite.t.clientA.key);

    await page.goto(`${suite.baseUrl}/console#/cards/${issued.cardId}`);
    await page.getByRole('link', { name: 'Simulate a swipe' }).click();
    await page.getByRole('heading', { level: 1, name: 'Simulate' }).waitFor();
    const form = page.getByRole('form', { name: 'Card swipe' });
    await eventually(() => form.getByLabel('Card').inputValue(), issued.cardId);
    // The select names the card once its own read has answered ("Reading the card in the link…" until then).
    await eventually(async () => (await shownOption(form.getByLabel('Card')))?.includes('(SUSPENDED)') ?? false, true);
    await form.getByRole('button', { name: 'Authorize' }).click();
    await page.getByRole('region', { name: 'Card swipe' }).getByRole('status').filter({ hasText: 'Declined: response code 57 (CARD_NOT_ACTIVE).' }).waitFor();
    const history = await suite.t.request({ url: `/v1/cards/transactions?cardId=${issued.cardId}` });
    expect(history.body.data).toHaveLength(1);
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});

describe('the Simulate page shows a list it cannot read as an error, and recovers when the server is back', () => {
  /** Closes the app's listening socket and every open connection, as a server that went away; answers its port. */
  async function stopListening(): Promise<number> {
    const { port } = suite.t.app.server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      suite.t.app.server.close(() => resolve());
      suite.t.app.server.closeAllConnections();
    });
    return port;
  }

  async function listenAgain(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      suite.t.app.server.once('error', reject);
      suite.t.app.server.listen(port, '127.0.0.1', () => {
        suite.t.app.server.off('error', reject);
        resolve();
      });
    });
  }

  it('says the wallets and cards could not be read while the server is down, and lists them again once it answers', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('server goes away');
    const issued = await issuedCard(suite.t, client);
    const { page } = await signedIn(suite.browser, suite.baseUrl, client.key);

    const port = await stopListening();
    try {
      await page.getByRole('link', { name: 'Simulate' }).click();
      await page.getByRole('heading', { level: 1, name: 'Simulate' }).waitFor();
      const depositRegion = page.getByRole('region', { name: 'Bank deposit' });
      const swipeRegion = page.getByRole('region', { name: 'Card swipe' });
      await depositRegion.getByRole('alert').filter({ hasText: 'GET /v1/wallets' }).waitFor();
      await swipeRegion.getByRole('alert').filter({ hasText: 'GET /v1/cards' }).waitFor();
      await expect(shownOption(depositRegion.getByLabel('Wallet'))).resolves.toBe('The wallets could not be read');
      await expect(shownOption(swipeRegion.getByLabel('Card', { exact: true }))).resolves.toBe('The cards could not be read');
      // Sending says why nothing was sent, rather than asking for a wallet to be made.
      await depositRegion.getByRole('button', { name: 'Send deposit' }).click();
      await depositRegion.getByRole('alert').filter({ hasText: 'The list could not be read' }).waitFor();
    } finally {
      await listenAgain(port);
    }

    // The lists are read again every few seconds: the wallet and the card come back, the alerts go.
    const depositRegion = page.getByRole('region', { name: 'Bank deposit' });
    const swipeRegion = page.getByRole('region', { name: 'Card swipe' });
    await eventually(() => depositRegion.getByLabel('Wallet').inputValue(), issued.wallet.walletId);
    await eventually(() => swipeRegion.getByLabel('Card', { exact: true }).inputValue(), issued.cardId);
    await eventually(() => swipeRegion.getByRole('alert').count(), 0);
    await depositRegion.getByRole('button', { name: 'Send deposit' }).click();
    await depositRegion.getByRole('status').filter({ hasText: 'Deposit received' }).waitFor();
    expect(await depositRegion.getByRole('alert').count()).toBe(0);
    expect(await balanceOf(suite.t, issued.wallet.walletId, 'USD', client)).toMatchObject({ PENDING: '100.00' });
    await page.close();
  });
});

describe("a card swipe's outcome says approved or declined, with the response code", () => {
  it('reads "Approved" for an authorization the funds cover and "Declined" with 51 and its name for one they do not', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const issued = await issuedCard(suite.t);
    await fund(suite.t, issued.wallet, '100.00');
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, suite.t.clientA.key);
    await openSimulate(page, `?cardId=${issued.cardId}`);
    const region = page.getByRole('region', { name: 'Card swipe' });
    const form = page.getByRole('form', { name: 'Card swipe' });
    await eventually(() => form.getByLabel('Card').inputValue(), issued.cardId);

    await form.getByLabel('Amount').fill('25.50');
    await form.getByRole('button', { name: 'Authorize' }).click();
    const approved = region.getByRole('status').filter({ hasText: 'Approved: response code 00, 25.50 USD approved.' });
    await approved.waitFor();
    expect(await approved.getByRole('link', { name: 'Open trace' }).getAttribute('href')).toMatch(/^#\/traces\//);
    expect(await approved.getAttribute('class')).toBe('success');

    await form.getByLabel('Amount').fill('5000');
    await form.getByRole('button', { name: 'Authorize' }).click();
    const declined = region.getByRole('status').filter({ hasText: 'Declined: response code 51 (INSUFFICIENT_FUNDS).' });
    await declined.waitFor();
    expect(await declined.getAttribute('class')).toBe('declined');
    expect(await region.getByRole('status').count()).toBe(1);
    expect(await balanceOf(suite.t, issued.wallet.walletId)).toMatchObject({ AVAILABLE: '74.50', RESERVED: '25.50' });

    // A request the API refuses: its error, with a link to the failed request's trace (until
    // 2026-12-07 a failed action showed no trace link though the error body names it).
    await form.getByLabel('Amount').fill('1000000000000000');
    await form.getByRole('button', { name: 'Authorize' }).click();
    const refused = region.getByRole('alert').filter({ hasText: 'amount' });
    await refused.waitFor();
    const href = await refused.getByRole('link', { name: 'Open trace' }).getAttribute('href');
    expect(href).toMatch(/^#\/traces\/[0-9a-f-]+$/);
    const traceId = decodeURIComponent(href?.slice('#/traces/'.length) ?? '');
    const trace = await suite.t.request({ url: `/v1/traces/${traceId}` });
    expect(trace.status, JSON.stringify(trace.body)).toBe(200);
    expect(await region.getByRole('status').count()).toBe(0);
    // The browser logs the refused request itself; nothing else went wrong on the page.
    expect(pageErrors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await page.close();
  });
});

describe("the KYC start button follows the customer's state", () => {
  it('offers "Start KYC" (not "again") to a customer who never started, and shows only the latest outcome', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const customer = await createReadyIndividual(suite.t);
    const status = await suite.t.request({ url: `/v1/compliance/status/${customer.id}` });
    expect(status.body.data).toMatchObject({ onboardingId: null, nextAction: 'START_KYC' });
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, suite.t.clientA.key);

    await page.goto(`${suite.baseUrl}/console#/customers/${customer.id}`);
    const kyc = page.getByRole('region', { name: 'KYC' });
    await kyc.getByRole('definition').filter({ hasText: 'START_KYC' }).waitFor();
    await kyc.getByRole('button', { name: 'Start KYC', exact: true }).click();
    await kyc.getByRole('status').filter({ hasText: 'Started.' }).waitFor();
    expect((await suite.t.request({ url: `/v1/compliance/status/${customer.id}` })).body.data.onboardingId).not.toBeNull();

    // Applying an outcome replaces "Started.": one outcome, the last action's.
    const outcome = kyc.getByRole('form', { name: 'Simulate the verification outcome' });
    await outcome.getByLabel('Outcome').selectOption('APPROVED');
    await outcome.getByRole('button', { name: 'Apply outcome' }).click();
    await kyc.getByRole('status').filter({ hasText: 'Outcome applied.' }).waitFor();
    expect(await kyc.getByRole('status').filter({ hasText: 'Started.' }).count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});

// Until the thirty-fourth session a customer without a phone showed "+null null" (found by an audit).
it('shows a dash for the phone of a customer who has none', async (context) => {
  if (!suite.browser) return context.skip(skipReason);
  const created = await suite.t.request({ method: 'POST', url: '/v1/customers/business', body: { email: 'no-phone@example.com' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.data).toMatchObject({ phoneNumber: null, phoneCountryCode: null });
  const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, suite.t.clientA.key);
  await page.goto(`${suite.baseUrl}/console#/customers/${created.body.data.id}`);
  const phone = page.getByRole('region', { name: 'Profile' }).locator('dl > div').filter({ has: page.locator('dt', { hasText: /^Phone$/ }) }).locator('dd');
  await expect(phone.textContent()).resolves.toBe('—');
  expect(pageErrors).toEqual([]);
  await page.close();
});

describe('lists say how many rows of how many they show, and page the rest', () => {
  it("pages the bank transfers, names a withdrawal's beneficiary and shows no sign on a failed one", async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('many transfers');
    const wallet = await linkedWallet(suite.t, client);
    await fund(suite.t, wallet, '1000.00', 'USD', client);
    for (let index = 0; index < 49; index++) await deposit(suite.t, wallet.virtualAccountNumber, '1.00', {}, client);
    const sent = await suite.t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', key: client.key, body: withdrawalBody(wallet.walletId, { amount: '30.00' }) });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const failing = await suite.t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', key: client.key, body: withdrawalBody(wallet.walletId, { amount: '40.00', name: 'Alan Turing' }) });
    expect(failing.status, JSON.stringify(failing.body)).toBe(201);
    const failed = await suite.t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${failing.body.data.parentBankTransactionId}/fail`, key: client.key, body: {} });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key);

    await page.getByRole('link', { name: 'Bank transfers' }).click();
    const table = page.getByRole('table', { name: 'Bank transfers' });
    await page.getByText('50 of 52 transfer(s) shown.').waitFor();
    await expect(table.locator('tbody > tr').count()).resolves.toBe(50);
    const pending = table.locator('tbody > tr', { hasText: 'Grace Hopper' });
    await expect(pending.textContent()).resolves.toMatch(/WITHDRAWAL[\s\S]*PENDING[\s\S]*−30\.00 USD[\s\S]*Grace Hopper/);
    const failedRow = table.locator('tbody > tr', { hasText: 'Alan Turing' });
    await expect(failedRow.textContent()).resolves.toMatch(/WITHDRAWAL[\s\S]*FAILED/);
    await expect(failedRow.locator('.amount').textContent()).resolves.toBe('40.00 USD');
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('52 of 52 transfer(s) shown.').waitFor();
    await expect(table.locator('tbody > tr').count()).resolves.toBe(52);
    await expect(page.getByRole('button', { name: 'Load more' }).count()).resolves.toBe(0);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('pages the cards past 50 and says how many of how many are shown', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('many cards');
    const wallet = await linkedWallet(suite.t, client);
    for (let index = 0; index < 51; index++) await issuedCard(suite.t, client, { wallet });
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key);

    await page.getByRole('link', { name: 'Cards' }).click();
    await page.getByText('50 of 51 card(s) shown.').waitFor();
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('51 of 51 card(s) shown.').waitFor();
    await expect(page.getByRole('table', { name: 'Cards' }).locator('tbody > tr').count()).resolves.toBe(51);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  // Until 2026-12-07 "Load more" emptied the table while the longer list loaded (the keyboard focus
  // went with the button), and a failed load left it empty (found by an audit).
  it('keeps the rows and the focus while "Load more" reads the longer list, and keeps them when it fails', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('load more keeps rows');
    const wallet = await linkedWallet(suite.t, client);
    for (let index = 0; index < 51; index++) await issuedCard(suite.t, client, { wallet });
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key, undefined, { pollMs: 1000 });
    await page.getByRole('link', { name: 'Cards' }).click();
    await page.getByText('50 of 51 card(s) shown.').waitFor();
    const rows = page.getByRole('table', { name: 'Cards' }).locator('tbody > tr');

    // The longer list's read (limit=100) is held until released, then answered by the server.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let longerReads = 0;
    await page.route(
      (url) => url.pathname === '/v1/cards' && url.searchParams.get('limit') === '100',
      async (route) => {
        longerReads++;
        await held;
        await route.continue();
      },
    );
    const more = page.getByRole('button', { name: 'Load more' });
    await more.focus();
    await page.keyboard.press('Enter');
    await eventually(async () => longerReads, 1);
    await expect(more.getAttribute('aria-disabled')).resolves.toBe('true');
    // A second press while it loads asks for nothing more.
    await page.keyboard.press('Enter');
    await expect(rows.count()).resolves.toBe(50);
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Load more');
    release();
    await page.getByText('51 of 51 card(s) shown.').waitFor();
    await expect(rows.count()).resolves.toBe(51);
    // The button has gone with the last page: the focus is on the sentence saying all are shown,
    // not lost to the page's body (found by an audit).
    await eventually(async () => page.evaluate('document.activeElement?.textContent?.trim()'), '51 of 51 card(s) shown.');
    await page.unroute(() => true);

    // A failed "Load more" keeps what was shown and says why; the next read recovers.
    const seeded = await seed(client, 51);
    expect(seeded).toHaveLength(51);
    let failures = 0;
    await page.route(
      (url) => url.pathname === '/v1/customers' && url.searchParams.get('limit') === '100',
      (route) => {
        failures++;
        if (failures > 1) return route.continue();
        return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ code: 'SERVICE_UNAVAILABLE', message: 'Try again.', details: [] }) });
      },
    );
    await page.getByRole('link', { name: 'Customers' }).click();
    await page.getByText('50 of 52 customer(s) shown.').waitFor();
    const customerRows = page.getByRole('table', { name: 'Customers' }).locator('tbody > tr');
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByRole('alert').filter({ hasText: 'Try again.' }).waitFor();
    await expect(customerRows.count()).resolves.toBe(50);
    // The next poll (every second here) brings the longer list.
    await page.getByText('52 of 52 customer(s) shown.').waitFor({ timeout: 15_000 });
    await expect(customerRows.count()).resolves.toBe(52);
    // The browser logs the failed read it was given; nothing else went wrong.
    expect(pageErrors).toEqual(['Failed to load resource: the server responded with a status of 503 (Service Unavailable)']);
    await page.close();
  });

  // Until 2026-12-07 the Credit lines page read each shown customer's cards every 5 s, one request
  // per customer: about 1,250 requests a minute with 102 lines, past the API's rate limit (found
  // by an audit).
  it('reads the credit cards of the lines shown in one request, not one per customer', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('credit lines page');
    const lines = [];
    for (let index = 0; index < 3; index++) lines.push(await openLine(suite.t, { client }));
    const cardIds = [];
    for (const line of lines.slice(0, 2)) cardIds.push(await creditCard(suite.t, line, client));
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key, undefined, { pollMs: 2500 });
    const cardReads: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/v1/cards') cardReads.push(request.url());
    });
    await page.getByRole('link', { name: 'Credit lines' }).click();
    const table = page.getByRole('table', { name: 'Credit lines' });
    await page.getByText('3 of 3 credit line(s) shown.').waitFor();
    for (const [index, cardId] of cardIds.entries()) {
      const card = await suite.t.request({ url: `/v1/cards/${cardId}`, key: client.key });
      const row = table.locator('tbody > tr', { has: page.locator(`[title="${lines[index]?.lineId ?? ''}"]`) });
      await row.getByRole('link', { name: `•••• ${card.body.data.last4 as string}` }).waitFor();
    }
    // The third line has no card; two polls of the lines (every 2.5 s here; the cards every 15 s)
    // later, still one read of the cards.
    await expect(table.locator('tbody > tr', { has: page.locator(`[title="${lines[2]?.lineId ?? ''}"]`) }).getByRole('link').count()).resolves.toBe(0);
    const lineReads: number[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/v1/credit-lines') lineReads.push(Date.now());
    });
    await expect.poll(() => lineReads.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(cardReads).toHaveLength(1);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  // Until 2026-12-07 the Events page offered WEBHOOK_TEST, which GET /v1/events refuses (400), and
  // always said "the newest 100 are shown", even of 3 or 0 events (found by an audit).
  it('the Events filter offers the types the event list takes, and the page says how many of how many only when not all are shown', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('events');
    await seed(client, 30);
    const all = await suite.t.request({ url: '/v1/events?limit=1', key: client.key });
    const total = all.body.pagination.totalResults as number;
    expect(total).toBeGreaterThan(100);
    const created = await suite.t.request({ url: '/v1/events?limit=100&type=CUSTOMER_CREATED', key: client.key });
    expect(created.body.pagination.totalResults).toBe(30);
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key);

    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByText(`The newest 100 of ${total.toLocaleString('en-US')} event(s) are shown.`).waitFor();
    const form = page.getByRole('form', { name: 'Filter events' });
    const select = form.getByLabel('Event type');
    await select.locator('option', { hasText: 'CUSTOMER_CREATED' }).waitFor({ state: 'attached' });
    const types = await select.locator('option').allTextContents();
    expect(types).toContain('CUSTOMER_CREATED');
    expect(types).not.toContain('WEBHOOK_TEST');

    // 30 events, all shown: nothing to say about the rest.
    await select.selectOption('CUSTOMER_CREATED');
    await form.getByRole('button', { name: 'Apply' }).click();
    const table = page.getByRole('table', { name: 'Events' });
    await expect.poll(() => table.locator('tbody > tr').count(), { timeout: 15_000 }).toBe(30);
    expect(await page.getByText('are shown').count()).toBe(0);
    // None of a type: "No events yet." alone.
    await select.selectOption('CUSTOMER_KYB_FINISHED');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No events yet.').waitFor();
    expect(await page.getByText('are shown').count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('reads the API keys again every few seconds, as every other list', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('a new key');
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key, undefined, { pollMs: 1000 });
    await page.getByRole('link', { name: 'API keys' }).click();
    // The client's key and its read-only key (test/harness.ts makes both).
    await page.getByText('2 of 2 key(s) shown.').waitFor();
    await createApiKey(suite.t.deps, client.id);
    await page.getByText('3 of 3 key(s) shown.').waitFor({ timeout: 15_000 });
    await expect(page.getByRole('table', { name: 'API keys' }).locator('tbody > tr').count()).resolves.toBe(3);
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});

describe('pickers keep what they show while their lists are read again', () => {
  // Until 2026-12-06 an unpicked select followed the newest item: a customer created elsewhere
  // changed the Trades page's customer under a quote made for another (found by an audit).
  it('the Trades customer and the Transactions wallet stay as first shown when a newer one appears', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('pinned pickers');
    const [first] = await seed(client, 1);
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key, undefined, { pollMs: 1000 });
    await page.goto(`${suite.baseUrl}/console#/trades`);
    await page.getByRole('heading', { level: 1, name: 'Trades' }).waitFor();
    const customer = page.getByLabel('Customer');
    await eventually(() => customer.inputValue(), first?.customerId ?? '');
    const [second] = await seed(client, 1);
    // The list is read again (every second here): the newer customer is listed, not chosen.
    await page.locator(`option[value="${second?.customerId ?? ''}"]`).waitFor({ state: 'attached', timeout: 15_000 });
    expect(await customer.inputValue()).toBe(first?.customerId);

    await page.goto(`${suite.baseUrl}/console#/transactions`);
    await page.getByRole('heading', { level: 1, name: 'Transactions' }).waitFor();
    const wallet = page.getByLabel('Wallet');
    // Newest first: the second customer's wallet is the one first shown.
    await eventually(() => wallet.inputValue(), second?.walletId ?? '');
    const [third] = await seed(client, 1);
    await page.locator(`option[value="${third?.walletId ?? ''}"]`).waitFor({ state: 'attached', timeout: 15_000 });
    expect(await wallet.inputValue()).toBe(second?.walletId);
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});

describe('on a narrow screen the page keeps to the screen', () => {
  it('puts the navigation above the page and scrolls a wide table inside its own box', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('a phone');
    const wallet = await linkedWallet(suite.t, client);
    await deposit(suite.t, wallet.virtualAccountNumber, '5.00', {}, client);
    const { page, pageErrors } = await signedIn(suite.browser, suite.baseUrl, client.key, { width: 375, height: 740 });

    await page.getByRole('link', { name: 'Bank transfers' }).click();
    const table = page.getByRole('table', { name: 'Bank transfers' });
    await table.locator('tbody > tr').first().waitFor();
    const widths = await page.evaluate<{ page: number; box: number; table: number }>(`({
      page: document.documentElement.scrollWidth,
      box: document.querySelector('.table-scroll').clientWidth,
      table: document.querySelector('.table-scroll table').scrollWidth,
    })`);
    expect(widths.page).toBeLessThanOrEqual(375);
    expect(widths.table).toBeGreaterThan(widths.box);
    // The navigation sits above the page rather than beside it.
    const navigation = await page.getByRole('navigation', { name: 'Main' }).boundingBox();
    const heading = await page.getByRole('heading', { level: 1, name: 'Bank transfers' }).boundingBox();
    expect(navigation && heading && navigation.y + navigation.height <= heading.y).toBe(true);
    // The Settle button is reachable by scrolling the table's box, not the page.
    await page.getByRole('button', { name: 'Settle deposit 5.00 USD' }).click();
    await page.getByRole('status').filter({ hasText: 'Settled.' }).waitFor();
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
