/**
 * Which methods each registered path accepts, so that a request for a known path with a method it
 * does not accept is answered 405 with an `Allow` header rather than 404. Fastify's router only
 * reports "no route"; this table is consulted by the not-found handler alone, so requests that
 * find their route pay nothing for it.
 */
export class RouteMethods {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  /** Records methods for a route URL as Fastify writes it (`/v1/customers/:id`, `/docs/*`). */
  add(url: string, methods: readonly string[]): void {
    if (methods.length === 0) return;
    let route = this.routes.get(url);
    if (!route) {
      route = { pattern: urlPattern(url), methods: new Set() };
      this.routes.set(url, route);
    }
    for (const method of methods) route.methods.add(method.toUpperCase());
  }

  /** Every method some route accepts on this concrete path, sorted; empty for an unknown path. */
  allowed(path: string): string[] {
    const trimmed = withoutTrailingSlash(path);
    const methods = new Set<string>();
    for (const route of this.routes.values()) {
      if (route.pattern.test(trimmed)) for (const method of route.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}

/**
 * The router ignores one trailing slash (`ignoreTrailingSlash`), so the table does too: one, not
 * every one (`/v1/internal-transfer//` is no route, so its 405 listed the very method it refused;
 * found by an audit, 2026-12-02).
 */
function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `/v1/customers/:id/wallets` becomes /^\/v1\/customers\/[^/]+\/wallets$/; a `*` matches the rest. */
function urlPattern(url: string): RegExp {
  const segments = withoutTrailingSlash(url)
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) {
        // A parameter with a pattern of its own (`:id(^\\d+)`) keeps it; a plain one is any segment.
        const own = /^:[^(]+\((.+)\)$/.exec(segment)?.[1];
        return own ? `(?:${own.replace(/^\^/, '').replace(/\$$/, '')})` : '[^/]+';
      }
      return escapeRegExp(segment).replace(/\\\*$/, '.*');
    });
  return new RegExp(`^${segments.join('/')}$`);
}
