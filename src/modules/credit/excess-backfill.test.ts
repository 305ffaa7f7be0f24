import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { onParent, send } from '../../../test/cards/card-network.js';
import { creditCard, openLine, spend } from '../../../test/credit/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The UPDATE statement of migration 0045: it gives the lines written before it what their cards' credits paid into the collateral wallet. */
function backfillStatement(): string {
  const text = fs.readFileSync(path.join(import.meta.dirname, '../../../migrations/0045_credit_line_excess_paid_out.sql'), 'utf8');
  return text.slice(text.indexOf('UPDATE credit_lines'));
}

describe('migration 0045', () => {
  it('gives each line what its cards\' refunds and reversed purchases paid into the collateral wallet beyond the principal; a line that paid none keeps 0', async () => {
    const paying = await openLine(t, { creditLimit: '2000.00' });
    const cardId = await creditCard(t, paying);
    await spend(t, cardId, 100);
    const purchase = await send(t, `/v1/sandbox/cards/${cardId}/financial`, { amount: 40 });
    await send(t, `/v1/sandbox/cards/${cardId}/financial`, { amount: 170, processingCode: '200000' });
    await onParent(t, purchase.parentCardTransactionId, 'reversals', {});
    const within = await openLine(t, { creditLimit: '2000.00' });
    const otherCard = await creditCard(t, within);
    await spend(t, otherCard, 100);
    await send(t, `/v1/sandbox/cards/${otherCard}/financial`, { amount: 60, processingCode: '200000' });

    const lines = () => t.deps.db.selectFrom('credit_lines').select(['id', 'excess_paid_out']).where('client_id', '=', t.clientA.id).where('id', 'in', [paying.lineId, within.lineId]).orderBy('id').execute();
    const written = await lines();
    // 30 of the refund, and the purchase reversed on a line that owed nothing: all 40.
    expect(Object.fromEntries(written.map((row) => [row.id, String(row.excess_paid_out)]))).toEqual({ [paying.lineId]: '7000', [within.lineId]: '0' });
    await t.deps.db.updateTable('credit_lines').set({ excess_paid_out: '0' }).where('client_id', '=', t.clientA.id).execute();
    await sql.raw(backfillStatement()).execute(t.deps.db);
    expect(await lines()).toEqual(written);
  });
});
