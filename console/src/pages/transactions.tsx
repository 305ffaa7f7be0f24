import { useState } from 'preact/hooks';
import type { Schema } from '../api.js';
import { pollEvery, pollMs, useLoad, usePinnedChoice } from '../hooks.js';
import { useSession } from '../session.js';
import { Amount, Badge, Field, Form, Id, NewestShown, Page, Select, shortId, Status, Table, Time, Tree } from '../components/ui.js';

type WalletTransaction = Schema<'WalletTransaction'>;

interface Group {
  parentTransactionId: string;
  type: string;
  records: WalletTransaction[];
  latest: WalletTransaction;
}

/** Groups history records under their parent transaction, newest parent first, children oldest first. */
export function groupByParent(records: WalletTransaction[]): Group[] {
  const groups = new Map<string, WalletTransaction[]>();
  for (const record of records) {
    const list = groups.get(record.parentTransactionId) ?? [];
    list.push(record);
    groups.set(record.parentTransactionId, list);
  }
  const byTime = (a: WalletTransaction, b: WalletTransaction) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id);
  return [...groups.entries()]
    .map(([parentTransactionId, list]) => {
      const sorted = [...list].sort(byTime);
      const latest = sorted.reduce((newest, record) => (byTime(record, newest) >= 0 ? record : newest));
      return { parentTransactionId, type: latest.type, records: sorted, latest };
    })
    .sort((a, b) => byTime(b.latest, a.latest));
}

/**
 * The direction a parent's summary shows: its first record's (a deposit's pending credit, a
 * withdrawal's hold), and none once it failed or was cancelled, when nothing moved in the end. Until
 * 2026-12-04 it was the latest record's, so a failed deposit read as money taken (found by an audit).
 */
function summaryOperation(group: { records: WalletTransaction[]; latest: WalletTransaction }): string | undefined {
  if (group.latest.status === 'FAILED' || group.latest.status === 'CANCELLED') return undefined;
  return group.records[0]?.operation;
}

/** The unified history as parent/child trees: one disclosure per parent transaction, its records inside. */
export function TransactionTree(props: { records: WalletTransaction[] }) {
  return (
    <Tree
      label="Transactions by parent"
      groups={groupByParent(props.records)}
      keyOf={(group) => group.parentTransactionId}
      emptyText="No transactions yet."
      summary={(group) => (
        <>
          <span class="tree-type">{group.type}</span> <Badge value={group.latest.status} /> <Amount amount={group.latest.amount} asset={group.latest.asset} operation={summaryOperation(group)} />{' '}
          <span class="muted">
            parent <Id value={group.parentTransactionId} />, {group.records.length} record(s), <Time value={group.latest.createdAt} />
          </span>
        </>
      )}
    >
      {(group) => (
        <Table label={`Records of ${group.type} ${group.parentTransactionId}`} columns={['When', 'Purpose', 'Balance', 'Status', 'Amount', 'Id']}>
          {group.records.map((record) => (
            <tr key={record.id}>
              <td>
                <Time value={record.createdAt} />
              </td>
              <td>{record.purpose}</td>
              <td>{record.balanceType}</td>
              <td>
                <Badge value={record.status} />
              </td>
              <td class="num">
                <Amount amount={record.amount} asset={record.asset} operation={record.operation} />
              </td>
              <td>
                <Id value={record.id} />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Tree>
  );
}

/** Records the page shows for one wallet (the API's most per page). */
const historyLimit = 200;

export function TransactionsPage(props: { walletId: string | undefined }) {
  const { api } = useSession();
  const wallets = useLoad(() => api.get('/v1/wallets', { params: { query: { limit: 100 } } }), [], pollMs);
  // The wallet the link names is read by its id: the select lists the newest 100 wallets, and until
  // 2026-12-04 an older one named by the link showed another wallet in the select (found by an audit).
  const named = useLoad(async () => (props.walletId ? (await api.get('/v1/wallets/{id}', { params: { path: { id: props.walletId } } })).data : null), [props.walletId], pollMs);
  const [chosen, setWalletId] = usePinnedChoice(wallets.data?.data[0]?.id, props.walletId ?? '');
  const [status, setStatus] = useState('');
  const [operation, setOperation] = useState('');
  const [type, setType] = useState('');
  const [applied, setApplied] = useState({ status: '', operation: '', type: '' });
  const history = useLoad(
    async () =>
      chosen
        ? await api.get('/v1/transactions', {
            params: {
              query: {
                walletId: chosen,
                limit: historyLimit,
                ...(applied.status ? { status: applied.status as 'COMPLETED' } : {}),
                ...(applied.operation ? { operation: applied.operation as 'CREDIT' } : {}),
                ...(applied.type ? { type: applied.type } : {}),
              },
            },
          })
        : undefined,
    [chosen, applied.status, applied.operation, applied.type],
    pollEvery(3000),
  );
  const listed = wallets.data?.data ?? [];
  const namedWallet = named.data && named.data.id === chosen && !listed.some((wallet) => wallet.id === chosen) ? [named.data] : [];
  const walletOptions = [...namedWallet, ...listed].map((wallet) => ({ value: wallet.id, label: `${wallet.name} (${wallet.virtualAccount?.virtualAccountNumber ?? shortId(wallet.id)})` }));
  if (chosen && !walletOptions.some((option) => option.value === chosen)) {
    walletOptions.unshift({ value: chosen, label: named.error ? `The wallet in the link (${shortId(chosen)}) cannot be read` : `Wallet ${shortId(chosen)}` });
  }
  const records = history.data?.data;
  return (
    <Page title="Transactions">
      <Form label="Filter transactions" class="filters" onSubmit={() => setApplied({ status, operation, type: type.trim() })}>
        <Select label="Wallet" value={chosen} onValue={setWalletId} options={walletOptions.length > 0 ? walletOptions : [{ value: '', label: wallets.error ? 'The wallets could not be read' : wallets.data ? 'No wallet yet' : 'Loading wallets…' }]} />
        <Select label="Status" value={status} onValue={setStatus} options={['', 'PENDING', 'COMPLETED', 'FAILED', 'CANCELLED']} />
        <Select label="Operation" value={operation} onValue={setOperation} options={['', 'CREDIT', 'DEBIT']} />
        <Field label="Type" value={type} onValue={setType} placeholder="BANK_DEPOSIT" maxLength={64} />
        <button type="submit">Apply</button>
      </Form>
      <Status loading={(history.loading || wallets.loading) && !history.data} error={wallets.error ?? history.error} />
      {history.data ? <TransactionTree records={records ?? []} /> : chosen === '' && wallets.data ? <p class="muted">No transactions yet.</p> : null}
      {history.data ? <NewestShown shown={history.data.data.length} of={history.data.pagination} noun="record(s)" /> : null}
    </Page>
  );
}
