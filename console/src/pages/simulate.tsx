import { useEffect, useState } from 'preact/hooks';
import type { OpenBaaS, Schema } from '../api.js';
import { pollMs, type Loaded, useAction, useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { Field, Form, Json, Outcome, Page, Panel, Select, shortId, Status, TraceLink } from '../components/ui.js';
import { clockMovedEvent } from './clock.js';

/** What a simulation answered: its trace (the timeline of what it caused) and its body. */
function Answer(props: { result: { message: string; traceId: string; data?: unknown } | undefined; error: string | undefined; errorTraceId: string | undefined }) {
  return (
    <Outcome error={props.error} traceId={props.errorTraceId}>
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

/** What a select of wallets or cards offers, which item it means, and why none when none. */
interface Choice<T> {
  value: string;
  options: { value: string; label: string }[];
  onValue: (value: string) => void;
  chosen: T | undefined;
  /** Why the item the link names cannot be used (shown as an alert, and the answer to a submit). */
  problem: string | undefined;
}

/**
 * The choice of a select fed by a list (the newest 100, read again every few seconds) and by the
 * item the link names (`?walletId=`, `?cardId=`), which is read by its id so that one outside the
 * list is still the one used. Until that item is read, or when it cannot be used, nothing is
 * chosen: never another item. Until 2026-12-04 the first item of the list was taken instead, so a
 * deposit from an old wallet's page went to the newest wallet (found by an audit).
 */
function useChoice<T extends { id: string }>(
  list: Loaded<T[]>,
  named: Loaded<T | null>,
  namedId: string | undefined,
  describe: { noun: string; label: (item: T) => string; unusable: (item: T) => string | undefined; empty: string },
): Choice<T> {
  const [picked, setPicked] = useState(namedId ?? '');
  const items = list.data ?? [];
  const namedItem = named.data && named.data.id === namedId ? named.data : undefined;
  const all = namedItem && !describe.unusable(namedItem) && !items.some((item) => item.id === namedItem.id) ? [namedItem, ...items] : items;
  const chosen = picked === '' ? all[0] : all.find((item) => item.id === picked);
  // The first item shown is kept once the list has loaded, so polling that puts a newer item
  // first does not change the selection (usePinnedChoice in hooks.ts says why).
  const firstId = all[0]?.id;
  useEffect(() => {
    if (picked === '' && firstId !== undefined) setPicked(firstId);
  }, [picked, firstId]);
  let problem: string | undefined;
  if (!chosen && picked !== '' && picked === namedId && !list.error) {
    if (named.error) problem = `The ${describe.noun} in the link (${namedId}) cannot be read: ${named.error}`;
    else if (namedItem) problem = describe.unusable(namedItem);
  }
  const options = all.map((item) => ({ value: item.id, label: describe.label(item) }));
  if (picked !== '' && !chosen) {
    const reading = named.loading && !named.error && !namedItem;
    options.unshift({ value: picked, label: reading ? `Reading the ${describe.noun} in the link…` : `The ${describe.noun} in the link (${shortId(picked)}) cannot be used` });
  }
  if (options.length === 0) {
    options.push({ value: '', label: list.error ? `The ${describe.noun}s could not be read` : list.data ? describe.empty : `Loading ${describe.noun}s…` });
  }
  return { value: picked !== '' ? picked : (chosen?.id ?? ''), options, onValue: setPicked, chosen, problem };
}

/**
 * Why no item is chosen, as the answer to a submit. The linked item's problem is shown above the
 * form already (ChoiceStatus): the answer says what to do instead of repeating it (until
 * 2026-12-06 the same alert showed twice).
 */
function noChoice(choice: Choice<unknown>, list: Loaded<unknown>, otherwise: string): Error {
  if (choice.problem) return new Error(`Nothing was sent: the one in the link cannot be used (above). ${otherwise}`);
  if (list.error) return new Error(`The list could not be read (${list.error}): try again once it loads.`);
  return new Error(otherwise);
}

/** The list's error (role alert, as on every page) and the reason the named item cannot be used. */
function ChoiceStatus(props: { list: Loaded<unknown>; choice: Choice<unknown> }) {
  return (
    <>
      <Status error={props.list.error} />
      {props.choice.problem ? (
        <p class="error" role="alert">
          {props.choice.problem}
        </p>
      ) : null}
    </>
  );
}

type Wallet = Schema<'Wallet'>;

/** How many wallets with an account number the deposit's select offers, and how many wallets it reads at most to find them. */
const depositWalletsOffered = 100;
const depositWalletsSearched = 1000;

/**
 * The newest `depositWalletsOffered` wallets that have a virtual account number (a bank deposit
 * needs one), read from the newest wallets in pages of 200 until that many are found, the list
 * ends, or `depositWalletsSearched` wallets were read (GET /v1/wallets has no filter for an
 * account number): most clients need one request. `searchedAll` says whether every wallet was
 * looked at. Until 2026-12-07 only the newest 100 wallets were read, so when none of them had an
 * account number (customers created without KYC) the select offered nothing though older wallets
 * had one (found by an audit).
 */
async function walletsWithAccount(api: OpenBaaS): Promise<{ wallets: Wallet[]; searchedAll: boolean }> {
  const wallets: Wallet[] = [];
  let read = 0;
  let startAfterId: string | undefined;
  for (;;) {
    const page = await api.get('/v1/wallets', { params: { query: { limit: 200, ...(startAfterId ? { startAfterId } : {}) } } });
    read += page.data.length;
    wallets.push(...page.data.filter((wallet) => wallet.virtualAccount?.virtualAccountNumber));
    const more = page.pagination.hasMoreResults && page.pagination.nextStartAfterId !== null;
    if (!more) return { wallets: wallets.slice(0, depositWalletsOffered), searchedAll: true };
    if (wallets.length >= depositWalletsOffered || read >= depositWalletsSearched) return { wallets: wallets.slice(0, depositWalletsOffered), searchedAll: false };
    startAfterId = page.pagination.nextStartAfterId ?? undefined;
  }
}

function BankDeposit(props: { walletId: string | undefined }) {
  const { api } = useSession();
  const found = useLoad(() => walletsWithAccount(api), [], pollMs);
  const wallets: Loaded<Wallet[]> = { ...found, data: found.data?.wallets };
  const named = useLoad(async () => (props.walletId ? (await api.get('/v1/wallets/{id}', { params: { path: { id: props.walletId } } })).data : null), [props.walletId], pollMs);
  const choice = useChoice<Wallet>(wallets, named, props.walletId, {
    noun: 'wallet',
    label: (wallet) => `${wallet.name}, account ${wallet.virtualAccount?.virtualAccountNumber ?? ''}`,
    unusable: (wallet) =>
      wallet.virtualAccount?.virtualAccountNumber ? undefined : `The wallet in the link (${wallet.name}, ${wallet.id}) has no virtual account number, so no bank deposit can reach it.`,
    empty: found.data?.searchedAll === false ? `No wallet with an account among the newest ${depositWalletsSearched} wallets` : 'No wallet with an account yet',
  });
  const [amount, setAmount] = useState('100.00');
  const [network, setNetwork] = useState('ACH');
  const [name, setName] = useState('Charles Babbage');
  const deposit = useAction(async () => {
    const accountNumber = choice.chosen?.virtualAccount?.virtualAccountNumber;
    if (!accountNumber) throw noChoice(choice, wallets, 'Choose a wallet with a virtual account number (a KYC approval gives the first wallet one).');
    return api.post('/v1/sandbox/bank-deposits', {
      body: { accountNumber, amount, asset: 'USD', network: network as 'ACH', counterparty: { name, accountNumber: '987654321', routingNumber: '021000021' } },
    });
  });
  return (
    <Panel title="Bank deposit">
      <p class="muted">Money arrives on a wallet's virtual account; it is PENDING until the sandbox rail settles it (advance the clock, or settle it on the Bank transfers page).</p>
      <ChoiceStatus list={wallets} choice={choice} />
      <Form label="Bank deposit" onSubmit={() => void deposit.run()}>
        <Select label="Wallet" value={choice.value} onValue={choice.onValue} options={choice.options} />
        <Field label="Amount (USD)" value={amount} onValue={setAmount} inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,2})?" required />
        <Select label="Network" value={network} onValue={setNetwork} options={['ACH', 'FEDWIRE']} />
        <Field label="Sender name" value={name} onValue={setName} required maxLength={100} />
        <button type="submit" disabled={deposit.busy}>
          Send deposit
        </button>
      </Form>
      <Answer result={deposit.result} error={deposit.error} errorTraceId={deposit.errorTraceId} />
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
      <Answer result={step.result} error={step.error} errorTraceId={step.errorTraceId} />
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
      <Answer result={apply.result} error={apply.error} errorTraceId={apply.errorTraceId} />
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
      <Answer result={advance.result} error={advance.error} errorTraceId={advance.errorTraceId} />
    </Panel>
  );
}

type Card = Schema<'Card'>;
type CardMessage = Schema<'SandboxCardMessageResult'>;

/**
 * The network's answer to a swipe in words: approved or declined, with the DE39 response code and,
 * for a decline, the name the card transaction record gives it. Until 2026-12-04 every answer read
 * "Card network message processed" in green, a decline too (found by an audit).
 */
function swipeVerdict(answer: CardMessage): { approved: boolean; text: string } {
  const code = answer.responseCode;
  const asset = answer.record?.asset ?? '';
  if (code === '00') return { approved: true, text: `Approved: response code 00, ${answer.approvedAmount.toFixed(2)} ${asset} approved.` };
  if (code === '10') return { approved: true, text: `Partially approved: response code 10, ${answer.approvedAmount.toFixed(2)} ${asset} approved.` };
  const reason = answer.record?.declineReason;
  return { approved: false, text: `Declined: response code ${code}${reason ? ` (${reason})` : ''}.` };
}

function SwipeAnswer(props: { result: { traceId: string; data: CardMessage } | undefined; error: string | undefined; errorTraceId: string | undefined }) {
  const verdict = props.result ? swipeVerdict(props.result.data) : undefined;
  return (
    <Outcome error={props.error} traceId={props.errorTraceId} tone={verdict && !verdict.approved ? 'declined' : undefined}>
      {props.result && verdict ? (
        <>
          <p>
            {verdict.text} <TraceLink traceId={props.result.traceId} />
          </p>
          <Json value={props.result.data} label="Show the answer" />
        </>
      ) : null}
    </Outcome>
  );
}

function cardLabel(card: Card): string {
  return `${card.cardType} •••• ${card.last4}${card.status === 'ACTIVE' ? '' : ` (${card.status})`}`;
}

function CardSwipe(props: { cardId: string | undefined }) {
  const { api } = useSession();
  const cards = useLoad(async () => (await api.get('/v1/cards', { params: { query: { limit: 100, status: 'ACTIVE' } } })).data, [], pollMs);
  const named = useLoad(async () => (props.cardId ? (await api.get('/v1/cards/{cardId}', { params: { path: { cardId: props.cardId } } })).data : null), [props.cardId], pollMs);
  // A card the link names is swiped whatever its status: the network answers a blocked card too.
  const choice = useChoice<Card>(cards, named, props.cardId, { noun: 'card', label: cardLabel, unusable: () => undefined, empty: 'No active card yet' });
  const [amount, setAmount] = useState('25.50');
  const [merchant, setMerchant] = useState('Corner Coffee');
  const swipe = useAction(async () => {
    const chosen = choice.chosen;
    if (!chosen) throw noChoice(choice, cards, 'No active card: create one with POST /v1/cards/debit and activate it.');
    const value = Number(amount);
    if (!/^\d+(\.\d{1,2})?$/.test(amount) || !Number.isFinite(value)) throw new Error('Amount: a number with at most 2 decimals.');
    return api.post('/v1/sandbox/cards/{cardId}/authorizations', {
      params: { path: { cardId: chosen.id } },
      body: { amount: value, merchant: { name: merchant, mcc: '5814', city: 'New York', state: 'NY', country: 'US' } },
    });
  });
  return (
    <Panel title="Card swipe">
      <ChoiceStatus list={cards} choice={choice} />
      <Form label="Card swipe" onSubmit={() => void swipe.run()}>
        <Select label="Card" value={choice.value} onValue={choice.onValue} options={choice.options} />
        <Field label="Amount" value={amount} onValue={setAmount} inputMode="decimal" required />
        <Field label="Merchant" value={merchant} onValue={setMerchant} maxLength={23} required />
        <button type="submit" disabled={swipe.busy}>
          Authorize
        </button>
      </Form>
      <SwipeAnswer result={swipe.result} error={swipe.error} errorTraceId={swipe.errorTraceId} />
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
      <Answer result={deposit.result} error={deposit.error} errorTraceId={deposit.errorTraceId} />
    </Panel>
  );
}

export function SimulatePage(props: { walletId: string | undefined; cardId: string | undefined }) {
  return (
    <Page title="Simulate">
      <p>What the outside world would do: money arriving, rails settling, a person finishing KYC, time passing, a card swiped at a shop, coins arriving on chain.</p>
      <div class="grid">
        {/* Keyed by the link's ids, so a link to another wallet or card starts the panel afresh. */}
        <BankDeposit key={props.walletId ?? ''} walletId={props.walletId} />
        <AdvanceClock />
        <BankOutcome />
        <KycOutcome />
        <CardSwipe key={props.cardId ?? ''} cardId={props.cardId} />
        <CryptoDeposit />
      </div>
    </Page>
  );
}
