import { useEffect } from 'preact/hooks';
import { pollMs, useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { Time } from '../components/ui.js';

/** Dispatched on window when this page moved the sandbox clock. */
export const clockMovedEvent = 'openbaas:clock-moved';

/** The sandbox clock of this client, in the header (moved by the simulation page). */
export function ClockBadge() {
  const { api } = useSession();
  const clock = useLoad(() => api.get('/v1/sandbox/clock'), [], pollMs);
  // An advance on this page reads the clock at once, not at the next poll (found by an audit, 2026-12-04).
  useEffect(() => {
    const reload = () => clock.reload();
    window.addEventListener(clockMovedEvent, reload);
    return () => window.removeEventListener(clockMovedEvent, reload);
  }, []);
  const data = clock.data?.data;
  return (
    <span class="clock" aria-live="off">
      Sandbox clock: {data ? <Time value={data.now} /> : '…'}
      {data && data.offsetSeconds !== 0 ? <span class="muted"> (+{data.offsetSeconds} s)</span> : null}
    </span>
  );
}
