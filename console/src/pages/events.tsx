import { useState } from 'preact/hooks';
import { pollEvery, useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { Id, Json, NewestShown, Page, SelectFilter, Status, Time, TraceLink, Table } from '../components/ui.js';

export function EventsPage() {
  const { api } = useSession();
  const types = useLoad(() => api.get('/v1/events/types'), []);
  const [applied, setApplied] = useState('');
  const events = useLoad(() => api.get('/v1/events', { params: { query: { limit: 100, ...(applied ? { type: applied as never } : {}) } } }), [applied], pollEvery(3000));
  // The filter offers the types GET /v1/events lists: not a test-only one (WEBHOOK_TEST goes to a
  // receiver, never to the event list, and the filter refuses it). Until 2026-12-07 it was offered
  // and answered 400 (found by an audit).
  const typeNames = (types.data?.data ?? []).filter((entry) => !entry.testOnly).map((entry) => entry.type);
  const rows = events.data?.data ?? [];
  return (
    <Page title="Events">
      <SelectFilter formLabel="Filter events" label="Event type" options={typeNames} onApply={setApplied} />
      <Status loading={events.loading && !events.data} error={events.error} empty={events.data !== undefined && rows.length === 0} emptyText="No events yet." />
      {rows.length > 0 ? (
        <Table label="Events" columns={['When', 'Type', 'Id', 'Trace', 'Payload']}>
            {rows.map((event) => {
              const traceId = typeof event.data.traceId === 'string' ? event.data.traceId : undefined;
              return (
                <tr key={event.id}>
                  <td>
                    <Time value={event.createdAt} />
                  </td>
                  <td>{event.type}</td>
                  <td>
                    <Id value={event.id} />
                  </td>
                  <td>
                    <TraceLink traceId={traceId}>Trace</TraceLink>
                  </td>
                  <td>
                    <Json value={event.data} label="Show data" />
                  </td>
                </tr>
              );
            })}
          </Table>
      ) : null}
      {/* How many of how many, only when not all are shown (until 2026-12-07 it always said "the newest 100 are shown", even of 3 or 0; found by an audit). */}
      {events.data ? <NewestShown shown={rows.length} of={events.data.pagination} noun="event(s)" /> : null}
    </Page>
  );
}
