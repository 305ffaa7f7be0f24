import { useState } from 'preact/hooks';
import type { Schema } from '../api.js';
import { useLoad, usePagedList } from '../hooks.js';
import { useSession } from '../session.js';
import { Amount, Badge, Id, isOneOf, Link, Page, SelectFilter, Shown, Status, Table, Time } from '../components/ui.js';

type CreditLineStatus = Schema<'CreditLine'>['status'];
const creditStatuses: readonly CreditLineStatus[] = ['PENDING_COLLATERAL', 'ACTIVE', 'RESTRICTED', 'LIQUIDATING', 'CLOSED'];

export function CreditPage() {
  const { api } = useSession();
  const [applied, setApplied] = useState('');
  const list = usePagedList(
    (limit, startAfterId) => api.get('/v1/credit-lines', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}), ...(isOneOf(creditStatuses, applied) ? { status: applied } : {}) } } }),
    [applied],
    5000,
  );
  const rows = list.data?.items ?? [];
  // The card of each line shown, among its customer's credit cards (until 2026-12-04 among the
  // client's newest 100 credit cards, so an older line showed no card).
  const customers = [...new Set(rows.map((line) => line.customerId))].sort();
  const cards = useLoad(
    async () => (await Promise.all(customers.map(async (customerId) => (await api.get('/v1/cards', { params: { query: { limit: 200, cardType: 'CREDIT', customerId } } })).data))).flat(),
    [customers.join(',')],
    5000,
  );
  const cardOf = new Map((cards.data ?? []).filter((card) => card.creditLineId).map((card) => [card.creditLineId ?? '', card]));
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
      <Shown list={list.data} noun="credit line(s)" onMore={list.more} busy={list.loading} />
    </Page>
  );
}
