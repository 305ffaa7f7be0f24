import { useState } from 'preact/hooks';
import { firstItems, listPageSize, type Schema } from '../api.js';
import { moreRowsPending, pollMs, useAction, useLoad } from '../hooks.js';
import { navigate, href } from '../router.js';
import { useSession } from '../session.js';
import { Badge, Facts, Field, Form, Id, Json, Link, More, Outcome, Page, Panel, Select, Status, Time, TraceLink, Table } from '../components/ui.js';

type Customer = Schema<'Customer'>;

export function customerName(customer: Customer): string {
  if (customer.kyc) return `${customer.kyc.firstName} ${customer.kyc.lastName}`.trim();
  if (customer.kyb?.legalName) return customer.kyb.legalName;
  return customer.email;
}

export function CustomersPage() {
  const { api } = useSession();
  const [email, setEmail] = useState('');
  const [type, setType] = useState('');
  const [search, setSearch] = useState<{ email: string; type: string }>({ email: '', type: '' });
  const [shown, setShown] = useState(listPageSize);
  const customers = useLoad(
    () =>
      firstItems(shown, (limit, startAfterId) =>
        api.get('/v1/customers', {
          params: { query: { limit, ...(startAfterId ? { startAfterId } : {}), ...(search.email ? { email: search.email } : {}), ...(search.type ? { type: search.type as 'PRIVATE' | 'LEGAL' } : {}) } },
        }),
      ),
    [search.email, search.type, shown],
    pollMs,
    // Cleared when the search changes, kept while "Load more" reads the longer list.
    JSON.stringify(search),
  );
  const rows = customers.data?.items ?? [];
  const searching = search.email !== '' || search.type !== '';
  return (
    <Page title="Customers" actions={<a href="#/customers/new" class="button">New customer</a>}>
      <Form
        label="Search customers"
        class="filters"
        onSubmit={() => {
          setShown(listPageSize);
          setSearch({ email: email.trim(), type });
        }}
      >
        <Field label="Email" value={email} onValue={setEmail} type="search" placeholder="ada@example.com" />
        <Select label="Type" value={type} onValue={setType} options={['', 'PRIVATE', 'LEGAL']} />
        <button type="submit">Search</button>
      </Form>
      <Status loading={customers.loading && !customers.data} error={customers.error} empty={customers.data !== undefined && rows.length === 0} emptyText={searching ? 'No customer matches the search.' : 'No customers yet: create one.'} />
      {rows.length > 0 ? (
        <Table label="Customers" columns={['Name', 'Email', 'Type', 'Created', 'Id']}>
            {rows.map((customer) => (
              <tr key={customer.id}>
                <td>
                  <Link to={['customers', customer.id]}>{customerName(customer)}</Link>
                </td>
                <td>{customer.email}</td>
                <td>{customer.type}</td>
                <td>
                  <Time value={customer.createdAt} />
                </td>
                <td>
                  <Id value={customer.id} />
                </td>
              </tr>
            ))}
          </Table>
      ) : null}
      {customers.data ? (
        <p class="muted">
          {rows.length} of {customers.data.total} customer(s) shown. <More hasMore={customers.data.hasMore} onMore={() => setShown(shown + listPageSize)} busy={moreRowsPending(customers, shown)} />
        </p>
      ) : null}
    </Page>
  );
}

const sampleAddress = { street1: '350 Fifth Avenue', cityCounty: 'New York', stateRegion: 'NY', zip: '10118', countryCode: 'US' };

