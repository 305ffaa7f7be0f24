import createClient, { type Client, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod } from 'openapi-typescript-helpers';
import type { paths } from './generated/openapi.js';
import { OpenBaaSError } from './errors.js';
import { paginate, type ListItem, type ListPath, type Page } from './pagination.js';

export interface OpenBaaSOptions {
  /** The API key, `sk_test_…` or `sk_live_…`, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Where the server is, `http://localhost:8080` by default. */
  baseUrl?: string;
  /**
   * How many times a call is retried (2 by default; 0 turns retries off): after a 429, 500, 502,
   * 503 or 504 answer (not a 503 saying the server has no price feed or identity provider at all),
   * a 409 saying the same key or the sandbox is busy, a connection that failed, or no answer within
   * `timeoutMs`. A write is retried with the same `Idempotency-Key`, so the server never does it
   * twice.
   */
  maxRetries?: number;
  /** How long one attempt waits for its answer, in milliseconds (60 s by default; 0: no limit). */
  timeoutMs?: number;
  /**
   * The longest wait before a retry, in milliseconds (30 s by default). A Retry-After asking for
   * more is not waited for: the call fails with the 429 or 503 and its `retryAfterSeconds`.
   */
  maxRetryDelayMs?: number;
  /** The fetch to send requests with (globalThis.fetch by default): a proxy agent, a test double, … */
  fetch?: (request: Request) => Promise<Response>;
  /** Makes the `Idempotency-Key` of a write that does not set one (crypto.randomUUID() by default). */
  idempotencyKey?: () => string;
  /** Headers sent with every request (besides Authorization). */
  headers?: Record<string, string>;
}

const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Answers worth sending again with the same key: the server stores a write's answer under its key
 * in the write's own transaction and never stores a 5xx, so a retry either replays the first
 * answer or does the write (once). When the retries run out, the error carries the key, so the
 * caller can go on retrying the same way.
 */
const retriedStatuses = new Set([429, 500, 502, 503, 504]);
/** 409 codes that say "the same request again, later" (docs/errors.md). */
const retriedConflictCodes = new Set(['IDEMPOTENCY_REQUEST_IN_PROGRESS', 'SANDBOX_CLOCK_BUSY', 'SANDBOX_STATE_BUSY']);
/** 503 codes that no wait mends: the server has no such provider in its mode (docs/errors.md). */
const lastingUnavailableCodes = new Set(['PRICE_FEED_UNAVAILABLE', 'IDENTITY_PROVIDER_UNAVAILABLE']);

/**
 * A call that got no answer: the connection failed, or no answer came within `timeoutMs`, on every
 * attempt. A write may have been done: send it again with `idempotencyKey` (in
 * `params.header['Idempotency-Key']`) and the server replays it rather than doing it twice.
 */
export class OpenBaaSConnectionError extends Error {
  override readonly name = 'OpenBaaSConnectionError';
  constructor(
    message: string,
    /** The key the write was sent with (undefined for a read). */
    readonly idempotencyKey: string | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** Seconds to wait from a Retry-After header (delay-seconds, fractions allowed, or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, nowMs = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const dateMs = Date.parse(trimmed);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, Math.ceil((dateMs - nowMs) / 1000));
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The `code` of an answer's error body, or undefined when it has none. */
async function codeOf(response: Response): Promise<string | undefined> {
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  return typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string' ? (body as { code: string }).code : undefined;
}

/**
 * Whether an answer is one to send the request again for: a retried status (but not a 503 that
 * says the server has no such provider at all: retrying it only delayed the error), or a busy 409.
 */
async function worthRetrying(response: Response): Promise<boolean> {
  if (response.status === 503) return !lastingUnavailableCodes.has((await codeOf(response)) ?? '');
  if (retriedStatuses.has(response.status)) return true;
  if (response.status !== 409) return false;
  return retriedConflictCodes.has((await codeOf(response)) ?? '');
}

const nullBodyStatuses = new Set([101, 204, 205, 304]);

/**
 * One attempt: a copy of the request (a body can be read once) sent with a signal of its own, and
 * its whole answer, body included, read within `timeoutMs` (0: no limit). The attempt's
 * controller is held by its timer and by the caller's signal, and the attempt ends when that
 * controller aborts, whatever fetch does with it: Node's fetch follows the signal of a copied
 * Request through weak references, so after a garbage collection an `AbortSignal.any` of the
 * caller's signal and a timeout could be lost, and neither the timeout nor the caller's abort
 * ended the call (undici issue 4068; found by an audit, 2026-12-04). The body is read here, so a
 * timeout while it arrives is retried and reported as any other (the answers are small JSON).
 */
async function sendAttempt(fetcher: (request: Request) => Promise<Response>, request: Request, copy: boolean, timeoutMs: number): Promise<Response> {
  if (request.signal.aborted) throw request.signal.reason as Error;
  const controller = new AbortController();
  const forward = () => controller.abort(request.signal.reason);
  request.signal.addEventListener('abort', forward, { once: true });
  const timer = timeoutMs > 0 ? setTimeout(() => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs) : undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true });
  });
  const answered = (async () => {
    const response = await fetcher(new Request(copy ? request.clone() : request, { signal: controller.signal }));
    const body = await response.arrayBuffer();
    return new Response(nullBodyStatuses.has(response.status) ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
  })();
  // Whichever loses the race settles later unobserved.
  stopped.catch(() => {});
  answered.catch(() => {});
  try {
    return await Promise.race([answered, stopped]);
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', forward);
  }
}

