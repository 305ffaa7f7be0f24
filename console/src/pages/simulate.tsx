import { useState } from 'preact/hooks';
import { useAction, useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { Field, Form, Json, Outcome, Page, Panel, Select, TraceLink } from '../components/ui.js';
import { clockMovedEvent } from './clock.js';

/** What a simulation answered: its trace (the timeline of what it caused) and its body. */
function Answer(props: { result: { message: string; traceId: string; data?: unknown } | undefined; error: string | undefined }) {
  return (
    <Outcome error={props.error}>
      {props.result ? (
        <>
          <p>
            {props.result.message}. <TraceLink traceId={props.result.traceId} />
          </p>
          <Json value={props.result.data} label="Show the answer" />
        </>
      ) : null}
    </Outcome>
  );
}

function BankDeposit(props: { walletId: string | undefined }) {
  const { api } = useSession();
  const wallets = useLoad(() => api.get('/v1/wallets', { params: { query: { limit: 100 } } }), []);
  const withAccount = (wallets.data?.data ?? []).filter((wallet) => wallet.virtualAccount?.virtualAccountNumber);
  const [walletId, setWalletId] = useState(props.walletId ?? '');
  const [amount, setAmount] = useState('100.00');
  const [network, setNetwork] = useState('ACH');
  const [name, setName] = useState('Charles Babbage');
  const chosen = withAccount.find((wallet) => wallet.id === walletId) ?? withAccount[0];
  const deposit = useAction(async () => {
    const accountNumber = chosen?.virtualAccount?.virtualAccountNumber;
    if (!accountNumber) throw new Error('Choose a wallet with a virtual account number (a KYC approval gives the first wallet one).');
    return api.post('/v1/sandbox/bank-deposits', {
      body: { accountNumber, amount, asset: 'USD', network: network as 'ACH', counterparty: { name, accountNumber: '987654321', routingNumber: '021000021' } },
    });
  });
  return (
    <Panel title="Bank deposit">
      <p class="muted">Money arrives on a wallet's virtual account; it is PENDING until the sandbox rail settles it (advance the clock, or settle it on the Bank transfers page).</p>
      <Form label="Bank deposit" onSubmit={() => void deposit.run()}>
        <Select
          label="Wallet"
          value={chosen?.id ?? ''}
          onValue={setWalletId}
          options={withAccount.length > 0 ? withAccount.map((wallet) => ({ value: wallet.id, label: `${wallet.name}, account ${wallet.virtualAccount?.virtualAccountNumber ?? ''}` })) : [{ value: '', label: 'No wallet with an account yet' }]}
        />
        <Field label="Amount (USD)" value={amount} onValue={setAmount} inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,2})?" required />
        <Select label="Network" value={network} onValue={setNetwork} options={['ACH', 'FEDWIRE']} />
        <Field label="Sender name" value={name} onValue={setName} required maxLength={100} />
        <button type="submit" disabled={deposit.busy}>
          Send deposit
        </button>
      </Form>
      <Answer result={deposit.result} error={deposit.error} />
    </Panel>
  );
}

function BankOutcome() {
  const { api } = useSession();
  const [id, setId] = useState('');
  const [returnCode, setReturnCode] = useState('R01');
  // One action for both, so the answer shown is the last one's, success or error alike.
  const step = useAction(async (action: 'settle' | 'fail') =>
    action === 'settle'
      ? api.post('/v1/sandbox/bank-transactions/{id}/settle', { params: { path: { id: id.trim() } } })
      : api.post('/v1/sandbox/bank-transactions/{id}/fail', { params: { path: { id: id.trim() } }, body: { returnCode } }),
  );
  return (
    <Panel title="Settle or fail a bank transfer">
      <Form label="Settle a bank transfer" onSubmit={() => void step.run('settle')}>
        <Field label="Bank transaction id" value={id} onValue={setId} required placeholder="the parent id of a PENDING deposit or withdrawal" />
        <Field label="Return code (for a failure)" value={returnCode} onValue={setReturnCode} maxLength={3} />
        <div class="actions">
          <button type="submit" disabled={step.busy}>
            Settle
          </button>
          <button type="button" class="secondary" onClick={() => void step.run('fail')} disabled={step.busy || id.trim() === ''}>
            Fail
          </button>
        </div>
      </Form>
      <Answer result={step.result} error={step.error} />
    </Panel>
  );
}

function KycOutcome() {
  const { api } = useSession();
  const [onboardingId, setOnboardingId] = useState('');
  const [outcome, setOutcome] = useState('APPROVED');
  const apply = useAction(async () =>
    api.post('/v1/sandbox/onboardings/{onboardingId}/outcome', { params: { path: { onboardingId: onboardingId.trim() } }, body: { outcome: outcome as 'APPROVED' } }),
  );
  return (
    <Panel title="KYC outcome">
      <Form label="KYC outcome" onSubmit={() => void apply.run()}>
        <Field label="Onboarding id" value={onboardingId} onValue={setOnboardingId} required />
        <Select label="Outcome" value={outcome} onValue={setOutcome} options={['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR']} />
        <button type="submit" disabled={apply.busy}>
          Apply outcome
        </button>
      </Form>
      <Answer result={apply.result} error={apply.error} />
    </Panel>
  );
}

