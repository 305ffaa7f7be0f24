import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyError, type FastifyReply, type FastifyRequest, type FastifySchema, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import rateLimit from '@fastify/rate-limit';
import { Type } from 'typebox';
import type { Deps } from './platform/deps.js';
import type { App } from './platform/http/app-type.js';
import { authHook } from './platform/http/auth.js';
import { advanceWaitMs, clientAdvanceRunning, noteClockOffset, readClockOffset, waitForClientAdvance } from './platform/client-clock.js';
import { answerClientError } from './platform/http/client-errors.js';
import { isTraceId } from './platform/http/context.js';
import { AppError } from './platform/http/errors.js';
import { errorHandler } from './platform/http/error-handler.js';
import { ErrorBodySchema } from './platform/http/envelope.js';
import { refuseMalformedIdempotencyKey, reusedIdempotencyKeyError } from './platform/http/idempotency.js';
import { RouteMethods } from './platform/http/method-not-allowed.js';
import { isJsonRequest, jsonBodyLimitBytes, parseJsonBody, refuseBodyFields, refuseNulInParameters, refuseUndecodableQuery, validatorCompiler } from './platform/http/validation.js';
import { lazySerializerFactory } from './platform/http/serialization.js';
import { createMetrics } from './platform/http/metrics.js';
import { registerOperationRoutes } from './platform/http/operations.js';
import { registerOpenApi } from './platform/http/openapi.js';
import { registerRemovedEndpoints, removedEndpoints } from './platform/http/removed-endpoints.js';
import { logRedactPaths, logSerializers } from './platform/log.js';
import { ApiKeyResolver } from './modules/tenants/api-key-resolver.js';
import { ipAllowed } from './modules/tenants/api-key.js';
import { registerAdminRoutes } from './modules/tenants/admin.routes.js';
import { registerModuleRoutes } from './modules/routes.js';
import { eventOpenApi } from './modules/webhooks/index.js';
import { registerRequestLog } from './modules/traces/index.js';

export interface BuildAppOptions {
  logger?: FastifyServerOptions['logger'];
  /** Extra routes registered with the others (tests use it to drive platform mechanisms). */
  extraRoutes?: (app: App, deps: Deps) => void;
}

export interface RouteInfo {
  method: string;
  url: string;
  public: boolean;
  admin: boolean;
  /** Its schema (the very object the route validates with; its parts are compiled on first use). */
  schema: FastifySchema | undefined;
}

export interface BuiltApp {
  app: App;
  /** Every route registered, for the route-coverage checks of the tests. */
  routes: RouteInfo[];
  /** Set when shutdown starts: /health/ready then answers 503. */
  markShuttingDown: () => void;
  /** /health/ready answers 503 from now on; every other route still answers as before. */
  markDraining: () => void;
}

