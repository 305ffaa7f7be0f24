import { useState } from 'preact/hooks';
import { pollEvery, pollMs, useAction, useLoad, usePagedList } from '../hooks.js';
import { useSession } from '../session.js';
import { Badge, Facts, Field, Form, Id, Link, NewestShown, Outcome, Page, Panel, retryActionOf, SelectFilter, Shown, Status, Time, TraceLink, Table } from '../components/ui.js';

export function WebhooksPage() {
  const { api } = useSession();
  const list = usePagedList((limit, startAfterId) => api.get('/v1/webhooks', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}) } } }), [], pollMs);
  const [name, setName] = useState('my receiver');
  const [url, setUrl] = useState('http://127.0.0.1:9000/hooks');
  const [types, setTypes] = useState('*');
  const create = useAction(async () => {
    const answer = await api.post('/v1/webhooks', {
      body: { name, url, subscribedEventTypes: types.split(',').map((type) => type.trim()).filter(Boolean) as never },
    });
    list.reload();
    return answer.data;
  });
  const rows = list.data?.items ?? [];
  return (
    <Page title="Webhooks">
      <Status loading={list.loading && !list.data} error={list.error} empty={list.data !== undefined && rows.length === 0} emptyText="No subscriptions yet." />
      {rows.length > 0 ? (
        <Table label="Webhook subscriptions" columns={['Name', 'URL', 'Events', 'Status', 'Failing since']}>
            {rows.map((webhook) => (
              <tr key={webhook.id}>
                <td>
                  <Link to={['webhooks', webhook.id]}>{webhook.name}</Link>
                </td>
                <td>
                  <code>{webhook.url}</code>
                </td>
                <td>{webhook.subscribedEventTypes.join(', ')}</td>
                <td>
                  <Badge value={webhook.status} />
                </td>
                <td>
                  <Time value={webhook.failingSince} />
                </td>
              </tr>
            ))}
          </Table>
      ) : null}
      <Shown list={list.data} noun="subscription(s)" onMore={list.more} busy={list.loadingMore} />
      <Panel title="New subscription">
        <Form label="New subscription" onSubmit={() => void create.run()}>
          <Field label="Name" value={name} onValue={setName} required maxLength={100} />
          <Field label="URL" value={url} onValue={setUrl} type="url" required maxLength={2000} />
          <Field label="Event types" value={types} onValue={setTypes} hint="Comma-separated, or * for every event." required />
          <button type="submit" disabled={create.busy}>
            Subscribe
          </button>
        </Form>
        <Outcome error={create.error} traceId={create.errorTraceId}>
          {create.result ? (
            <>
              Subscribed. Signing secret (shown once): <code>{create.result.secret}</code>
            </>
          ) : null}
        </Outcome>
      </Panel>
    </Page>
  );
}