/** A new individual customer with the fields a sandbox KYC needs; the rest are filled with sample values. */
function NewCustomer() {
  const { api } = useSession();
  const [firstName, setFirstName] = useState('Ada');
  const [lastName, setLastName] = useState('Instant');
  const [email, setEmail] = useState(() => `customer.${Math.floor(Math.random() * 1e6)}@example.com`);
  const [startKyc, setStartKyc] = useState(true);
  const create = useAction(async () => {
    const { data: customer } = await api.post('/v1/customers/individual', {
      body: {
        email,
        phoneNumber: '212 555 0123',
        phoneCountryCode: '+1',
        kyc: { firstName, lastName, birthDate: '1990-12-10', nationality: 'US', documentSsn: '123-45-6789', mainAddress: sampleAddress, taxIdCountry: 'US', occupation: '15' },
      },
    });
    if (startKyc) await api.post('/v1/compliance/kyc', { body: { customerId: customer.id } });
    navigate(href('customers', customer.id));
    return customer;
  });
  return (
    <Page title="New customer">
      <p>
        An individual with sample address, phone and SSN. In the sandbox the last name decides KYC: <code>Instant</code> is approved at once; see docs/sandbox.md for the
        other magic values.
      </p>
      <Form label="New customer" onSubmit={() => void create.run()}>
        <Field label="First name" value={firstName} onValue={setFirstName} required maxLength={100} />
        <Field label="Last name" value={lastName} onValue={setLastName} required maxLength={100} />
        <Field label="Email" value={email} onValue={setEmail} type="email" required maxLength={200} />
        <div class="field checkbox">
          <input id="start-kyc" type="checkbox" checked={startKyc} onChange={(event) => setStartKyc(event.currentTarget.checked)} />
          <label for="start-kyc">Start KYC right away</label>
        </div>
        <button type="submit" disabled={create.busy}>
          Create customer
        </button>
      </Form>
      <Outcome error={create.error} traceId={create.errorTraceId} />
    </Page>
  );
}

export function CustomerPage(props: { id: string }) {
  if (props.id === 'new') return <NewCustomer />;
  return <CustomerDetail id={props.id} />;
}

function CustomerDetail(props: { id: string }) {
  const { api, sandbox } = useSession();
  const customer = useLoad(() => api.get('/v1/customers/{id}', { params: { path: { id: props.id } } }), [props.id], pollMs);
  const data = customer.data?.data;
  return (
    <Page title={data ? customerName(data) : 'Customer'}>
      <Status loading={customer.loading && !data} error={customer.error} />
      {data ? (
        <>
          <Panel title="Profile">
            <Facts
              items={[
                ['Id', <Id value={data.id} />],
                ['Type', data.type],
                ['Email', data.email],
                ['Phone', data.phoneNumber === null ? null : `+${data.phoneCountryCode} ${data.phoneNumber}`],
                ['Onboarding', <Id value={data.onboardingId} />],
                ['Created', <Time value={data.createdAt} />],
              ]}
            />
            <Json value={data} label="Show the customer as the API returns it" />
          </Panel>
          <Compliance customer={data} sandbox={sandbox} onChange={customer.reload} />
          <Panel title="Portfolios and wallets">
            {data.portfolios.length === 0 ? <p class="muted">No portfolio yet: KYC approval creates the default one with its wallet.</p> : null}
            <ul class="plain">
              {data.portfolios.map((portfolio) => (
                <li key={portfolio.id}>
                  {portfolio.name} {portfolio.default ? <span class="muted">(default)</span> : null}:{' '}
                  {portfolio.wallets.length === 0
                    ? 'no wallet'
                    : portfolio.wallets.map((walletId) => (
                        <Link key={walletId} to={['wallets', walletId]} class="wallet-link">
                          wallet <Id value={walletId} />
                        </Link>
                      ))}
                </li>
              ))}
            </ul>
          </Panel>
        </>
      ) : null}
    </Page>
  );
}

type ComplianceStatus = Schema<'ComplianceStatus'>;

/**
 * The start button the compliance state allows (docs/compliance.md): a first start, a new start once
 * the next action asks for one (an expired onboarding), or a re-run after a system error; none while
 * it runs or once it is decided. The status of a customer who never started answers 200 with no
 * onboarding and the next action START_KYC: a first start, not "again" (until 2026-12-04 it read
 * "Start KYC again"; found by an audit).
 */
function startAction(data: ComplianceStatus | Schema<'BusinessComplianceStatus'> | null | undefined, business: boolean, onboardingId: string | null | undefined): { label: string; rerun: boolean } | null {
  if (data === undefined) return null;
  const started = data !== null && ('businessOnboardingId' in data ? data.businessOnboardingId : data.onboardingId) !== null;
  if (data === null || ((data.nextAction === 'START_KYC' || data.nextAction === 'START_KYB') && !started)) return { label: business ? 'Start KYB' : 'Start KYC', rerun: false };
  if (data.nextAction === 'START_KYC' || data.nextAction === 'START_KYB') return { label: business ? 'Start KYB again' : 'Start KYC again', rerun: false };
  if (data.nextAction === 'RERUN_KYC' && !business && onboardingId) return { label: 'Re-run KYC', rerun: true };
  return null;
}

