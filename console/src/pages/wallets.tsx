import { useState } from 'preact/hooks';
import { firstItems, listPageSize, type OpenBaaS, type Schema } from '../api.js';
import { useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { BalanceChart, toMinor, type BalancePoint } from '../components/balance-chart.js';
import { Facts, Field, Form, Id, Link, More, NewestShown, Page, Panel, Status, Time, Table } from '../components/ui.js';
import { TransactionTree } from './transactions.js';

type Balance = Schema<'WalletBalance'>;

/** The balances of a wallet as rows: one per asset, its AVAILABLE, RESERVED and PENDING side by side. */
function balanceRows(balance: Balance): { asset: string; available: string; reserved: string; pending: string }[] {
  const assets = new Set([...(balance.AVAILABLE ?? []), ...(balance.RESERVED ?? []), ...(balance.PENDING ?? [])].map((entry) => entry.asset));
  const amountOf = (list: { asset: string; amount: string }[] | undefined, asset: string) => list?.find((entry) => entry.asset === asset)?.amount ?? '0';
  return [...assets].map((asset) => ({ asset, available: amountOf(balance.AVAILABLE, asset), reserved: amountOf(balance.RESERVED, asset), pending: amountOf(balance.PENDING, asset) }));
}

export function BalanceTable(props: { balance: Balance; label: string }) {
  const rows = balanceRows(props.balance);
  if (rows.length === 0) return <p class="muted">No money yet.</p>;
  return (
    <Table label={props.label} class="balances" columns={['Asset', 'Available', 'Reserved', 'Pending']}>
        {rows.map((row) => (
          <tr key={row.asset}>
            <th scope="row">{row.asset}</th>
            <td class="num" data-balance="AVAILABLE">
              {row.available}
            </td>
            <td class="num" data-balance="RESERVED">
              {row.reserved}
            </td>
            <td class="num" data-balance="PENDING">
              {row.pending}
            </td>
          </tr>
        ))}
      </Table>
  );
}

async function walletsWithBalances(api: OpenBaaS, customerId: string | undefined, count: number) {
  const page = await firstItems(count, (limit, startAfterId) => api.get('/v1/wallets', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}), ...(customerId ? { customerId } : {}) } } }));
  const balances = await Promise.all(page.items.map((wallet) => api.get('/v1/wallets/{id}/balance', { params: { path: { id: wallet.id } } })));
  return { wallets: page.items.map((wallet, index) => ({ wallet, balance: balances[index]?.data })), total: page.total, hasMore: page.hasMore };
}

export function WalletsPage(props: { customerId: string | undefined }) {
  const { api } = useSession();
  const [customerId, setCustomerId] = useState(props.customerId ?? '');
  const [filter, setFilter] = useState(props.customerId ?? '');
  const [shown, setShown] = useState(listPageSize);
  // Cleared when the filter changes, kept while "Load more" reads the longer list.
  const loaded = useLoad(() => walletsWithBalances(api, filter || undefined, shown), [filter, shown], 5000, filter);
  const rows = loaded.data?.wallets ?? [];
  return (
    <Page title="Wallets">
      <Form
        label="Filter wallets"
        class="filters"
        onSubmit={() => {
          setShown(listPageSize);
          setFilter(customerId.trim());
        }}
      >
        <Field label="Customer id" value={customerId} onValue={setCustomerId} placeholder="all customers" />
        <button type="submit">Filter</button>
      </Form>
      <Status loading={loaded.loading && !loaded.data} error={loaded.error} empty={loaded.data !== undefined && rows.length === 0} emptyText="No wallets yet: a KYC approval creates the customer's first one." />
      {rows.length > 0 ? (
        <Table label="Wallets" columns={['Wallet', 'Customer', 'Account number', 'Balances (available / reserved / pending)']}>
            {rows.map(({ wallet, balance }) => (
              <tr key={wallet.id}>
                <td>
                  <Link to={['wallets', wallet.id]}>{wallet.name}</Link> <Id value={wallet.id} />
                </td>
                <td>
                  <Link to={['customers', wallet.customerId]}>
                    <Id value={wallet.customerId} />
                  </Link>
                </td>
                <td>{wallet.virtualAccount?.virtualAccountNumber ?? <span class="muted">none</span>}</td>
                <td>
                  {balance
                    ? balanceRows(balance).map((row) => (
                        <div key={row.asset} class="num">
                          {row.asset} {row.available} / {row.reserved} / {row.pending}
                        </div>
                      ))
                    : '…'}
                </td>
              </tr>
            ))}
          </Table>
      ) : null}
      {loaded.data && rows.length > 0 ? (
        <p class="muted">
          {rows.length} of {loaded.data.total} wallet(s) shown. <More hasMore={loaded.data.hasMore} onMore={() => setShown(shown + listPageSize)} busy={loaded.loading && loaded.data.hasMore && rows.length < shown} />
        </p>
      ) : null}
    </Page>
  );
}

