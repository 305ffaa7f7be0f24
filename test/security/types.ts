import type { TestClient, TestContext } from '../harness.js';

export interface PreparedRequest {
  url: string;
  body?: unknown;
  /** A body sent as-is with its own content type (multipart uploads), instead of `body`. */
  rawBody?: Buffer;
  contentType?: string;
}

/**
 * One entry per authenticated route. The shared suite (test/security.test.ts) runs on each:
 * 401 without a key and with an unknown key, 403 for a read-only key on a write, 404 when the
 * request names another client's resource (or, for a list with ownerMarkers, none of the
 * client's records in another client's list; a resource named in the body or the query must be
 * named in the 404's details), and idempotent replay / key reuse on writes.
 */
export interface SecurityCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The route pattern exactly as registered, for example '/v1/events/:id'. */
  route: string;
  /**
   * Creates whatever the request needs, owned by `client`, and returns a request that succeeds
   * for that client. Called several times: it must create fresh resources each time.
   */
  prepare(t: TestContext, client: TestClient): Promise<PreparedRequest>;
  /** True when the request names a resource of `client` (in the path or body), so another client gets 404. */
  ownsResource: boolean;
  /**
   * For a list of the caller's own records (ownsResource false): strings that identify records of
   * `client` in a response body (ids, key prefixes). The suite checks the owner's list shows them
   * and another client's list, for the same request, contains none of them.
   */
  ownerMarkers?: (t: TestContext, client: TestClient) => Promise<string[]>;
}