/**
 * The `Idempotency-Key` each answer's request was sent with, for the answers retryingFetch hands
 * over, so the error of a write carries its key (OpenBaaS.call) without the caller having to
 * make one.
 */
const keyOfAnswer = new WeakMap<Response, string>();

/**
 * The fetch under the client: gives every write an `Idempotency-Key` (unless the caller set one),
 * so a retry can never do the work twice, and retries what is worth retrying (retriedStatuses, a
 * busy 409, a failed connection, an attempt past `timeoutMs`) after the Retry-After the answer
 * carries (or 0.5 s, 1 s, 2 s, … without one), with the same key. A call the caller aborts is
 * not retried. Until 2026-12-02 a failed connection was not retried and its key was lost, so
 * calling again did a write twice (found by an audit).
 */
export function retryingFetch(
  options: Required<Pick<OpenBaaSOptions, 'maxRetries' | 'maxRetryDelayMs' | 'idempotencyKey' | 'timeoutMs'>> & { fetch: (request: Request) => Promise<Response> },
) {
  return async (request: Request): Promise<Response> => {
    if (writeMethods.has(request.method) && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', options.idempotencyKey());
    const key = request.headers.get('idempotency-key') ?? undefined;
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= options.maxRetries;
      let response: Response;
      try {
        response = await sendAttempt(options.fetch, request, !last, options.timeoutMs);
      } catch (error) {
        if (request.signal.aborted) throw error;
        const what = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : 'the connection failed';
        if (last) throw new OpenBaaSConnectionError(`${request.method} ${new URL(request.url).pathname}: ${what}, ${attempt + 1} time(s)`, key, { cause: error });
        await sleep(Math.min(500 * 2 ** attempt, options.maxRetryDelayMs), request.signal);
        continue;
      }
      if (key !== undefined) keyOfAnswer.set(response, key);
      if (last || !(await worthRetrying(response))) return response;
      // A Retry-After longer than maxRetryDelayMs is not waited for; the client's own backoff is
      // capped at it instead, as for a failed connection (until 2026-12-07 a backoff past the cap
      // also gave up, so an answer without Retry-After was retried fewer than maxRetries times, or
      // never with a cap under 0.5 s; found by an audit).
      const asked = retryAfterSeconds(response.headers.get('retry-after'));
      if (asked !== undefined && asked * 1000 > options.maxRetryDelayMs) return response;
      const delayMs = asked === undefined ? Math.min(500 * 2 ** attempt, options.maxRetryDelayMs) : asked * 1000;
      await response.body?.cancel();
      await sleep(delayMs, request.signal);
    }
  };
}

/**
 * A body holding a Blob (a file part, typed `Blob`: the document uploads) goes as
 * multipart/form-data, one part per field (a Blob that is not a File is named `file`), unless the
 * caller serializes it; fetch then writes the boundary. Anything else goes as JSON.
 */
