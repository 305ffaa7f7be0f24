import { pollMs, usePagedList } from '../hooks.js';
import { useSession } from '../session.js';
import { Page, Shown, Status, Time, Table } from '../components/ui.js';

/** The client's API keys, read only: keys are made and revoked with `openbaas keys` or the admin API. */
export function ApiKeysPage() {
  const { api } = useSession();
  const keys = usePagedList((limit, startAfterId) => api.get('/v1/api-keys', { params: { query: { limit, ...(startAfterId ? { startAfterId } : {}) } } }), [], pollMs);
  const rows = keys.data?.items ?? [];
  return (
    <Page title="API keys">
      <p class="muted">
        Read only. Keys are created and revoked with <code>openbaas keys create|revoke</code> or the <code>/v1/admin</code> routes; a key's secret is shown once, when it is made.
      </p>
      <Status loading={keys.loading && !keys.data} error={keys.error} empty={keys.data !== undefined && rows.length === 0} />
      {rows.length > 0 ? (
        <Table label="API keys" columns={['Prefix', 'Access', 'Allowed networks', 'Created', 'Revoked']}>
            {rows.map((key) => (
              <tr key={key.prefix}>
                <td>
                  <code>{key.prefix}</code> {key.current ? <span class="badge good">this session</span> : null}
                </td>
                <td>{key.readOnly ? 'read only' : 'read and write'}</td>
                <td>{key.allowedCidrs.length > 0 ? key.allowedCidrs.join(', ') : 'any'}</td>
                <td>
                  <Time value={key.createdAt} />
                </td>
                <td>
                  <Time value={key.revokedAt} />
                </td>
              </tr>
            ))}
          </Table>
      ) : null}
      <Shown list={keys.data} noun="key(s)" onMore={keys.more} busy={keys.loadingMore} />
    </Page>
  );
}
