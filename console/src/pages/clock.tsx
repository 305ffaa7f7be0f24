import { useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { Time } from '../components/ui.js';

/** The sandbox clock of this client, in the header (moved by the simulation page). */
export function ClockBadge() {
  const { api } = useSession();
  const clock = useLoad(() => api.get('/v1/sandbox/clock'), [], 5000);
  const data = clock.data?.data;
  return (
    <span class="clock" aria-live="off">
      Sandbox clock: {data ? <Time value={data.now} /> : '…'}
      {data && data.offsetSeconds !== 0 ? <span class="muted"> (+{data.offsetSeconds} s)</span> : null}
    </span>
  );
}
