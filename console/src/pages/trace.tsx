import { useState } from 'preact/hooks';
import type { ResponseBody } from '../../../packages/sdk/src/client.js';
import { pollEvery, useAction, useLoad } from '../hooks.js';
import { href, navigate } from '../router.js';
import { useSession } from '../session.js';
import { Badge, Field, Form, Id, Json, Link, Outcome, Page, retryActionOf, Status, Time } from '../components/ui.js';

type Trace = ResponseBody<'/v1/traces/{traceId}', 'get'>['data'];
type TraceItem = Trace['items'][number];

const kindLabel: Record<TraceItem['kind'], string> = {
  REQUEST: 'Request',
  LEDGER_TRANSFER: 'Ledger posting',
  RECORD: 'Record',
  EVENT: 'Event',
  DELIVERY: 'Webhook delivery',
  DELIVERY_ATTEMPT: 'Delivery attempt',
};

function Summary(props: { item: TraceItem; onRetry: (deliveryId: string) => void; retrying: boolean }) {
  const item = props.item;
  switch (item.kind) {
    case 'REQUEST':
      return (
        <>
          <code>
            {item.method} {item.path}
          </code>{' '}
          → <span class={`badge ${item.statusCode < 400 ? 'good' : 'bad'}`}>{item.statusCode}</span> in {item.durationMs} ms
          {item.errorCode ? <span class="badge bad">{item.errorCode}</span> : null}
          {item.operationId ? <span class="muted"> ({item.operationId})</span> : null}
          {item.idempotencyKey ? <span class="muted"> Idempotency-Key {item.idempotencyKey}</span> : null}
        </>
      );
    case 'LEDGER_TRANSFER':
      return (
        <>
          <strong>{item.transferKind}</strong> {item.description ? <span class="muted">{item.description}</span> : null}
          <ul class="entries">
            {item.entries.map((entry, index) => (
              <li key={index}>
                {entry.amount} {entry.asset}: <Id value={entry.debit.accountId} /> {entry.debit.balance} → <Id value={entry.credit.accountId} /> {entry.credit.balance}
              </li>
            ))}
          </ul>
        </>
      );
    case 'RECORD':
      return (
        <>
          {item.type} / {item.purpose}: {item.operation === 'DEBIT' ? '−' : '+'}
          {item.amount} {item.asset} {item.balanceType} <Badge value={item.status} /> on{' '}
          <Link to={['wallets', item.walletId]}>
            wallet <Id value={item.walletId} />
          </Link>
        </>
      );
    case 'EVENT':
      return (
        <>
          <strong>{item.type}</strong> <Id value={item.id} />
        </>
      );
    case 'DELIVERY':
      return (
        <>
          {item.eventType} to{' '}
          <Link to={['webhooks', item.subscriptionId]}>
            subscription <Id value={item.subscriptionId} />
          </Link>
          : <Badge value={item.status} />, {item.attemptCount} attempt(s)
          {item.status === 'PENDING' && item.nextAttemptAt ? (
            <>
              , next <Time value={item.nextAttemptAt} />
            </>
          ) : null}
          <button type="button" class="inline" onClick={() => props.onRetry(item.id)} disabled={props.retrying} aria-label={`${retryActionOf(item.status)} delivery of ${item.eventType}`}>
            {retryActionOf(item.status)}
          </button>
        </>
      );
    case 'DELIVERY_ATTEMPT':
      return (
        <>
          attempt {item.attemptNumber}: <span class={`badge ${item.succeeded ? 'good' : 'bad'}`}>{item.succeeded ? 'succeeded' : 'failed'}</span>
          {item.httpStatus !== null ? ` HTTP ${item.httpStatus}` : ' no answer'}
          {item.latencyMs !== null ? ` in ${item.latencyMs} ms` : ''}
          {item.error ? <span class="muted"> {item.error}</span> : null}
        </>
      );
  }
}

/** Milliseconds from the first item, "+1.234 s" or "+56 ms". */
function offset(at: string, start: string): string {
  const ms = Date.parse(at) - Date.parse(start);
  return ms >= 1000 ? `+${(ms / 1000).toFixed(3)} s` : `+${ms} ms`;
}

function Timeline(props: { traceId: string }) {
  const { api } = useSession();
  const trace = useLoad(() => api.get('/v1/traces/{traceId}', { params: { path: { traceId: props.traceId } } }), [props.traceId], pollEvery(3000));
  const retry = useAction(async (deliveryId: string) => {
    const answer = await api.post('/v1/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } });
    trace.reload();
    return answer;
  });
  const data = trace.data?.data;
  const counts = new Map<string, number>();
  for (const item of data?.items ?? []) counts.set(item.kind, (counts.get(item.kind) ?? 0) + 1);
  return (
    <>
      <Status loading={trace.loading && !data} error={trace.error} />
      <Outcome error={retry.error} traceId={retry.errorTraceId}>{retry.result ? 'Retry queued: the next attempt appears here when it has run.' : null}</Outcome>
      {data ? (
        <>
          <p>
            From <Time value={data.startedAt} /> to <Time value={data.endedAt} />: {[...counts.entries()].map(([kind, count]) => `${count} ${kindLabel[kind as TraceItem['kind']].toLowerCase()}(s)`).join(', ')}
            {data.truncated ? ' (truncated: the first items only)' : ''}.
          </p>
          <ol class="timeline" aria-label="Trace timeline">
            {data.items.map((item) => (
              <li key={`${item.kind}:${item.id}`} class={`kind-${item.kind.toLowerCase()}`} data-kind={item.kind}>
                <div class="when">
                  <Time value={item.at} />
                  <span class="muted">{offset(item.at, data.startedAt)}</span>
                </div>
                <div class="what">
                  <span class="kind">{kindLabel[item.kind]}</span> <Summary item={item} onRetry={(id) => void retry.run(id)} retrying={retry.busy} />
                  <Json value={item} label="Details" />
                </div>
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </>
  );
}

export function TracePage(props: { traceId: string | undefined }) {
  const [value, setValue] = useState(props.traceId ?? '');
  return (
    <Page title={props.traceId ? 'Trace timeline' : 'Traces'}>
      <p class="muted">
        Every request, ledger posting, history record, event and webhook delivery that carries one trace id, in time order. Each API answer has its trace id (the{' '}
        <code>traceId</code> field and the <code>X-Trace-Id</code> header); send your own with an <code>X-Trace-Id</code> request header.
      </p>
      <Form label="Open a trace" class="filters" onSubmit={() => value.trim() && navigate(href('traces', value.trim()))}>
        <Field label="Trace id" value={value} onValue={setValue} required maxLength={128} />
        <button type="submit">Open</button>
      </Form>
      {props.traceId ? <Timeline traceId={props.traceId} /> : null}
    </Page>
  );
}
