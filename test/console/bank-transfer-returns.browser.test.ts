import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestClient } from '../harness.js';
import { balanceOf, deposit, fund, linkedWallet, settle, withdrawalBody } from '../bank/fixtures.js';
import { consoleSuite, signedIn, skipReason, unnamedControls } from './browser-support.js';

/**
 * The Bank transfers page's Return button, in Chromium against the real app, on both databases: a
 * settled payment the API still lets the sandbox send back (`POST /v1/sandbox/bank-transactions/:id/fail`
 * on a COMPLETED one) has it, a withdrawal of any network and an ACH deposit; a settled Fedwire or
 * unspecified deposit (final once paid: the API answers 409) has none, nor a pending or failed
 * payment. Before this test the page offered Settle and Fail on pending payments only, so a return
 * after settlement could only be sent with curl.
 */

const suite = consoleSuite();

/** The Bank transfers page of a fresh tab signed in with the client's key. */
async function openBankTransfers(client: TestClient): Promise<{ page: Page; pageErrors: string[] }> {
  if (!suite.browser) throw new Error('no suite.browser');
  const opened = await signedIn(suite.browser, suite.baseUrl, client.key);
  await opened.page.getByRole('link', { name: 'Bank transfers' }).click();
  await opened.page.getByRole('heading', { level: 1, name: 'Bank transfers' }).waitFor();
  return opened;
}

/** The table row of the transfer of this amount (each transfer of a test has its own amount). */
function rowOf(page: Page, amount: string) {
  const shown = new RegExp(`^[+−]?${amount.replace('.', '\\.')} USD$`);
  return page.getByRole('table', { name: 'Bank transfers' }).locator('tbody > tr').filter({ has: page.locator('.amount', { hasText: shown }) });
}