function withMultipartBody(init: unknown): unknown {
  if (typeof init !== 'object' || init === null) return init;
  const { body, bodySerializer } = init as { body?: unknown; bodySerializer?: unknown };
  if (bodySerializer !== undefined || typeof body !== 'object' || body === null || body instanceof FormData) return init;
  if (!Object.values(body).some((value) => value instanceof Blob)) return init;
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (value instanceof Blob) form.append(name, value, value instanceof File ? value.name : name);
    else form.append(name, String(value));
  }
  return { ...init, bodySerializer: () => form };
}

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The options argument: optional when nothing in it is required (openapi-fetch's rule). */
type InitArgs<Init> = RequiredKeysOf<Init> extends never ? [init?: Init & Record<string, unknown>] : [init: Init & Record<string, unknown>];
/** The body of the success answer of `M P`: the envelope `{ message, data, traceId, pagination? }`. */
export type ResponseBody<P extends keyof paths, M extends Method, Init = object> = paths[P] extends Record<M, Record<string | number, unknown>>
  ? NonNullable<FetchResponse<paths[P][M], Init, 'application/json'>['data']>
  : never;

type Caller = <P extends PathsWithMethod<paths, M>, M extends Method>(method: M, path: P, init: unknown) => Promise<ResponseBody<P, M>>;

/**
 * The OpenBaaS client. `get`, `post`, `put`, `patch` and `delete` take a path of the API as the
 * OpenAPI document writes it (`/v1/customers/{id}`) and openapi-fetch's options (`params.path`,
 * `params.query`, `params.header`, `body`), all typed from the document; they resolve to the
 * success body and throw {@link OpenBaaSError} otherwise. `list` walks every page of a list.
 * `raw` is the openapi-fetch client underneath, answering `{ data, error, response }`.
 */
export class OpenBaaS {
  readonly raw: Client<paths, 'application/json'>;
  readonly baseUrl: string;

  constructor(options: OpenBaaSOptions) {
    if (!options.apiKey) throw new TypeError('OpenBaaS: apiKey is required');
    this.baseUrl = (options.baseUrl ?? 'http://localhost:8080').replace(/\/+$/, '');
    const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.raw = createClient<paths, 'application/json'>({
      baseUrl: this.baseUrl,
      headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
      fetch: retryingFetch({
        fetch: baseFetch,
        maxRetries: options.maxRetries ?? 2,
        maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
        timeoutMs: options.timeoutMs ?? 60_000,
        idempotencyKey: options.idempotencyKey ?? (() => globalThis.crypto.randomUUID()),
      }),
    });
    // openapi-fetch runs the middlewares' onResponse last-added first, so this one sees the answer
    // the caller's middlewares (`raw.use`) leave: one they replaced with a new Response is not
    // the one retryingFetch recorded, and its error would have lost the write's key (until
    // 2026-12-08). The request is the one sent, holding the key retryingFetch gave it.
    this.raw.use({
      onResponse: ({ request, response }) => {
        const key = request.headers.get('idempotency-key');
        if (key !== null && writeMethods.has(request.method) && !keyOfAnswer.has(response)) keyOfAnswer.set(response, key);
        return undefined;
      },
    });
  }

  private readonly call: Caller = async (method, path, init) => {
    const request = this.raw.request as unknown as (method: HttpMethod, path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const { data, error, response } = await request(method, path, withMultipartBody(init));
    // A write's error carries its key: after a 503 or a 409 IDEMPOTENCY_REQUEST_IN_PROGRESS that
    // outlasted the retries, the write may be done or still running, and only that key replays it.
    if (!response.ok) throw new OpenBaaSError(response.status, error, retryAfterSeconds(response.headers.get('retry-after')), keyOfAnswer.get(response));
    return data as never;
  };

  get<P extends PathsWithMethod<paths, 'get'>, I extends MaybeOptionalInit<paths[P], 'get'>>(path: P, ...init: InitArgs<I>): Promise<ResponseBody<P, 'get', I>> {
    return this.call('get', path, init[0]) as Promise<ResponseBody<P, 'get', I>>;
  }

  post<P extends PathsWithMethod<paths, 'post'>, I extends MaybeOptionalInit<paths[P], 'post'>>(path: P, ...init: InitArgs<I>): Promise<ResponseBody<P, 'post', I>> {
    return this.call('post', path, init[0]) as Promise<ResponseBody<P, 'post', I>>;
  }

  put<P extends PathsWithMethod<paths, 'put'>, I extends MaybeOptionalInit<paths[P], 'put'>>(path: P, ...init: InitArgs<I>): Promise<ResponseBody<P, 'put', I>> {
    return this.call('put', path, init[0]) as Promise<ResponseBody<P, 'put', I>>;
  }

  patch<P extends PathsWithMethod<paths, 'patch'>, I extends MaybeOptionalInit<paths[P], 'patch'>>(path: P, ...init: InitArgs<I>): Promise<ResponseBody<P, 'patch', I>> {
    return this.call('patch', path, init[0]) as Promise<ResponseBody<P, 'patch', I>>;
  }

  delete<P extends PathsWithMethod<paths, 'delete'>, I extends MaybeOptionalInit<paths[P], 'delete'>>(path: P, ...init: InitArgs<I>): Promise<ResponseBody<P, 'delete', I>> {
    return this.call('delete', path, init[0]) as Promise<ResponseBody<P, 'delete', I>>;
  }

  /**
   * Every item of a list, fetched a page at a time as the loop asks for them:
   * `for await (const customer of api.list('/v1/customers', { params: { query: { limit: 100 } } }))`.
   * Filters and `limit` apply to every page; the pages follow `nextStartAfterId` (or the offset).
   */
  list<P extends ListPath & PathsWithMethod<paths, 'get'>, I extends MaybeOptionalInit<paths[P], 'get'>>(path: P, ...init: InitArgs<I>): AsyncGenerator<ListItem<P>, void, undefined> {
    const options = (init[0] ?? {}) as { params?: { query?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
    return paginate(options.params?.query ?? {}, async (query) => {
      const page = await this.call('get', path, { ...options, params: { ...options.params, query } });
      return page as unknown as Page<ListItem<P>>;
    });
  }
}

/** Same as `new OpenBaaS(options)`. */
export function createOpenBaaS(options: OpenBaaSOptions): OpenBaaS {
  return new OpenBaaS(options);
}
