import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { authOf, traceIdCharacters, traceIdMaxLength } from '../../../platform/http/context.js';
import { Envelope } from '../../../platform/http/envelope.js';
import { flushRequestLog, traceRouteUrl } from '../request-log.js';
import { readTrace } from '../traces.service.js';
import { TraceSchema, traceItemsMax } from '../trace.schemas.js';

export function registerTraceRoutes(app: App, deps: Deps): void {
  app.get(
    traceRouteUrl,
    {
      schema: {
        operationId: 'traces.get',
        tags: ['Traces'],
        summary: 'Retrieve a trace: everything one trace id caused, in time order',
        description:
          'Every request has a trace id (the X-Trace-Id header it was sent with, when it matches ^[A-Za-z0-9._:-]{1,128}$, ' +
          'else a new UUID; answered in the X-Trace-Id header and the `traceId` of every body). Background jobs (timers, the ' +
          'block and delivery workers) run with trace ids of their own. The trace lists the request itself (from the request log), ' +
          'the ledger transfers with their entries, the wallet transaction records they wrote, the events recorded, and the webhook ' +
          `deliveries and attempts of those events. At most ${traceItemsMax} items (see truncated). Reading a trace is not itself ` +
          'logged. An unknown trace id, or another client\'s, answers 404 NOT_FOUND. See docs/traces.md.',
        params: Type.Object({
          traceId: Type.String({ minLength: 1, maxLength: traceIdMaxLength, pattern: traceIdCharacters.source, description: 'a trace id, as the X-Trace-Id header gives it' }),
        }),
        response: { 200: Envelope(TraceSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      // The requests that made the trace may still be in the request log's buffer.
      await flushRequestLog(app);
      const data = await readTrace(deps.db, clientId, request.params.traceId);
      return { message: 'Trace retrieved', data, traceId: String(request.id) };
    },
  );
}
