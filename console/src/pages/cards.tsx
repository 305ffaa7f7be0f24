import { useState } from 'preact/hooks';
import type { Schema } from '../api.js';
import { pollEvery, useAction, useLoad, usePagedList } from '../hooks.js';
import { useSession } from '../session.js';
import { Amount, Badge, ConfirmInPlace, Facts, Id, isOneOf, Link, NewestShown, Outcome, Page, Panel, SelectFilter, Shown, Status, Table, Time, TraceLink, Tree } from '../components/ui.js';

/**
 * The card API gives amounts as JSON numbers in major units of the card's currency (USD, two
 * decimals: contract §12.1); the rest of the console shows decimal strings with the asset's
 * decimals, so 25.5 is shown 25.50 (found by an audit, 2026-12-04).
 */
function cardAmount(value: number): string {
  return value.toFixed(2);
}

type Card = Schema<'Card'>;
type CardTransactionGroup = Schema<'CardTransactionGroup'>;
type CardStatus = Card['status'];

const cardStatuses: readonly CardStatus[] = ['ACTIVE', 'BLOCKED', 'SUSPENDED', 'CANCELLED'];

function cardLabel(card: Card): string {
  return `${card.cardType} •••• ${card.last4}`;
}

export function CardsPage() {
  const { api } = useSession();
  const [applied, setApplied] = useState('');
  const list = usePagedList(
    (limit, startAfterId) => api.get('/v1/cards', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}), ...(isOneOf(cardStatuses, applied) ? { status: applied } : {}) } } }),
    [applied],
    pollEvery(4000),
  );
  const programs = useLoad(() => api.get('/v1/cards/programs', {}), []);
  const programName = new Map((programs.data?.data ?? []).map((program) => [program.id, program.name]));
  const rows = list.data?.items ?? [];
  return (
    <Page title="Cards">
      <SelectFilter formLabel="Filter cards" label="Status" options={cardStatuses} onApply={setApplied} />
      <Status loading={list.loading && !list.data} error={list.error} empty={list.data !== undefined && rows.length === 0} emptyText="No cards yet. Issue one with POST /v1/cards/debit or /v1/cards/credit." />
      {rows.length > 0 ? (
        <Table label="Cards" columns={['Card', 'Type', 'Form', 'Status', 'Program', 'Wallet', 'Created']}>
          {rows.map((card) => (
            <tr key={card.id}>
              <td>
                <Link to={['cards', card.id]}>•••• {card.last4}</Link>
              </td>
              <td>{card.cardType}</td>
              <td>{card.isVirtual ? 'virtual' : 'physical'}</td>
              <td>
                <Badge value={card.status} />
              </td>
              <td>{programName.get(card.cardProgramId) ?? <Id value={card.cardProgramId} />}</td>
              <td>
                <Link to={['wallets', card.walletId]}>
                  <Id value={card.walletId} />
                </Link>
              </td>
              <td>
                <Time value={card.createdAt} />
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <Shown list={list.data} noun="card(s)" onMore={list.more} busy={list.loadingMore} />
    </Page>
  );
}

/** A card's lifecycles (one per swipe) as parent/child trees, like the wallet history. */
function CardTransactionTree(props: { groups: CardTransactionGroup[] }) {
  return (
    <Tree
      label="Card transactions by parent"
      groups={props.groups}
      keyOf={(group) => group.parentCardTransactionId}
      emptyText="No card transactions yet."
      summary={(group) => (
        <>
          <span class="tree-type">{group.merchant?.name ?? 'Card transaction'}</span> <Badge value={group.status} /> held <Amount amount={cardAmount(group.heldAmount)} asset={group.asset} />, posted{' '}
          <Amount amount={cardAmount(group.postedAmount)} asset={group.asset} />{' '}
          <span class="muted">
            parent <Id value={group.parentCardTransactionId} />, {group.children.length} message(s), <Time value={group.createdAt} />
          </span>
        </>
      )}
    >
      {(group) => (
        <Table label={`Messages of card transaction ${group.parentCardTransactionId}`} columns={['When', 'Type', 'MTI', 'Status', 'Amount', 'Merchant', 'Response', 'Decision', 'Id', 'Trace']}>
          {group.children.map((message) => (
            <tr key={message.id}>
              <td>
                <Time value={message.timestamp} />
              </td>
              <td>{message.type}</td>
              <td>{message.mti}</td>
              <td>
                <Badge value={message.status} />
              </td>
              <td class="num">
                <Amount amount={cardAmount(message.amount)} asset={message.asset} operation={message.operation} />
                {message.requestedAmount !== message.amount ? <div class="muted">requested {cardAmount(message.requestedAmount)}</div> : null}
              </td>
              <td>{message.merchant ? `${message.merchant.name} (MCC ${message.merchant.mcc}, ${message.merchant.city} ${message.merchant.country})` : '—'}</td>
              <td>
                <code>{message.responseCode}</code>
                {message.declineReason ? <div class="muted">{message.declineReason}</div> : null}
              </td>
              <td>{message.decisionSource}</td>
              <td>
                <Id value={message.id} />
              </td>
              <td>{message.traceId ? <TraceLink traceId={message.traceId} label={`Trace of ${message.type} ${message.mti}`}>Open</TraceLink> : '—'}</td>
            </tr>
          ))}
        </Table>
      )}
    </Tree>
  );
}

export function CardPage(props: { id: string }) {
  const { api, sandbox } = useSession();
  const card = useLoad(async () => (await api.get('/v1/cards/{cardId}', { params: { path: { cardId: props.id } } })).data, [props.id], pollEvery(4000));
  const programs = useLoad(() => api.get('/v1/cards/programs', {}), []);
  const history = useLoad(() => api.get('/v1/cards/transactions', { params: { query: { cardId: props.id, limit: 100 } } }), [props.id], pollEvery(3000));
  const activate = useAction(async () => {
    const answer = await api.post('/v1/cards/{cardId}/activate', { params: { path: { cardId: props.id } } });
    card.reload();
    return answer;
  });
  const change = useAction(async (status: 'ACTIVE' | 'SUSPENDED' | 'CANCELLED') => {
    const answer = await api.patch('/v1/cards/{cardId}', { params: { path: { cardId: props.id } }, body: { status } });
    card.reload();
    return answer;
  });
  // One outcome shown, the last action's (until 2026-12-04 an activation's outcome hid a later block's).
  const runActivate = () => {
    change.reset();
    void activate.run();
  };
  const runChange = (status: 'ACTIVE' | 'SUSPENDED' | 'CANCELLED') => {
    activate.reset();
    void change.run(status);
  };
  // Cancelling cannot be undone: the button asks first, in the page rather than in a dialog box.
  const [confirmingCancel, setConfirmingCancel] = useState(false);
  const data = card.data;
  const busy = activate.busy || change.busy;
  const done = change.result ?? activate.result;
  return (
    <Page
      title={data ? `Card ${cardLabel(data)}` : 'Card'}
      actions={
        <>
          {sandbox && data ? (
            <Link to={['simulate', undefined, { cardId: props.id }]} class="button">
              Simulate a swipe
            </Link>
          ) : null}
          <Link to={['cards']}>All cards</Link>
        </>
      }
    >
      <Status loading={card.loading && !data} error={card.error} />
      {data ? (
        <>
          <Facts
            items={[
              ['Card', `•••• ${data.last4}`],
              ['Status', <Badge value={data.status} />],
              ['Type', data.cardType],
              ['Form', data.isVirtual ? 'virtual' : 'physical'],
              ['Expires', `${String(data.expiryMonth).padStart(2, '0')}/${data.expiryYear}`],
              ['Reference', <code>{data.referenceNumber}</code>],
              ['Handler', data.cardTransactionHandler],
              ['Customer', <Link to={['customers', data.customerId]}><Id value={data.customerId} /></Link>],
              ['Wallet', <Link to={['wallets', data.walletId]}><Id value={data.walletId} /></Link>],
              ['Program', programs.data?.data.find((program) => program.id === data.cardProgramId)?.name ?? <Id value={data.cardProgramId} />],
              ['Credit line', data.creditLineId ? <Link to={['credit']}><Id value={data.creditLineId} /></Link> : null],
              ['Activated', <Time value={data.activatedAt} />],
              ['Created', <Time value={data.createdAt} />],
            ]}
          />
          <div class="actions">
            {data.status === 'BLOCKED' ? (
              <button type="button" onClick={runActivate} disabled={busy}>
                Activate
              </button>
            ) : null}
            {data.status === 'ACTIVE' ? (
              <button type="button" class="secondary" onClick={() => runChange('SUSPENDED')} disabled={busy}>
                Block (suspend)
              </button>
            ) : null}
            {data.status === 'SUSPENDED' ? (
              <button type="button" onClick={() => runChange('ACTIVE')} disabled={busy}>
                Unblock
              </button>
            ) : null}
            {data.status !== 'CANCELLED' && !confirmingCancel ? (
              <button type="button" class="secondary" onClick={() => setConfirmingCancel(true)} disabled={busy}>
                Cancel card…
              </button>
            ) : null}
          </div>
          {data.status !== 'CANCELLED' && confirmingCancel ? (
            <ConfirmInPlace
              label="Confirm cancelling the card"
              warning="A cancelled card is declined for good and cannot be activated again."
              confirm="Cancel the card"
              busy={busy}
              onConfirm={() => {
                setConfirmingCancel(false);
                runChange('CANCELLED');
              }}
              onKeep={() => setConfirmingCancel(false)}
            />
          ) : null}
          <Outcome error={activate.error ?? change.error} traceId={activate.error ? activate.errorTraceId : change.errorTraceId}>
            {done ? (
              <>
                Card is now {done.data.status}. <TraceLink traceId={done.traceId} />
              </>
            ) : null}
          </Outcome>
        </>
      ) : null}
      <Panel title="Card transactions">
        <Status loading={history.loading && !history.data} error={history.error} />
        {history.data ? (
          <>
            <CardTransactionTree groups={history.data.data} />
            <NewestShown shown={history.data.data.length} of={history.data.pagination} noun="card transaction(s)" />
          </>
        ) : null}
      </Panel>
    </Page>
  );
}