/** The trace the outcome's link opens: its id, checked to be the fail route's request for that payment. */
async function expectReturnTrace(page: Page, client: TestClient, parentBankTransactionId: string, eventType: string): Promise<void> {
  const link = page.getByRole('status').filter({ hasText: 'Returned.' }).getByRole('link', { name: 'Open trace' });
  const href = await link.getAttribute('href');
  const traceId = decodeURIComponent(/#\/traces\/(.+)$/.exec(href ?? '')?.[1] ?? '');
  expect(traceId, `the trace link ${href ?? '(none)'}`).not.toBe('');
  const trace = await suite.t.request({ url: `/v1/traces/${encodeURIComponent(traceId)}`, key: client.key });
  expect(trace.status, JSON.stringify(trace.body)).toBe(200);
  const items = trace.body.data.items as { kind: string; method?: string; path?: string; statusCode?: number; type?: string }[];
  expect(items.find((item) => item.kind === 'REQUEST')).toMatchObject({ method: 'POST', path: `/v1/sandbox/bank-transactions/${parentBankTransactionId}/fail`, statusCode: 200 });
  expect(items.filter((item) => item.kind === 'EVENT').map((item) => item.type)).toContain(eventType);
}

describe('the Bank transfers page returns a settled payment the API lets come back', () => {
  it('returns a settled ACH deposit, and offers no Return on a pending one nor on a settled Fedwire or unspecified deposit', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('deposit returns');
    const wallet = await linkedWallet(suite.t, client);
    const ach = await deposit(suite.t, wallet.virtualAccountNumber, '100.00', {}, client);
    const wire = await deposit(suite.t, wallet.virtualAccountNumber, '70.00', { network: 'FEDWIRE' }, client);
    await settle(suite.t, wire.parentBankTransactionId, client);
    const unspecified = await deposit(suite.t, wallet.virtualAccountNumber, '60.00', { network: null }, client);
    await settle(suite.t, unspecified.parentBankTransactionId, client);
    // The API refuses to return those two: the page must not offer it.
    for (const settled of [wire, unspecified]) {
      const refused = await suite.t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${settled.parentBankTransactionId}/fail`, key: client.key, body: {} });
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(refused.body.code).toBe('BANK_TRANSFER_NOT_PENDING');
    }
    expect(await balanceOf(suite.t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '130.00', PENDING: '100.00' });
    const { page, pageErrors } = await openBankTransfers(client);

    // Pending: Settle and Fail, no Return.
    const settleButton = page.getByRole('button', { name: 'Settle deposit 100.00 USD' });
    await settleButton.waitFor();
    await expect(rowOf(page, '70.00').textContent()).resolves.toMatch(/DEPOSIT[\s\S]*FEDWIRE[\s\S]*COMPLETED/);
    await expect(rowOf(page, '60.00').textContent()).resolves.toMatch(/DEPOSIT[\s\S]*UNSPECIFIED[\s\S]*COMPLETED/);
    await expect(page.getByRole('button', { name: /^Return / }).count()).resolves.toBe(0);
    await settleButton.click();
    await page.getByRole('status').filter({ hasText: 'Settled.' }).waitFor();
    expect(await balanceOf(suite.t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '230.00', PENDING: '0.00' });

    // Settled: the ACH deposit has Return (and no Settle or Fail); the Fedwire and unspecified ones have nothing.
    const returnButton = page.getByRole('button', { name: 'Return deposit 100.00 USD' });
    await returnButton.waitFor({ timeout: 15_000 });
    const achRow = rowOf(page, '100.00');
    await expect(achRow.textContent()).resolves.toMatch(/DEPOSIT[\s\S]*ACH[\s\S]*COMPLETED/);
    await expect(achRow.getByRole('button').allTextContents()).resolves.toEqual(['Return…']);
    await expect(rowOf(page, '70.00').getByRole('button').count()).resolves.toBe(0);
    await expect(rowOf(page, '60.00').getByRole('button').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /^Return / }).count()).resolves.toBe(1);
    expect(await unnamedControls(page)).toEqual([]);

    // It asks first (it may overdraw the wallet); "Keep it" sends nothing.
    await returnButton.click();
    await expect(achRow.getByRole('group').textContent()).resolves.toContain('the wallet may go below zero');
    await page.getByRole('button', { name: 'Keep deposit 100.00 USD' }).click();
    await returnButton.waitFor();
    expect(await balanceOf(suite.t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '230.00', PENDING: '0.00' });
    await returnButton.click();
    await page.getByRole('button', { name: 'Confirm return of deposit 100.00 USD' }).click();
    await page.getByRole('status').filter({ hasText: 'Returned.' }).waitFor();
    await expectReturnTrace(page, client, ach.parentBankTransactionId, 'BANK_DEPOSIT_TRANSACTION_FAILED');
    await achRow.locator('ol.steps > li', { hasText: 'DEPOSIT_FAILURE' }).waitFor();
    // The row is FAILED with its DEPOSIT_FAILURE step after the DEPOSIT_SUCCESS one, no sign, no button.
    await expect(achRow.textContent()).resolves.toMatch(/DEPOSIT[\s\S]*ACH[\s\S]*FAILED/);
    await expect(achRow.locator('ol.steps > li').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^DEPOSIT_INITIATED /),
      expect.stringMatching(/^DEPOSIT_SUCCESS /),
      expect.stringMatching(/^DEPOSIT_FAILURE /),
    ]);
    await expect(achRow.locator('.amount').textContent()).resolves.toBe('100.00 USD');
    await expect(achRow.getByRole('button').count()).resolves.toBe(0);
    // The money left the wallet again.
    expect(await balanceOf(suite.t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '130.00', PENDING: '0.00' });
    const payment = await suite.t.request({ url: `/v1/baas/transactions?walletId=${wallet.walletId}&status=FAILED`, key: client.key });
    expect((payment.body.data as { id: string }[]).map((row) => row.id)).toEqual([ach.parentBankTransactionId]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('returns settled withdrawals of any network, and offers no Return on a failed one', async (context) => {
    if (!suite.browser) return context.skip(skipReason);
    const client = await suite.t.newClient('withdrawal returns');
    const wallet = await linkedWallet(suite.t, client);
    await fund(suite.t, wallet, '100.00', 'USD', client);
    const withdraw = async (amount: string, overrides: Record<string, unknown> = {}) => {
      const response = await suite.t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', key: client.key, body: withdrawalBody(wallet.walletId, { amount, ...overrides }) });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      return response.body.data.parentBankTransactionId as string;
    };
    const achWithdrawal = await withdraw('30.00');
    await settle(suite.t, achWithdrawal, client);
    const wireWithdrawal = await withdraw('20.00', { transferNetwork: 'FEDWIRE_DOMESTIC' });
    await settle(suite.t, wireWithdrawal, client);
    const failedWithdrawal = await withdraw('10.00');
    const failed = await suite.t.request({ method: 'POST', url: `/v1/sandbox/bank-transactions/${failedWithdrawal}/fail`, key: client.key, body: {} });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(await balanceOf(suite.t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '50.00', RESERVED: '0.00' });
    const { page, pageErrors } = await openBankTransfers(client);

    const achReturn = page.getByRole('button', { name: 'Return withdrawal 30.00 USD' });
    await achReturn.waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Return withdrawal 20.00 USD' }).waitFor();
    await expect(rowOf(page, '20.00').textContent()).resolves.toMatch(/WITHDRAWAL[\s\S]*FEDWIRE[\s\S]*COMPLETED/);
    // The failed withdrawal: no button at all. (The settled ACH deposit that funded the wallet has its own Return.)
    await expect(rowOf(page, '10.00').textContent()).resolves.toMatch(/WITHDRAWAL[\s\S]*FAILED/);
    await expect(rowOf(page, '10.00').getByRole('button').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Return deposit 100.00 USD' }).count()).resolves.toBe(1);

    await achReturn.click();
    await page.getByRole('button', { name: 'Confirm return of withdrawal 30.00 USD' }).click();
    await page.getByRole('status').filter({ hasText: 'Returned.' }).waitFor();
    await expectReturnTrace(page, client, achWithdrawal, 'BANK_WITHDRAWAL_TRANSACTION_FAILED');
    const achRow = rowOf(page, '30.00');
    await achRow.locator('ol.steps > li', { hasText: 'WITHDRAWAL_FAILURE' }).waitFor();
    await expect(achRow.textContent()).resolves.toMatch(/WITHDRAWAL[\s\S]*ACH[\s\S]*FAILED/);
    await expect(achRow.locator('ol.steps > li').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^WITHDRAWAL_INITIATED /),
      expect.stringMatching(/^WITHDRAWAL_SUCCESS /),
      expect.stringMatching(/^WITHDRAWAL_FAILURE /),
    ]);
    await expect(achRow.getByRole('button').count()).resolves.toBe(0);
    // The amount came back to AVAILABLE.
    expect(await balanceOf(suite.t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '0.00' });

    // The Fedwire one comes back the same way.
    await page.getByRole('button', { name: 'Return withdrawal 20.00 USD' }).click();
    await page.getByRole('button', { name: 'Confirm return of withdrawal 20.00 USD' }).click();
    await rowOf(page, '20.00').locator('ol.steps > li', { hasText: 'WITHDRAWAL_FAILURE' }).waitFor();
    await expect(rowOf(page, '20.00').textContent()).resolves.toMatch(/WITHDRAWAL[\s\S]*FEDWIRE[\s\S]*FAILED/);
    expect(await balanceOf(suite.t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    expect(await unnamedControls(page)).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
