import { useState } from 'preact/hooks';
import { pollMs, useAction, useLoad, usePinnedChoice } from '../hooks.js';
import { useSession } from '../session.js';
import { Amount, Badge, Facts, Field, Form, Id, Link, Outcome, Page, Panel, Select, shortId, Status, Table, Time, TraceLink } from '../components/ui.js';
import { customerName } from './customers.js';

type Direction = 'direct' | 'reverse';
type Side = 'buy' | 'sell';

function AssetPairs() {
  const { api } = useSession();
  const pairs = useLoad(() => api.get('/v1/trades/asset-pairs'), [], pollMs);
  const rows = pairs.data?.data ?? [];
  return (
    <Panel title="Asset pairs">
      <Status loading={pairs.loading && !pairs.data} error={pairs.error} empty={pairs.data !== undefined && rows.length === 0} emptyText="No asset pairs." />
      {rows.length > 0 ? (
        <Table label="Asset pairs" columns={['Pair', 'Base', 'Quote', 'Min', 'Max', 'Fee rate', 'Tradable']}>
          {rows.map((pair) => (
            <tr key={pair.id}>
              <td>{pair.symbol}</td>
              <td>{pair.baseAsset}</td>
              <td>{pair.quoteAsset}</td>
              <td class="num">{pair.minAmount}</td>
              <td class="num">{pair.maxAmount}</td>
              <td class="num">{pair.feeRate}</td>
              <td>{pair.tradable ? 'yes' : 'no'}</td>
            </tr>
          ))}
        </Table>
      ) : null}
    </Panel>
  );
}

function QuoteAndExecute() {
  const { api } = useSession();
  // Read again every few seconds like every list of the console (a customer made with curl appears).
  const customers = useLoad(() => api.get('/v1/customers', { params: { query: { limit: 100 } } }), [], pollMs);
  const [chosenCustomer, setCustomerId] = usePinnedChoice(customers.data?.data[0]?.id);
  const wallets = useLoad(async () => (chosenCustomer ? (await api.get('/v1/wallets', { params: { query: { limit: 100, customerId: chosenCustomer } } })).data : []), [chosenCustomer], pollMs);
  const [chosenWallet, setWalletId] = usePinnedChoice(wallets.data?.[0]?.id, '', chosenCustomer);
  const [fromAsset, setFromAsset] = useState('USD');
  const [toAsset, setToAsset] = useState('BTC');
  const [direction, setDirection] = useState<Direction>('reverse');
  const [side, setSide] = useState<Side>('buy');
  const [amount, setAmount] = useState('100.00');
  const [feeAsset, setFeeAsset] = useState('USD');
  const execute = useAction(async (quoteId: string) => api.post('/v1/trades/quotes/{quoteId}/execute', { params: { path: { quoteId } }, body: { walletId: chosenWallet } }));
  const quote = useAction(async () => {
    // A new quote makes the last execution's outcome stale (until 2026-12-04 it stayed under the new quote's error; found by an audit).
    execute.reset();
    return api.post('/v1/trades/quotes', {
      body: { customerId: chosenCustomer, fromAssetId: fromAsset.trim(), toAssetId: toAsset.trim(), fromAmount: amount.trim(), feeAssetId: feeAsset.trim(), direction, side },
    });
  });
  const quoted = quote.result?.data;
  const executed = execute.result?.data;
  const customerOptions = (customers.data?.data ?? []).map((customer) => ({ value: customer.id, label: `${customerName(customer)} (${customer.email})` }));
  const walletOptions = (wallets.data ?? []).map((wallet) => ({ value: wallet.id, label: `${wallet.name} (${shortId(wallet.id)})` }));
  return (
    <Panel title="Quote and execute">
      <Status error={customers.error ?? wallets.error} />
      <Form label="Get a quote" onSubmit={() => void quote.run()}>
        <Select label="Customer" value={chosenCustomer} onValue={setCustomerId} options={customerOptions.length > 0 ? customerOptions : [{ value: '', label: 'No customer yet' }]} required />
        <Select label="Wallet" value={chosenWallet} onValue={setWalletId} options={walletOptions.length > 0 ? walletOptions : [{ value: '', label: 'No wallet yet' }]} />
        <Field label="From asset" value={fromAsset} onValue={setFromAsset} required maxLength={64} hint="a symbol (USD, BTC) or an asset id" />
        <Field label="To asset" value={toAsset} onValue={setToAsset} required maxLength={64} />
        <Select
          label="Direction"
          value={direction}
          onValue={(value) => setDirection(value === 'direct' ? 'direct' : 'reverse')}
          options={[
            { value: 'direct', label: 'direct (base to quote)' },
            { value: 'reverse', label: 'reverse (quote to base)' },
          ]}
        />
        <Select
          label="Side"
          value={side}
          onValue={(value) => setSide(value === 'sell' ? 'sell' : 'buy')}
          options={[
            { value: 'buy', label: 'buy (the base asset)' },
            { value: 'sell', label: 'sell (the base asset)' },
          ]}
        />
        <Field label="Amount" value={amount} onValue={setAmount} required inputMode="decimal" maxLength={40} hint="how much of the from asset to give up" />
        <Field label="Fee asset" value={feeAsset} onValue={setFeeAsset} required maxLength={64} hint="the from or the to asset" />
        <button type="submit" disabled={quote.busy || chosenCustomer === ''}>
          Get quote
        </button>
      </Form>
      <Outcome error={quote.error} traceId={quote.errorTraceId}>
        {quoted ? (
          <>
            Quote <Id value={quoted.quoteId} /> ready. <TraceLink traceId={quote.result?.traceId} />
          </>
        ) : null}
      </Outcome>
      {quoted ? (
        <>
          <Facts
            items={[
              ['Pair', `${quoted.pairSymbol} (${quoted.direction}, ${quoted.side})`],
              ['Status', <Badge value={quoted.status} />],
              ['You give', <Amount amount={quoted.totalPrice} asset={quoted.fromAsset} />],
              ['Exchanged', <Amount amount={quoted.amountToSpend} asset={quoted.fromAsset} />],
              ['Price per unit', quoted.pricePerUnit],
              ['Fee', <>
                <Amount amount={quoted.feeAmount} asset={quoted.feeAsset} /> (rate {quoted.fee})
              </>],
              ['Total to receive', <Amount amount={quoted.totalToReceive} asset={quoted.toAsset} />],
              ['Expires', <Time value={quoted.expiresAt} />],
            ]}
          />
          <p class="muted">{quoted.disclaimer}</p>
          <button type="button" onClick={() => void execute.run(quoted.quoteId)} disabled={execute.busy || chosenWallet === '' || executed?.quoteId === quoted.quoteId}>
            Execute
          </button>
        </>
      ) : null}
      <Outcome error={execute.error} traceId={execute.errorTraceId}>
        {executed ? (
          <>
            Trade <Badge value={executed.status} />: {executed.totalSourceAmount ?? '—'} {executed.sourceAsset} → {executed.totalTargetAmount ?? '—'} {executed.targetAsset}, fee {executed.totalFeeAmount ?? '—'} {executed.feeAsset}
            {executed.filledPrice ? ` at ${executed.filledPrice}` : ''}.{executed.error ? ` ${executed.error.message} (${executed.error.code})` : ''}{' '}
            <Link to={['transactions', undefined, { walletId: executed.walletId }]}>Wallet transactions</Link> <TraceLink traceId={execute.result?.traceId} />
          </>
        ) : null}
      </Outcome>
    </Panel>
  );
}

