import { useState } from 'preact/hooks';
import type { Schema } from '../api.js';
import { pollEvery, useAction, usePagedList } from '../hooks.js';
import { useSession } from '../session.js';
import { Amount, Badge, ConfirmInPlace, Id, Link, Outcome, Page, SelectFilter, Shown, Status, Time, TraceLink, Table } from '../components/ui.js';

type Transfer = Schema<'BankTransactionGroup'> | Schema<'CryptoTransferGroup'>;

/**
 * The other side of a transfer: a deposit's sender, a withdrawal's beneficiary (until 2026-12-04
 * a withdrawal showed "—": the API puts its destination in `beneficiary`; found by an audit).
 */
function counterpartyOf(row: Transfer): string {
  if (!('bankNetwork' in row)) return '—';
  return (row.direction === 'WITHDRAWAL' ? row.beneficiary?.name : row.counterparty?.name) ?? '—';
}

/** The sign an amount shows: the transfer's direction, and none once it failed (nothing moved in the end), as the transaction trees do. */
function movedOperation(row: Transfer): string | undefined {
  return row.status === 'FAILED' ? undefined : row.operation;
}

/**
 * A settled payment the sandbox can still send back, through the same fail route as a pending one:
 * a withdrawal of any network (a return after settlement), a deposit only on ACH (a late return; a
 * settled Fedwire, SWIFT or unspecified deposit is final, and the API answers 409). Never a crypto
 * transfer, never a failed one.
 */
function returnable(row: Transfer): boolean {
  if (!('bankNetwork' in row) || row.status !== 'COMPLETED') return false;
  return row.direction === 'WITHDRAWAL' || row.bankNetwork === 'ACH';
}

const outcomeText = { settle: 'Settled.', fail: 'Failed.', return: 'Returned.' } as const;

/** How a row's buttons name it to assistive technology: "deposit 100.00 USD". */
function labelOf(row: Transfer): string {
  return `${row.direction.toLowerCase()} ${row.amount} ${row.asset}`;
}

/**
 * A settled payment's Return, which asks first, in the row (as cancelling a card does): a settled
 * deposit taken back leaves the wallet even when it was spent, so it may overdraw it (found by a
 * re-audit).
 */
function ReturnControl(props: { row: Transfer; confirming: boolean; busy: boolean; onAsk: () => void; onKeep: () => void; onConfirm: () => void }) {
  const { row, busy } = props;
  if (!props.confirming) {
    return (
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onAsk} disabled={busy} aria-label={`Return ${labelOf(row)}`}>
          Return…
        </button>
      </div>
    );
  }
  return (
    <ConfirmInPlace
      label={`Confirm returning ${labelOf(row)}`}
      warning={row.direction === 'DEPOSIT' ? 'The amount leaves the wallet even if it was spent: the wallet may go below zero.' : 'The amount comes back to the wallet.'}
      confirm="Return it"
      confirmLabel={`Confirm return of ${labelOf(row)}`}
      keepLabel={`Keep ${labelOf(row)}`}
      busy={busy}
      onConfirm={props.onConfirm}
      onKeep={props.onKeep}
    />
  );
}

export function BankTransfersPage() {
  const { api, sandbox } = useSession();
  const [applied, setApplied] = useState('');
  const list = usePagedList(
    (limit, startAfterId) => api.get('/v1/baas/transactions', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}), ...(applied ? { status: applied as 'PENDING' } : {}) } } }),
    [applied],
    pollEvery(3000),
  );
  // One action for every step, so the outcome shown is always the last step's (until 2026-12-04
  // each kept its own, and a settle's outcome hid every later failure's; found by an audit). A
  // return is a failure of a COMPLETED payment: the same route as a pending one's failure.
  const step = useAction(async (id: string, action: 'settle' | 'fail' | 'return') => {
    const answer =
      action === 'settle'
        ? await api.post('/v1/sandbox/bank-transactions/{id}/settle', { params: { path: { id } } })
        : await api.post('/v1/sandbox/bank-transactions/{id}/fail', { params: { path: { id } }, body: {} });
    list.reload();
    return { action, traceId: answer.traceId };
  });
  // The row whose Return is asking for confirmation (one at a time).
  const [confirmingReturn, setConfirmingReturn] = useState<string | null>(null);
  const rows = list.data?.items ?? [];
  return (
    <Page title="Bank transfers">
      <SelectFilter formLabel="Filter bank transfers" label="Status" options={['PENDING', 'COMPLETED', 'FAILED', 'CANCELLED']} onApply={setApplied} />
      <Status loading={list.loading && !list.data} error={list.error} empty={list.data !== undefined && rows.length === 0} emptyText="No deposits or withdrawals yet." />
      <Outcome error={step.error} traceId={step.errorTraceId}>
        {step.result ? (
          <>
            {outcomeText[step.result.action]} <TraceLink traceId={step.result.traceId} />
          </>
        ) : null}
      </Outcome>
      {rows.length > 0 ? (
        <Table label="Bank transfers" columns={['When', 'Direction', 'Network', 'Status', 'Amount', 'Sender or beneficiary', 'Wallet', 'Steps', ...(sandbox ? ['Sandbox'] : [])]}>
            {rows.map((row) => (
              <tr key={row.id}>
                <td>
                  <Time value={row.createdAt} />
                </td>
                <td>{row.direction}</td>
                <td>{'bankNetwork' in row ? (row.bankNetwork ?? row.transferNetwork ?? '—') : 'crypto'}</td>
                <td>
                  <Badge value={row.status} />
                  {row.failureReason ? <div class="muted">{row.failureReason}</div> : null}
                </td>
                <td class="num">
                  <Amount amount={row.amount} asset={row.asset} operation={movedOperation(row)} />
                </td>
                <td>{counterpartyOf(row)}</td>
                <td>
                  {row.walletId ? (
                    <Link to={['wallets', row.walletId]}>
                      <Id value={row.walletId} />
                    </Link>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  <ol class="steps">
                    {(row.children ?? []).map((child) => (
                      <li key={child.id}>
                        {child.type} <Badge value={child.status} />
                      </li>
                    ))}
                  </ol>
                </td>
                {sandbox ? (
                  <td>
                    {row.status === 'PENDING' ? (
                      <div class="actions">
                        <button type="button" onClick={() => void step.run(row.id, 'settle')} disabled={step.busy} aria-label={`Settle ${labelOf(row)}`}>
                          Settle
                        </button>
                        <button type="button" class="secondary" onClick={() => void step.run(row.id, 'fail')} disabled={step.busy} aria-label={`Fail ${labelOf(row)}`}>
                          Fail
                        </button>
                      </div>
                    ) : returnable(row) ? (
                      <ReturnControl
                        row={row}
                        confirming={confirmingReturn === row.id}
                        busy={step.busy}
                        onAsk={() => setConfirmingReturn(row.id)}
                        onKeep={() => setConfirmingReturn(null)}
                        onConfirm={() => {
                          setConfirmingReturn(null);
                          void step.run(row.id, 'return');
                        }}
                      />
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </Table>
      ) : null}
      <Shown list={list.data} noun="transfer(s)" onMore={list.more} busy={list.loadingMore} />
    </Page>
  );
}
