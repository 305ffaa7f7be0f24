/** The trace timeline (GET /v1/traces/:traceId) and the request log it reads (docs/traces.md). */
export { registerTraceRoutes } from './routes/traces.routes.js';
export { flushRequestLog, purgeOldApiRequests, registerRequestLog, type RequestLog } from './request-log.js';
export { traceItemsMax } from './traces.service.js';
