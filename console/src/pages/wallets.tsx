import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, type OpenBaaS, type Schema } from '../api.js';
import { notePause, pollEvery, pollingPaused, pollMs, useLoad, usePagedList } from '../hooks.js';
import { useSession } from '../session.js';
import { BalanceChart, toMinor, type BalancePoint } from '../components/balance-chart.js';
import { Facts, Field, Form, Id, Link, NewestShown, Page, Panel, Shown, Status, Time, Table } from '../components/ui.js';
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

/** How often the balance of a wallet row on screen is read again, in milliseconds. */
const balancePollMs = pollEvery(10_000);

/**
 * The balances of the Wallets page's rows, read only for the rows on screen: a row's balance is
 * read when it comes on screen, unless read in the last 10 s, and again every 10 s while it stays
 * there and the tab is visible. Rows off screen keep the balance last read. So the page sends about as many balance reads as fit on a screen, whatever the rows shown,
 * and none while a 429 pauses reading (`notePause`). Until 2026-12-07 every wallet shown had its
 * balance read every 5 s, twelve requests a minute per wallet, which with a few hundred wallets
 * shown used up the key's rate limit (found by an audit).
 */
class OnScreenBalances {
  readonly balances = new Map<string, Balance>();
  error: string | undefined;
  private readonly readAtMs = new Map<string, number>();
  private readonly reading = new Set<string>();
  private readonly onScreen = new Set<string>();
  private readonly idOf = new Map<Element, string>();
  private readonly observer: IntersectionObserver;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly api: OpenBaaS,
    private readonly changed: () => void,
  ) {
    this.observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const id = this.idOf.get(entry.target);
        if (id === undefined) continue;
        if (entry.isIntersecting) this.onScreen.add(id);
        else this.onScreen.delete(id);
      }
      this.readDue();
    });
    // Looks every second for rows whose balance is due; sends nothing when none is.
    this.timer = setInterval(() => this.readDue(), 1000);
  }

  /** Follows a row of wallet `id` (its element); answers what stops following it. */
  watch(id: string, element: Element): () => void {
    this.idOf.set(element, id);
    this.observer.observe(element);
    return () => {
      this.observer.unobserve(element);
      this.idOf.delete(element);
      this.onScreen.delete(id);
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.observer.disconnect();
  }

  /** Reads, in one batch, the balances of the rows on screen not read in the last `balancePollMs`. */
  private readDue(): void {
    if (pollingPaused()) return;
    const now = Date.now();
    const due = [...this.onScreen].filter((id) => !this.reading.has(id) && now - (this.readAtMs.get(id) ?? -Infinity) >= balancePollMs);
    if (due.length === 0) return;
    for (const id of due) {
      this.reading.add(id);
      this.readAtMs.set(id, now);
    }
    void Promise.allSettled(due.map((id) => this.api.get('/v1/wallets/{id}/balance', { params: { path: { id } } }))).then((answers) => {
      let failure: unknown;
      answers.forEach((answer, index) => {
        const id = due[index] ?? '';
        this.reading.delete(id);
        if (answer.status === 'fulfilled') this.balances.set(id, answer.value.data);
        else failure ??= answer.reason;
      });
      if (failure !== undefined) notePause(failure);
      this.error = failure === undefined ? undefined : `Balances could not be read: ${describeError(failure)}`;
      this.changed();
    });
  }
}

/** The page's OnScreenBalances, made with the page and stopped with it; the page renders again as balances arrive. */
function useOnScreenBalances(api: OpenBaaS): OnScreenBalances | undefined {
  const [reader, setReader] = useState<OnScreenBalances | undefined>(undefined);
  const [, setVersion] = useState(0);
  useEffect(() => {
    const made = new OnScreenBalances(api, () => setVersion((version) => version + 1));
    setReader(made);
    return () => made.stop();
  }, [api]);
  return reader;
}

function WalletRow(props: { wallet: Schema<'Wallet'>; balances: OnScreenBalances | undefined }) {
  const { wallet, balances } = props;
  const row = useRef<HTMLTableRowElement>(null);
  useEffect(() => (balances && row.current ? balances.watch(wallet.id, row.current) : undefined), [balances, wallet.id]);
  const balance = balances?.balances.get(wallet.id);
  return (
    <tr ref={row}>
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
          ? balanceRows(balance).map((entry) => (
              <div key={entry.asset} class="num">
                {entry.asset} {entry.available} / {entry.reserved} / {entry.pending}
              </div>
            ))
          : '…'}
      </td>
    </tr>
  );
}

export function WalletsPage(props: { customerId: string | undefined }) {
  const { api } = useSession();
  const [customerId, setCustomerId] = useState(props.customerId ?? '');
  const [filter, setFilter] = useState(props.customerId ?? '');
  // The list alone is read every 5 s (a new wallet shows up); the balances of the rows on screen
  // are read by OnScreenBalances.
  const list = usePagedList(
    (limit, startAfterId) => api.get('/v1/wallets', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}), ...(filter ? { customerId: filter } : {}) } } }),
    [filter],
    pollMs,
  );
  const balances = useOnScreenBalances(api);
  const rows = list.data?.items ?? [];
  return (
    <Page title="Wallets">
      <Form label="Filter wallets" class="filters" onSubmit={() => setFilter(customerId.trim())}>
        <Field label="Customer id" value={customerId} onValue={setCustomerId} placeholder="all customers" />
        <button type="submit">Filter</button>
      </Form>
      <Status loading={list.loading && !list.data} error={list.error ?? balances?.error} empty={list.data !== undefined && rows.length === 0} emptyText="No wallets yet: a KYC approval creates the customer's first one." />
      {rows.length > 0 ? (
        <Table label="Wallets" columns={['Wallet', 'Customer', 'Account number', 'Balances (available / reserved / pending)']}>
          {rows.map((wallet) => (
            <WalletRow key={wallet.id} wallet={wallet} balances={balances} />
          ))}
        </Table>
      ) : null}
      <Shown list={list.data} noun="wallet(s)" onMore={list.more} busy={list.loadingMore} />
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
    pollEvery(3000),
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
