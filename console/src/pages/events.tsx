import { useState } from 'preact/hooks';
import { useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { Id, Json, Page, SelectFilter, Status, Time, TraceLink, Table } from '../components/ui.js';
import { totalText } from '../count-text.js';

export function EventsPage() {
  const { api } = useSession();
  const types = useLoad(() => api.get('/v1/events/types'), []);
  const [applied, setApplied] = useState('');
  const events = useLoad(() => api.get('/v1/events', { params: { query: { limit: 100, ...(applied ? { type: applied as never } : {}) } } }), [applied], 3000);
  const typeNames = (types.data?.data ?? []).map((entry) => entry.type);
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
      {events.data ? <p class="muted">{totalText(events.data.pagination)} event(s) in all; the newest 100 are shown.</p> : null}
    </Page>
  );
}