function SandboxPrices() {
  const { api } = useSession();
  const prices = useLoad(() => api.get('/v1/sandbox/prices'), [], pollMs);
  const [symbol, setSymbol] = useState('');
  const [price, setPrice] = useState('');
  const rows = prices.data?.data ?? [];
  const chosen = symbol || rows[0]?.symbol || '';
  const set = useAction(async () => {
    const answer = await api.put('/v1/sandbox/prices/{symbol}', { params: { path: { symbol: chosen } }, body: { price: price.trim() } });
    prices.reload();
    return answer;
  });
  return (
    <Panel title="Sandbox prices">
      <Status loading={prices.loading && !prices.data} error={prices.error} empty={prices.data !== undefined && rows.length === 0} emptyText="No prices." />
      {rows.length > 0 ? (
        <Table label="Sandbox prices" columns={['Symbol', 'Price (USD)', 'Updated']}>
          {rows.map((row) => (
            <tr key={row.symbol}>
              <td>{row.symbol}</td>
              <td class="num">{row.price}</td>
              <td>
                <Time value={row.updatedAt} />
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <Form label="Set a sandbox price" onSubmit={() => void set.run()}>
        <Select label="Symbol" value={chosen} onValue={setSymbol} options={rows.length > 0 ? rows.map((row) => row.symbol) : [{ value: '', label: 'No price yet' }]} />
        <Field label="New price (USD)" value={price} onValue={setPrice} required inputMode="decimal" maxLength={40} placeholder="65000.00" />
        <button type="submit" disabled={set.busy || chosen === '' || price.trim() === ''}>
          Set price
        </button>
      </Form>
      <Outcome error={set.error} traceId={set.errorTraceId}>
        {set.result ? (
          <>
            {set.result.data.symbol} is now {set.result.data.price}. <TraceLink traceId={set.result.traceId} />
          </>
        ) : null}
      </Outcome>
    </Panel>
  );
}

export function TradesPage() {
  const { sandbox } = useSession();
  return (
    <Page title="Trades">
      <AssetPairs />
      <QuoteAndExecute />
      {sandbox ? <SandboxPrices /> : null}
    </Page>
  );
}
