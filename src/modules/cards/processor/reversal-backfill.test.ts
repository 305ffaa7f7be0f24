import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../../test/harness.js';
import { fundedCard, onParent, panOf, send } from '../../../../test/cards/card-network.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The UPDATE statements of migration 0044: they give the reversals written before it the posting each credited back. */
function backfillStatements(): string[] {
  const text = fs.readFileSync(path.join(import.meta.dirname, '../../../../migrations/0044_card_reversal_postings.sql'), 'utf8');
  return text
    .split(';')
    .filter((part) => part.includes('UPDATE card_transactions'))
    .map((part) => part.slice(part.indexOf('UPDATE card_transactions')));
}

describe('migration 0044', () => {
  it('gives each reversal written before it the posting it credited back (by DE90, or the purchase that opened a lifecycle without DE90); hold releases and other records get none', async () => {
    const card = await fundedCard(t, '500.00');
    // A purchase reversed in part by the sandbox (DE90 names it), a completion reversed by DE90, a purchase reversed without DE90, a hold released.
    const purchase = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 100 });
    await onParent(t, purchase.parentCardTransactionId, 'reversals', { amount: 30 });
    const auth = await send(t, `/v1/sandbox/cards/${card.cardId}/authorizations`, { amount: 50 });
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 50 });
    const { formatOriginalDataElements } = await import('../network/index.js');
    const pan = await panOf(t, card.cardId);
    const iso = (message: Record<string, string>) => t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message: { ...message, '2': pan } } });
    const fields = completion.iso.request.fields as Record<string, string>;
    await iso({ ...fields, '0': '0420', '11': '000901', '90': formatOriginalDataElements({ mti: '0220', stan: fields['11'], transmissionDateTime: fields['7'], acquirerId: fields['32'] }) });
    const other = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 20 });
    const { '90': _named, ...otherFields } = other.iso.request.fields as Record<string, string>;
    await iso({ ...otherFields, '0': '0420', '11': '000902' });
    const held = await send(t, `/v1/sandbox/cards/${card.cardId}/authorizations`, { amount: 10 });
    const release = await onParent(t, held.parentCardTransactionId, 'reversals', {});

    const reversals = () => t.deps.db.selectFrom('card_transactions').select(['id', 'reverses_id', 'amount_minor']).where('client_id', '=', t.clientA.id).where('card_id', '=', card.cardId).where('type', '=', 'REVERSAL_ADVICE').orderBy('id').execute();
    const written = await reversals();
    // The hold's release alone names no posting (compared by id: a message on a lifecycle is dated
    // after its last change, so under the test's still clock the id order is not the sending order).
    expect(written).toHaveLength(4);
    expect(written.filter((row) => row.reverses_id === null).map((row) => row.id)).toEqual([release.cardTransactionId]);
    await t.deps.db.updateTable('card_transactions').set({ reverses_id: null }).where('client_id', '=', t.clientA.id).where('card_id', '=', card.cardId).execute();
    for (const statement of backfillStatements()) await sql.raw(statement).execute(t.deps.db);
    expect(await reversals()).toEqual(written);
  });
});
