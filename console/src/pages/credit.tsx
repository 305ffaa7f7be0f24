import { useState } from 'preact/hooks';
import type { OpenBaaS, Schema } from '../api.js';
import { pollEvery, pollMs, useLoad, usePagedList } from '../hooks.js';
import { useSession } from '../session.js';
import { Amount, Badge, Id, isOneOf, Link, Page, SelectFilter, Shown, Status, Table, Time } from '../components/ui.js';

type CreditLineStatus = Schema<'CreditLine'>['status'];
const creditStatuses: readonly CreditLineStatus[] = ['PENDING_COLLATERAL', 'ACTIVE', 'RESTRICTED', 'LIQUIDATING', 'CLOSED'];

type CreditCard = Schema<'Card'>;

/** The newest credit card of each of `lineIds`, read in pages of 200 until all are found or the list ends. */
async function cardsOfLines(api: OpenBaaS, lineIds: readonly string[]): Promise<Map<string, CreditCard>> {
  const wanted = new Set(lineIds);
  const found = new Map<string, CreditCard>();
  let startAfterId: string | undefined;
  while (found.size < wanted.size) {
    const page = await api.get('/v1/cards', { params: { query: { limit: 200, cardType: 'CREDIT', ...(startAfterId ? { startAfterId } : {}) } } });
    for (const card of page.data) {
      if (card.creditLineId && wanted.has(card.creditLineId) && !found.has(card.creditLineId)) found.set(card.creditLineId, card);
    }
    if (!page.pagination.hasMoreResults || page.pagination.nextStartAfterId === null) break;
    startAfterId = page.pagination.nextStartAfterId;
  }
  return found;
}

export function CreditPage() {
  const { api } = useSession();
  const [applied, setApplied] = useState('');
  const list = usePagedList(
    (limit, startAfterId) => api.get('/v1/credit-lines', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}), ...(isOneOf(creditStatuses, applied) ? { status: applied } : {}) } } }),
    [applied],
    pollMs,
  );
  const rows = list.data?.items ?? [];
  // The card of each line shown: the client's credit cards, newest first, page by page until every
  // line shown has its card or none remain. Until 2026-12-04 only the newest 100 were read, so an
  // older line showed no card; then each shown customer's cards were read every 5 s, one request
  // per customer, which at 100 lines passed the API's rate limit (found by an audit). Cards change
  // rarely, so they are read again every 30 s, and at once when the lines shown change.
  const lineIds = rows.map((line) => line.id);
  const cards = useLoad(() => cardsOfLines(api, lineIds), [lineIds.join(',')], pollEvery(30_000));
  const cardOf = cards.data ?? new Map<string, CreditCard>();
  return (
    <Page title="Credit lines">
      <SelectFilter formLabel="Filter credit lines" label="Status" options={creditStatuses} onApply={setApplied} />
      <Status loading={list.loading && !list.data} error={list.error} empty={list.data !== undefined && rows.length === 0} emptyText="No credit lines yet. Open one with POST /v1/credit-lines." />
      {rows.length > 0 ? (
        <Table label="Credit lines" columns={['Line', 'Status', 'Limit', 'Available', 'Principal', 'Interest', 'Holds', 'Collateral', 'LTV', 'Card', 'Created']}>
          {rows.map((line) => {
            const card = cardOf.get(line.id);
            return (
              <tr key={line.id}>
                <td>
                  <Id value={line.id} />
                  <div class="muted">APR {line.apr}</div>
                </td>
                <td>
                  <Badge value={line.status} />
                </td>
                <td class="num">
                  <Amount amount={line.creditLimit} asset={line.currency} />
                </td>
                <td class="num">
                  <Amount amount={line.availableCredit} asset={line.currency} />
                </td>
                <td class="num">
                  <Amount amount={line.outstanding.principal} asset={line.currency} />
                </td>
                <td class="num">
                  <Amount amount={line.outstanding.interest} asset={line.currency} />
                </td>
                <td class="num">
                  <Amount amount={line.outstanding.pendingHolds} asset={line.currency} />
                </td>
                <td class="num">
                  <Amount amount={line.collateral.amount} asset={line.collateral.asset} />
                  <div class="muted">
                    worth <Amount amount={line.collateral.value} asset={line.currency} /> at {line.collateral.price}
                  </div>
                </td>
                <td>
                  {line.ltv ?? '—'} <Badge value={line.ltvLevel} />
                </td>
                <td>{card ? <Link to={['cards', card.id]}>•••• {card.last4}</Link> : <span class="muted">—</span>}</td>
                <td>
                  <Time value={line.createdAt} />
                </td>
              </tr>
            );
          })}
        </Table>
      ) : null}
      <Shown list={list.data} noun="credit line(s)" onMore={list.more} busy={list.loadingMore} />
    </Page>
  );
}
