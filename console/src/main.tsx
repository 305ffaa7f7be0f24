import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { clientFor, describeError, isNotFound, storedKey, storeKey } from './api.js';
import { Field, Form } from './components/ui.js';
import { useRoute } from './router.js';
import { SessionContext, useSession, type Session } from './session.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { BankTransfersPage } from './pages/bank-transfers.js';
import { CardPage, CardsPage } from './pages/cards.js';
import { CreditPage } from './pages/credit.js';
import { CustomerPage, CustomersPage } from './pages/customers.js';
import { EventsPage } from './pages/events.js';
import { SimulatePage } from './pages/simulate.js';
import { TracePage } from './pages/trace.js';
import { TradesPage } from './pages/trades.js';
import { TransactionsPage } from './pages/transactions.js';
import { WalletPage, WalletsPage } from './pages/wallets.js';
import { WebhookPage, WebhooksPage } from './pages/webhooks.js';
import { ClockBadge } from './pages/clock.js';

const sections: { section: string; label: string; sandboxOnly?: boolean }[] = [
  { section: 'customers', label: 'Customers' },
  { section: 'wallets', label: 'Wallets' },
  { section: 'transactions', label: 'Transactions' },
  { section: 'bank-transfers', label: 'Bank transfers' },
  { section: 'cards', label: 'Cards' },
  { section: 'credit', label: 'Credit lines' },
  { section: 'trades', label: 'Trades' },
  { section: 'webhooks', label: 'Webhooks' },
  { section: 'events', label: 'Events' },
  { section: 'traces', label: 'Traces' },
  { section: 'api-keys', label: 'API keys' },
  { section: 'simulate', label: 'Simulate', sandboxOnly: true },
];

/** Checks a key with a cheap read and learns whether the sandbox routes exist. */
async function openSession(key: string, signOut: () => void): Promise<Session> {
  const api = clientFor(key);
  await api.get('/v1/events', { params: { query: { limit: 1 } } });
  let sandbox = true;
  try {
    await api.get('/v1/sandbox/clock');
  } catch (error) {
    if (!isNotFound(error)) throw error;
    sandbox = false;
  }
  return { api, sandbox, signOut };
}

function SignIn(props: { onSignedIn: (session: Session) => void; signOut: () => void; initialError?: string | undefined }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(props.initialError);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const session = await openSession(key.trim(), props.signOut);
      storeKey(key.trim());
      props.onSignedIn(session);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <h1>OpenBaaS console</h1>
      <p>Paste the API key that <code>npm start</code> printed (<code>sk_test_…</code>). It stays in this tab's session storage and goes only to this server.</p>
      <Form label="Sign in" onSubmit={() => void submit()}>
        <Field label="API key" value={key} onValue={setKey} type="password" autoComplete="off" spellcheck={false} required placeholder="sk_test_…" />
        <button type="submit" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
      </Form>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </main>
  );
}

/**
 * In place of the Simulate page on a server without the sandbox routes (production): until
 * 2026-12-07 `#/simulate` still showed every simulation form there, each answered 404 (found by
 * an audit); the navigation already left it out.
 */
function NotOnProduction() {
  return (
    <section class="page">
      <h1 id="page-title" tabIndex={-1}>
        Simulate
      </h1>
      <p>
        Not available on a production server: the simulations use the sandbox routes (<code>/v1/sandbox/…</code>), which a production server does not have. <a href="#/customers">Customers</a>
      </p>
    </section>
  );
}

function CurrentPage() {
  const { section, id, query } = useRoute();
  const { sandbox } = useSession();
  // Move focus to the new page's heading, so keyboard and screen reader users start there.
  useEffect(() => {
    document.getElementById('page-title')?.focus({ preventScroll: false });
  }, [section, id]);
  switch (section) {
    case '':
    case 'customers':
      return id ? <CustomerPage id={id} /> : <CustomersPage />;
    case 'wallets':
      return id ? <WalletPage id={id} /> : <WalletsPage customerId={query.get('customerId') ?? undefined} />;
    case 'transactions':
      return <TransactionsPage key={query.get('walletId') ?? ''} walletId={query.get('walletId') ?? undefined} />;
    case 'bank-transfers':
      return <BankTransfersPage />;
    case 'cards':
      return id ? <CardPage id={id} /> : <CardsPage />;
    case 'credit':
      return <CreditPage />;
    case 'trades':
      return <TradesPage />;
    case 'webhooks':
      return id ? <WebhookPage id={id} /> : <WebhooksPage />;
    case 'events':
      return <EventsPage />;
    case 'traces':
      return <TracePage traceId={id} />;
    case 'api-keys':
      return <ApiKeysPage />;
    case 'simulate':
      if (!sandbox) return <NotOnProduction />;
      return <SimulatePage walletId={query.get('walletId') ?? undefined} cardId={query.get('cardId') ?? undefined} />;
    default:
      return (
        <section class="page">
          <h1 id="page-title" tabIndex={-1}>
            Not found
          </h1>
          <p>
            There is no page <code>{section}</code>. <a href="#/customers">Customers</a>
          </p>
        </section>
      );
  }
}

/** The skip link: focus the page's heading (or main) without touching the route in the fragment. */
function skipToContent(event: MouseEvent): void {
  event.preventDefault();
  document.getElementById('page-title')?.focus({ preventScroll: false });
}

function Shell(props: { session: Session }) {
  const { section } = useRoute();
  const current = section === '' ? 'customers' : section;
  return (
    <SessionContext.Provider value={props.session}>
      {/* Routes live in the fragment, so "#main" would open a page called main (found by an audit,
          2026-12-04): the link moves the focus to the page's heading instead. */}
      <a class="skip-link" href="#main" onClick={skipToContent}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">OpenBaaS console</span>
        {props.session.sandbox ? <ClockBadge /> : <span class="badge bad">production</span>}
        <button type="button" class="secondary" onClick={props.session.signOut}>
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav aria-label="Main">
          <ul>
            {sections
              .filter((entry) => props.session.sandbox || !entry.sandboxOnly)
              .map((entry) => (
                <li key={entry.section}>
                  <a href={`#/${entry.section}`} aria-current={current === entry.section ? 'page' : undefined}>
                    {entry.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <main id="main">
          <CurrentPage />
        </main>
      </div>
    </SessionContext.Provider>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [restoreError, setRestoreError] = useState<string | undefined>(undefined);
  const signOut = () => {
    storeKey(null);
    setSession(undefined);
  };
  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    openSession(key, signOut).then(
      (opened) => {
        setSession(opened);
        setRestoring(false);
      },
      (error: unknown) => {
        storeKey(null);
        setRestoreError(describeError(error));
        setRestoring(false);
      },
    );
  }, []);
  if (restoring) return <p class="loading">Signing in…</p>;
  if (!session) return <SignIn onSignedIn={setSession} signOut={signOut} initialError={restoreError} />;
  return <Shell session={session} />;
}

const root = document.getElementById('app');
if (root) {
  root.replaceChildren();
  render(<App />, root);
}