export function WebhookPage(props: { id: string }) {
  const { api } = useSession();
  const webhook = useLoad(() => api.get('/v1/webhooks/{id}', { params: { path: { id: props.id } } }), [props.id], pollMs);
  const [applied, setApplied] = useState('');
  const deliveries = useLoad(
    () => api.get('/v1/webhooks/{id}/deliveries', { params: { path: { id: props.id }, query: { limit: 50, ...(applied ? { status: applied as 'FAILED' } : {}) } } }),
    [props.id, applied],
    pollEvery(3000),
  );
  const retry = useAction(async (deliveryId: string) => {
    const answer = await api.post('/v1/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } });
    deliveries.reload();
    return answer;
  });
  const test = useAction(async () => {
    const answer = await api.post('/v1/webhooks/{id}/test', { params: { path: { id: props.id } } });
    deliveries.reload();
    return answer;
  });
  // Only the last action's outcome is shown (until 2026-12-04 "Test event queued." stayed beside a
  // later retry's outcome; found by an audit).
  const sendTest = () => {
    retry.reset();
    void test.run();
  };
  const runRetry = (deliveryId: string) => {
    test.reset();
    void retry.run(deliveryId);
  };
  const data = webhook.data?.data;
  const rows = deliveries.data?.data ?? [];
  return (
    <Page title={data ? `Webhook ${data.name}` : 'Webhook'}>
      <Status loading={webhook.loading && !data} error={webhook.error} />
      {data ? (
        <Panel title="Subscription">
          <Facts
            items={[
              ['Id', <Id value={data.id} />],
              ['URL', <code>{data.url}</code>],
              ['Events', data.subscribedEventTypes.join(', ')],
              ['Status', <Badge value={data.status} />],
              ['Disabled because', data.disabledReason],
              ['Failing since', <Time value={data.failingSince} />],
            ]}
          />
          <button type="button" class="secondary" onClick={sendTest} disabled={test.busy}>
            Send a test event
          </button>
          <Outcome error={test.error} traceId={test.errorTraceId}>{test.result ? 'Test event queued.' : null}</Outcome>
        </Panel>
      ) : null}
      <Panel title="Deliveries">
        <SelectFilter formLabel="Filter deliveries" label="Delivery status" options={['PENDING', 'DELIVERED', 'FAILED', 'CANCELLED']} onApply={setApplied} />
        <Status loading={deliveries.loading && !deliveries.data} error={deliveries.error} empty={deliveries.data !== undefined && rows.length === 0} emptyText="No deliveries yet." />
        <Outcome error={retry.error} traceId={retry.errorTraceId}>{retry.result ? 'Retry queued: the delivery worker sends it again now.' : null}</Outcome>
        {rows.length > 0 ? (
          <Table label="Deliveries" columns={['Created', 'Event', 'Status', 'Attempts', 'Last answer', 'Next attempt', 'Actions']}>
              {rows.map((delivery) => {
                const last = delivery.attempts[delivery.attempts.length - 1];
                return (
                  <tr key={delivery.id} data-delivery-id={delivery.id}>
                    <td>
                      <Time value={delivery.createdAt} />
                    </td>
                    <td>
                      {delivery.eventType} {delivery.test ? <span class="muted">(test)</span> : null}
                    </td>
                    <td>
                      <Badge value={delivery.status} />
                    </td>
                    <td>
                      <details>
                        <summary>{delivery.attemptCount} attempt(s)</summary>
                        <ol class="attempts">
                          {delivery.attempts.map((attempt) => (
                            <li key={attempt.attempt}>
                              <Time value={attempt.attemptedAt} />: {attempt.succeeded ? 'succeeded' : 'failed'}
                              {attempt.httpStatus !== null ? `, HTTP ${attempt.httpStatus}` : ''}
                              {attempt.latencyMs !== null ? `, ${attempt.latencyMs} ms` : ''}
                              {attempt.error ? `, ${attempt.error}` : ''}
                              {attempt.responseBody ? <pre class="response">{attempt.responseBody}</pre> : null}
                            </li>
                          ))}
                        </ol>
                      </details>
                    </td>
                    <td>{last ? `${last.httpStatus ?? 'no answer'}${last.latencyMs !== null ? `, ${last.latencyMs} ms` : ''}` : '—'}</td>
                    <td>
                      <Time value={delivery.status === 'PENDING' ? delivery.nextAttemptAt : null} />
                    </td>
                    <td>
                      <div class="actions">
                        <button type="button" onClick={() => runRetry(delivery.id)} disabled={retry.busy} aria-label={`${retryActionOf(delivery.status)} delivery of ${delivery.eventType}`}>
                          {retryActionOf(delivery.status)}
                        </button>
                        <EventTrace eventId={delivery.eventId} test={delivery.test} />
                      </div>
                    </td>
                  </tr>
                );
              })}
            </Table>
        ) : null}
        {deliveries.data ? <NewestShown shown={rows.length} of={deliveries.data.pagination} noun="deliveries" /> : null}
      </Panel>
    </Page>
  );
}

/** A link to the trace of the event a delivery carries (test deliveries have no event). */
function EventTrace(props: { eventId: string; test: boolean }) {
  const { api } = useSession();
  const [traceId, setTraceId] = useState<string | undefined>(undefined);
  if (props.test) return null;
  if (traceId) return <TraceLink traceId={traceId}>Trace</TraceLink>;
  return (
    <button
      type="button"
      class="secondary"
      onClick={() =>
        void api.get('/v1/events/{id}', { params: { path: { id: props.eventId } } }).then((event) => {
          const found = event.data.data.traceId;
          if (typeof found === 'string') {
            setTraceId(found);
            window.location.hash = `#/traces/${encodeURIComponent(found)}`;
          }
        })
      }
    >
      Trace
    </button>
  );
}