/** Scales of the assets, for exact arithmetic on the decimal strings of the API. */
function scaleOf(assets: Schema<'Asset'>[] | undefined, asset: string): number {
  return assets?.find((entry) => entry.code === asset)?.scale ?? 2;
}

/**
 * What one history record did to the AVAILABLE balance, in minor units (docs/ledger.md: a record's
 * balance type is not always the balance its step moved). Records on AVAILABLE add or take as
 * their operation says; a HOLD or HOLD_INCREMENT (DEBIT, RESERVED) took its amount from AVAILABLE
 * and a RELEASE or EXPIRY (CREDIT, RESERVED) gave it back; the other RESERVED and PENDING records
 * (captures out of a hold, pending credits and their failures) left AVAILABLE as it was. Until
 * 2026-12-04 only the records on AVAILABLE counted, so a wallet with open holds drew a line that
 * started below zero (found by an audit).
 */
function availableEffect(record: Pick<Schema<'WalletTransaction'>, 'balanceType' | 'operation' | 'purpose'>, minor: bigint): bigint {
  if (record.balanceType === 'AVAILABLE') return record.operation === 'CREDIT' ? minor : -minor;
  if (record.balanceType !== 'RESERVED') return 0n;
  if (record.purpose === 'HOLD' || record.purpose === 'HOLD_INCREMENT') return -minor;
  if (record.purpose === 'RELEASE' || record.purpose === 'EXPIRY') return minor;
  return 0n;
}

/** The AVAILABLE balance over time, walked back from today's balance through the wallet's history records. */
function availableHistory(records: Schema<'WalletTransaction'>[], current: string, asset: string, scale: number): BalancePoint[] {
  const effects = records
    .filter((record) => record.asset === asset)
    .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id))
    .map((record) => ({ at: Date.parse(record.createdAt), delta: availableEffect(record, toMinor(record.amount, scale)) }))
    .filter((effect) => effect.delta !== 0n);
  const first = effects[0];
  const last = effects[effects.length - 1];
  if (!first || !last) return [];
  // Records carry the sandbox clock, which may run ahead of this computer's: the ends are padded
  // around the records rather than pinned to Date.now().
  const pad = Math.max(60_000, (last.at - first.at) / 20);
  let value = toMinor(current, scale) - effects.reduce((sum, effect) => sum + effect.delta, 0n);
  const points: BalancePoint[] = [{ at: first.at - pad, value }];
  for (const effect of effects) {
    value += effect.delta;
    points.push({ at: effect.at, value });
  }
  points.push({ at: last.at + pad, value });
  return points;
}

export function WalletPage(props: { id: string }) {
  const { api, sandbox } = useSession();
  const loaded = useLoad(
    async () => {
      const [wallet, balance, history, assets] = await Promise.all([
        api.get('/v1/wallets/{id}', { params: { path: { id: props.id } } }),
        api.get('/v1/wallets/{id}/balance', { params: { path: { id: props.id } } }),
        api.get('/v1/transactions', { params: { query: { walletId: props.id, limit: 200 } } }),
        api.get('/v1/assets'),
      ]);
      return { wallet: wallet.data, balance: balance.data, records: history.data, recordsCount: history.pagination, assets: assets.data };
    },
    [props.id],
    3000,
  );
  const data = loaded.data;
  const assets = data ? balanceRows(data.balance) : [];
  return (
    <Page title={data ? `Wallet ${data.wallet.name}` : 'Wallet'} actions={sandbox && data ? <Link to={['simulate', undefined, { walletId: props.id }]} class="button">Simulate a deposit</Link> : null}>
      <Status loading={loaded.loading && !data} error={loaded.error} />
      {data ? (
        <>
          <Panel title="Wallet">
            <Facts
              items={[
                ['Id', <Id value={data.wallet.id} />],
                ['Customer', <Link to={['customers', data.wallet.customerId]}><Id value={data.wallet.customerId} /></Link>],
                ['Account number', data.wallet.virtualAccount?.virtualAccountNumber ?? 'none'],
                ['Primary', data.wallet.primary ? 'yes' : 'no'],
                ['Created', <Time value={data.wallet.createdAt} />],
              ]}
            />
          </Panel>
          <Panel title="Balances">
            <BalanceTable balance={data.balance} label="Balances" />
          </Panel>
          <Panel title="Available balance over time">
            {assets.map((row) => (
              <BalanceChart key={row.asset} asset={row.asset} scale={scaleOf(data.assets, row.asset)} points={availableHistory(data.records, row.available, row.asset, scaleOf(data.assets, row.asset))} />
            ))}
          </Panel>
          <Panel title="Transactions">
            <TransactionTree records={data.records} />
            <NewestShown shown={data.records.length} of={data.recordsCount} noun="record(s)" />
          </Panel>
        </>
      ) : null}
    </Page>
  );
}