function AdvanceClock() {
  const { api } = useSession();
  const [seconds, setSeconds] = useState('60');
  const advance = useAction(async () => {
    const value = Number(seconds);
    if (!Number.isInteger(value) || value <= 0) throw new Error('Seconds: a whole number above 0.');
    const answer = await api.post('/v1/sandbox/clock/advance', { body: { seconds: value } });
    window.dispatchEvent(new Event(clockMovedEvent));
    return answer;
  });
  return (
    <Panel title="Advance the clock">
      <p class="muted">Moves this client's sandbox clock forward and runs every timer that falls due: settlements, hold expiries, interest.</p>
      <Form label="Advance the clock" onSubmit={() => void advance.run()}>
        <Field label="Seconds" value={seconds} onValue={setSeconds} inputMode="numeric" pattern="[0-9]+" required />
        <button type="submit" disabled={advance.busy}>
          Advance
        </button>
      </Form>
      <Answer result={advance.result} error={advance.error} />
    </Panel>
  );
}

function CardSwipe() {
  const { api } = useSession();
  const cards = useLoad(() => api.get('/v1/cards', { params: { query: { limit: 100 } } }), []);
  const usable = (cards.data?.data ?? []).filter((card) => card.status === 'ACTIVE');
  const [cardId, setCardId] = useState('');
  const [amount, setAmount] = useState('25.50');
  const [merchant, setMerchant] = useState('Corner Coffee');
  const chosen = usable.find((card) => card.id === cardId) ?? usable[0];
  const swipe = useAction(async () => {
    if (!chosen) throw new Error('No active card: create one with POST /v1/cards/debit and activate it.');
    const value = Number(amount);
    if (!/^\d+(\.\d{1,2})?$/.test(amount) || !Number.isFinite(value)) throw new Error('Amount: a number with at most 2 decimals.');
    return api.post('/v1/sandbox/cards/{cardId}/authorizations', {
      params: { path: { cardId: chosen.id } },
      body: { amount: value, merchant: { name: merchant, mcc: '5814', city: 'New York', state: 'NY', country: 'US' } },
    });
  });
  return (
    <Panel title="Card swipe">
      <Form label="Card swipe" onSubmit={() => void swipe.run()}>
        <Select
          label="Card"
          value={chosen?.id ?? ''}
          onValue={setCardId}
          options={usable.length > 0 ? usable.map((card) => ({ value: card.id, label: `${card.cardType} •••• ${card.last4}` })) : [{ value: '', label: 'No active card yet' }]}
        />
        <Field label="Amount" value={amount} onValue={setAmount} inputMode="decimal" required />
        <Field label="Merchant" value={merchant} onValue={setMerchant} maxLength={23} required />
        <button type="submit" disabled={swipe.busy}>
          Authorize
        </button>
      </Form>
      <Answer result={swipe.result} error={swipe.error} />
    </Panel>
  );
}

function CryptoDeposit() {
  const { api } = useSession();
  const [address, setAddress] = useState('');
  const [asset, setAsset] = useState('USDC');
  const [amount, setAmount] = useState('50');
  const deposit = useAction(async () => api.post('/v1/sandbox/crypto-deposits', { body: { address: address.trim(), asset, amount } }));
  return (
    <Panel title="Crypto deposit">
      <Form label="Crypto deposit" onSubmit={() => void deposit.run()}>
        <Field label="Deposit address" value={address} onValue={setAddress} required hint="An address from POST /v1/digital/addresses." />
        <Select label="Asset" value={asset} onValue={setAsset} options={['BTC', 'ETH', 'USDC', 'USDT']} />
        <Field label="Amount" value={amount} onValue={setAmount} inputMode="decimal" required />
        <button type="submit" disabled={deposit.busy}>
          Send crypto deposit
        </button>
      </Form>
      <Answer result={deposit.result} error={deposit.error} />
    </Panel>
  );
}

export function SimulatePage(props: { walletId: string | undefined }) {
  return (
    <Page title="Simulate">
      <p>What the outside world would do: money arriving, rails settling, a person finishing KYC, time passing, a card swiped at a shop, coins arriving on chain.</p>
      <div class="grid">
        <BankDeposit walletId={props.walletId} />
        <AdvanceClock />
        <BankOutcome />
        <KycOutcome />
        <CardSwipe />
        <CryptoDeposit />
      </div>
    </Page>
  );
}