const absoluteFormPrefix = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** The request target in origin form: the path and query of an absolute-form target (RFC 9112 §3.2.2), any other as it is. */
function originFormOf(target: string): string {
  const prefix = absoluteFormPrefix.exec(target);
  if (prefix === null) return target;
  const rest = target.slice(prefix[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Builds the HTTP application without listening; tests call inject() or listen on port 0. */
export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<BuiltApp> {
  let shuttingDown = false;
  // Before shutting down (SHUTDOWN_DRAIN_MS): /health/ready answers 503 while requests are still served.
  let draining = false;
  const app: App = Fastify({
    logger: options.logger ?? { level: deps.config.logLevel, redact: { paths: logRedactPaths, censor: '[REDACTED]' }, serializers: logSerializers },
    bodyLimit: jsonBodyLimitBytes,
    logController: new LogController({ requestIdLogLabel: 'traceId' }),
    genReqId: (request) => {
      const given = request.headers['x-trace-id'];
      return isTraceId(given) ? given : crypto.randomUUID();
    },
    // Requests that arrive on open connections while the server shuts down are answered by the
    // onRequest hook below, 503 SERVICE_UNAVAILABLE in the API's envelope (Fastify's own 503 had
    // no code or traceId; found by an audit, 2026-12-04).
    return503OnClosing: false,
    // Called once the app exists (a connection's parse error), so it may read the app's logger.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, app.log),
    // A request line in absolute form (`GET http://host/v1/…`, as a proxy sends it) is read as the
    // path it names, before routing, so that what reads the path (the no-store header, the
    // idempotency key's request, the 405 check) sees what the router sees; until 2026-12-04 the
    // router took it but those rules read the whole URL (found by an audit).
    rewriteUrl: (request) => originFormOf(request.url ?? '/'),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
    // What the router refuses before any route runs answers in the API's own error envelope: a
    // path parameter too long to be any id is a missing resource, a path that cannot be decoded
    // a bad request (Fastify's own answers carried codes outside the catalogue and no traceId).
    frameworkErrors: (error, request, reply) => {
      const known =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new AppError('NOT_FOUND', 'Not found: no resource has an id this long (path parameters are 300 characters at most).')
          : error.code === 'FST_ERR_BAD_URL'
            ? new AppError('BAD_REQUEST', 'The path is not a valid URL: its percent escapes must be %XX of UTF-8 text.')
            : error;
      // Answered before the onRequest hooks run, so the trace header and the headers of every
      // answer are set here (until 2026-12-05 those two lacked the latter; found by an audit).
      reply.header('X-Trace-Id', String(request.id));
      // Fastify writes "request completed" only for the answers of its router, after the route's
      // response hooks: this answer's line is written here, as Fastify writes it (until 2026-12-06
      // such a request logged "incoming request" and nothing after).
      const started = performance.now();
      reply.raw.once('finish', () => request.log.info({ res: reply, responseTime: performance.now() - started }, 'request completed'));
      answerHeaders(request, reply);
      errorHandler(known, request, reply);
    },
    // Response serializers compiled on first use (src/platform/http/serialization.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // A write refused by validation whose Idempotency-Key was used for another request answers as
  // a reused key would (422), not with the validation error.
  app.setErrorHandler<FastifyError>(async (error, request, reply) =>
    errorHandler((await reusedIdempotencyKeyError(deps, request, error)) ?? error, request, reply),
  );
  // A known path asked with another method is 405 with Allow; an unknown path is 404. Both are
  // answered before authentication (the auth hook lets not-found requests through): which methods
  // a path has is public anyway, in the OpenAPI document.
  const routeMethods = new RouteMethods();
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routeMethods.allowed(path);
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      throw new AppError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`);
    }
    throw new AppError('ROUTE_NOT_FOUND', `Route ${request.method} ${path} not found`);
  });

  // JSON bodies: UTF-8 only (RFC 8259: a byte that is not UTF-8 is refused, never replaced), parsed
  // by JSON.parse, then checked for what it lets through (deep nesting, NUL, lone surrogates,
  // prototype keys, duplicate fields). An empty body counts as none.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // A request no route takes is answered 404 or 405 whatever its body (until 2026-12-07 a body
    // that was not JSON answered 400 first; found by an audit).
    if (request.is404) {
      done(null, undefined);
      return;
    }
    try {
      done(null, parseJsonBody(request.headers['content-type'], typeof body === 'string' ? Buffer.from(body) : body));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Trace-Id', String(request.id));
    if (shuttingDown && !request.url.startsWith('/health/')) {
      // Not applied: the client retries it, on another process or once this one is back.
      reply.header('Connection', 'close');
      reply.header('Retry-After', '1');
      throw new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down and did not apply this request; retry it.');
    }
    answerHeaders(request, reply);
  });
  // A request that was in flight when the shutdown started is answered on a connection that then
  // closes: Node closes only the connections idle when the server closes, so a keep-alive one busy
  // then stayed open after its answer and the close waited for SHUTDOWN_TIMEOUT_MS (until
  // 2026-12-06, every stop under load took the full 10 s; found by an audit).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (shuttingDown) reply.header('Connection', 'close');
    done(null, payload);
  });
  const resolver = new ApiKeyResolver(deps);
  app.addHook(
    'onRequest',
    authHook({ resolveKey: (key) => resolver.resolve(key), ipAllowed, adminKey: deps.config.adminKey, metricsToken: deps.config.metricsToken, failuresPerMinute: deps.config.rateLimitPerMinute }),
  );
  // A compressed body is not decompressed: refused as such (415) rather than read as what it is not
  // (found by a security audit, 2026-12-02). After authentication, before the body is read, as is
  // a malformed Idempotency-Key.
  app.addHook('preParsing', async (request) => {
    refuseMalformedIdempotencyKey(request);
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding} is not accepted: send the body uncompressed.`, {
        details: [{ field: 'Content-Encoding', message: 'only identity (no encoding) is accepted' }],
      });
    }
  });
  // After authentication (it logs authenticated requests only), before the other response hooks.
  if (deps.config.requestLog) registerRequestLog(app, deps);
  app.addHook('preValidation', async (request) => {
    // A NUL character reaches the parameters only as %00 in the URL: one search on most requests.
    if (request.url.includes('%00')) refuseNulInParameters(request.params, request.query);
    if (request.url.includes('%')) refuseUndecodableQuery(request.url);
    // A write sent without a body is treated as an empty object: routes whose fields are all
    // optional accept it, and the others name each missing field.
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    // A route that takes no body refuses JSON fields as any route refuses unknown ones (no body
    // and {} are fine; other content types are the route's own business). Not for a route that
    // does not exist (404) or a public one (a removed endpoint's 410 comes first).
    const route = request.routeOptions;
    if (route.url !== undefined && route.config.public !== true && !route.schema?.body && request.body !== undefined && isJsonRequest(request.headers['content-type'])) {
      refuseBodyFields(request.body);
    }
    const removed = request.routeOptions.config.removedFields;
    const body = request.body;
    if (!removed || body === null || typeof body !== 'object' || Array.isArray(body)) return;
    const found = Object.keys(removed).filter((field) => Object.hasOwn(body, field));
    if (found.length > 0) {
      const details = found.map((field) => ({ field, message: `was removed: ${removed[field] ?? ''}` }));
      throw new AppError('FIELD_REMOVED', details.map((detail) => `${detail.field} ${detail.message}`).join(' '), { details });
    }
  });

  // Sandbox: a client's writes wait while this process advances that client's clock, so none acts at
  // the new time on a state whose earlier timers have not run yet (platform/client-clock.ts). Reads
  // answer at once (and may show the advance half done).
  if (deps.config.mode === 'sandbox') {
    const waitForAdvance = async (request: FastifyRequest, clientId: string): Promise<void> => {
      const waited = await waitForClientAdvance(deps, clientId, advanceWaitMs);
      if (waited === 'timed out') {
        throw new AppError(
          'SANDBOX_CLOCK_BUSY',
          `An advance of this client's clock was still running its timers after ${advanceWaitMs / 1000} s; this request was not applied: retry it when the advance has answered.`,
        );
      }
      if (waited === 'ended' && request.auth) {
        // The offset the request arrived with may be from before the advance (its key looked up
        // earlier, within AUTH_CACHE_TTL_MS), and the one noted when the advance began lasts only
        // that long: read the clock as the advance left it (until 2026-12-06 a write that waited
        // more than 2 s acted at the time before the advance; found by an audit).
        const offsetMs = await readClockOffset(deps.db, clientId);
        noteClockOffset(deps, clientId, offsetMs);
        request.auth = { ...request.auth, clockOffsetMs: offsetMs };
      }
    };
    // A callback hook: a write with no advance running (every write of the benchmarks) goes on at
    // once, without a promise of its own.
    app.addHook('preHandler', (request, _reply, done) => {
      const clientId = request.auth?.clientId;
      if (clientId === undefined || request.method === 'GET' || request.method === 'HEAD' || !clientAdvanceRunning(deps, clientId)) {
        done();
        return;
      }
      waitForAdvance(request, clientId).then(() => done(), (error: unknown) => done(error as Error));
    });
  }

  // Every API route refuses unknown query parameters (an empty strict schema when it declares
  // none) and documents the error body; the docs UI routes are public.
  const routes: RouteInfo[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // A removed endpoint answers 410 for its old method (and the HEAD Fastify adds to a GET); it
    // does not make that method allowed.
    const isRemoved = (method: string) =>
      removedEndpoints.some((endpoint) => endpoint.url === route.url && (endpoint.method === method || (endpoint.method === 'GET' && method === 'HEAD')));
    routeMethods.add(route.url, methods.filter((method) => !isRemoved(method)));
    for (const method of methods) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: route.url, public: Boolean(route.config?.public) || route.url.startsWith('/docs'), admin: Boolean(route.config?.admin), schema: route.schema });
    }
    if (route.url.startsWith('/docs')) {
      route.config = { ...(route.config ?? {}), public: true, rateLimit: false };
      return;
    }
    const isApiRoute = route.url.startsWith('/v1') || route.url === '/internal-transfer';
    if (!isApiRoute) return;
    const schema = (route.schema ??= {});
    schema.querystring ??= Type.Object({}, { additionalProperties: false });
    schema.response = { ...(schema.response as object), '4xx': ErrorBodySchema, '5xx': ErrorBodySchema };
  });

  await app.register(rateLimit, {
    global: true,
    max: deps.config.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => request.auth?.keyId ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new AppError('RATE_LIMITED', `Rate limit exceeded: ${context.max} requests per minute; retry in ${context.after}.`),
  });

  await registerOpenApi(app, deps, eventOpenApi());

  const metrics = createMetrics(deps.database.pool);
  app.addHook('onResponse', async (request, reply) => metrics.observe(request, reply));

  registerOperationRoutes(app, deps, metrics.registry, () => (draining ? 'draining' : shuttingDown ? 'shutting down' : undefined));
  registerRemovedEndpoints(app);
  registerAdminRoutes(app, deps, resolver);
  registerModuleRoutes(app, deps, metrics);
  options.extraRoutes?.(app, deps);

  await app.ready();
  return {
    app,
    routes,
    markShuttingDown: () => {
      shuttingDown = true;
    },
    markDraining: () => {
      draining = true;
    },
  };
}

/**
 * The headers of every answer: the API's answers carry account data, and some a secret shown once
 * (a webhook secret, a new API key), so no cache keeps them, and no browser reads them as anything
 * but what they are (found by a security audit, 2026-12-02). A route that may be cached says so itself.
 */
function answerHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Content-Type-Options', 'nosniff');
  if (request.url.startsWith('/v1/')) reply.header('Cache-Control', 'no-store');
}