function Compliance(props: { customer: Customer; sandbox: boolean; onChange: () => void }) {
  const { api } = useSession();
  const business = props.customer.type === 'LEGAL';
  const status = useLoad(
    async (): Promise<ComplianceStatus | Schema<'BusinessComplianceStatus'> | null> => {
      try {
        const path = { customerId: props.customer.id };
        return business
          ? (await api.get('/v1/compliance/business/status/{customerId}', { params: { path } })).data
          : (await api.get('/v1/compliance/status/{customerId}', { params: { path } })).data;
      } catch (error) {
        if ((error as { status?: number }).status === 404) return null;
        throw error;
      }
    },
    [props.customer.id, props.customer.updatedAt],
    pollMs,
  );
  const start = useAction(async (rerun: boolean) => {
    const onboardingId = props.customer.onboardingId;
    const started =
      rerun && onboardingId
        ? await api.post('/v1/compliance/kyc/{onboardingId}/rerun', { params: { path: { onboardingId } } })
        : business
          ? await api.post('/v1/compliance/kyb', { body: { customerId: props.customer.id } })
          : await api.post('/v1/compliance/kyc', { body: { customerId: props.customer.id } });
    status.reload();
    props.onChange();
    return started;
  });
  const [outcome, setOutcome] = useState('APPROVED');
  const decide = useAction(async () => {
    const onboardingId = props.customer.onboardingId;
    if (!onboardingId) throw new Error('This customer has no onboarding yet: start KYC first.');
    const answer = await api.post('/v1/sandbox/onboardings/{onboardingId}/outcome', {
      params: { path: { onboardingId } },
      body: { outcome: outcome as 'APPROVED' },
    });
    status.reload();
    props.onChange();
    return answer;
  });
  const data = status.data;
  const action = startAction(data, business, props.customer.onboardingId);
  return (
    <Panel title={business ? 'KYB' : 'KYC'}>
      <Status loading={status.loading && status.data === undefined} error={status.error} />
      {data === null ? (
        <p class="muted">Not started.</p>
      ) : data ? (
        <>
          <Facts
            items={[
              ['Onboarding status', <Badge value={data.onboardingStatus} />],
              ['Verification', <Badge value={data.verificationStatus} />],
              ['Compliant', data.isCompliant ? 'yes' : 'no'],
              ['Next action', data.nextAction ?? 'none'],
            ]}
          />
          <Table label="Compliance checks" columns={['Check', 'Passed', 'Required', 'Suggested action']}>
              {data.checks.map((check) => (
                <tr key={check.name}>
                  <td>{check.name}</td>
                  <td>{check.passed ? <Badge value="PASSED" /> : <span class="badge bad">NOT PASSED</span>}</td>
                  <td>{check.required ? 'required' : 'optional'}</td>
                  <td>{check.suggestedAction ?? '—'}</td>
                </tr>
              ))}
            </Table>
        </>
      ) : null}
      {/* Only what the API allows now (until 2026-12-04 a "Start again" showed whatever the state, and
          answered 409 while KYC ran or once it was approved; found by an audit). */}
      {action ? (
        <div class="actions">
          <button
            type="button"
            onClick={() => {
              decide.reset();
              void start.run(action.rerun);
            }}
            disabled={start.busy}
          >
            {action.label}
          </button>
        </div>
      ) : null}
      <Outcome error={start.error} traceId={start.errorTraceId}>{start.result ? <>Started. <TraceLink traceId={start.result.traceId} /></> : null}</Outcome>
      {props.sandbox && props.customer.onboardingId ? (
        <Form
          label="Simulate the verification outcome"
          class="filters"
          onSubmit={() => {
            start.reset();
            void decide.run();
          }}
        >
          <Select label="Outcome" value={outcome} onValue={setOutcome} options={['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR']} />
          <button type="submit" disabled={decide.busy}>
            Apply outcome
          </button>
        </Form>
      ) : null}
      <Outcome error={decide.error} traceId={decide.errorTraceId}>{decide.result ? <>Outcome applied. <TraceLink traceId={decide.result.traceId} /></> : null}</Outcome>
    </Panel>
  );
}
