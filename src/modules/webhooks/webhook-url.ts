import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Mode } from '../../platform/config.js';
import { AppError, validationError } from '../../platform/http/errors.js';
import { assertPlainText } from '../../platform/text.js';
import { withinTime } from '../../platform/time-limit.js';

/**
 * Where webhooks may be sent. Any mode: an absolute http or https URL without credentials, never
 * to a link-local, unspecified, multicast or broadcast address (isAllowedAddress). In
 * production: https only, and never to an address that is not plain public unicast (loopback,
 * private, link-local, unique-local, carrier-grade NAT, multicast, reserved, IPv4 embedded in
 * IPv6, ...). Host names are resolved and checked at creation, and again by the delivery
 * connection itself (see guardedLookup), so a name that later resolves elsewhere (DNS
 * rebinding) is still refused.
 */

export const webhookUrlLengthMax = 2048;
/** How long the creation-time DNS check waits; an unresolvable name is accepted and checked at delivery. */
const creationLookupTimeoutMs = 2000;

export class AddressNotAllowedError extends Error {
  override name = 'AddressNotAllowedError';
  readonly code = 'EADDRNOTALLOWED';
}

/**
 * True only for ordinary public unicast addresses (IPv4-mapped IPv6 is judged as its IPv4
 * address). The deprecated IPv4-compatible IPv6 range (::/96, such as ::127.0.0.1) is refused
 * whole: ipaddr.js calls it unicast, but it embeds an IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return parsed.range() === 'unicast';
}

/**
 * The ranges no webhook receiver lives in, refused in the sandbox too: link-local (169.254.0.0/16,
 * where clouds serve their instance metadata, and fe80::/10), the unspecified address (0.0.0.0, ::),
 * multicast and broadcast. Loopback and private addresses stay allowed there, for receivers on the
 * developer's machine or network. Until 2026-12-07 the sandbox took any address, so a shared
 * sandbox server could be made to POST to its cloud's metadata service and show the answer in the
 * delivery log (found by an audit).
 */
const sandboxRefusedRanges = new Set(['linkLocal', 'unspecified', 'multicast', 'broadcast', 'rfc6052', '6to4', 'teredo']);

/**
 * Cloud instance metadata services outside the link-local range, refused in the sandbox by
 * address (their ranges hold ordinary private addresses): AWS's over IPv6, Alibaba Cloud's (in the
 * carrier-grade NAT range, which Tailscale also uses), Oracle Cloud's. IPv6 forms that embed an
 * IPv4 address (NAT64, 6to4, Teredo) are refused whole (sandboxRefusedRanges), as in production.
 */
const sandboxRefusedAddresses = new Set(['fd00:ec2::254', '100.100.100.200', '192.0.0.192'].map((address) => ipaddr.process(address).toNormalizedString()));

/** Whether a webhook may be sent to `address` in `mode`: public unicast only in production. */
export function isAllowedAddress(address: string, mode: Mode): boolean {
  if (mode === 'production') return isPublicAddress(address);
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return !sandboxRefusedRanges.has(parsed.range()) && !sandboxRefusedAddresses.has(parsed.toNormalizedString());
}

/** The URL's host as a bare IP address when it is one (IPv6 comes in brackets), else undefined. */
export function ipLiteralOf(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return net.isIP(host) ? host : undefined;
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

function notAllowed(message: string): AppError {
  return new AppError('WEBHOOK_URL_NOT_ALLOWED', message, { details: [{ field: 'url', message }] });
}

/** Parses and checks the URL's shape; the same rules at creation and at delivery. Returns a reason or the URL. */
export function parseWebhookUrl(raw: string, mode: Mode): { url: URL } | { problem: string; notAllowed: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The WHATWG parser refuses a port past 65535 as it refuses a URL that is not one: say which.
    const port = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(raw)?.[1];
    if (port !== undefined && Number(port) > 65_535) return { problem: `has port ${port}; a port is 1 to 65535`, notAllowed: false };
    return { problem: 'must be an absolute URL such as https://example.com/webhooks', notAllowed: false };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must use http or https', notAllowed: false };
  // Port 0 names no endpoint: nothing can listen there.
  if (url.port === '0') return { problem: 'has port 0; a port is 1 to 65535', notAllowed: false };
  if (url.username !== '' || url.password !== '') return { problem: 'must not contain credentials (user:password@)', notAllowed: false };
  if (url.hostname === '') return { problem: 'must name a host', notAllowed: false };
  if (url.hash !== '') return { problem: 'must not contain a fragment (#...)', notAllowed: false };
  if (mode === 'production') {
    if (url.protocol !== 'https:') return { problem: 'must use https in production', notAllowed: true };
    const literal = ipLiteralOf(url);
    if (literal !== undefined && !isPublicAddress(literal)) {
      return { problem: `must not point to a loopback, private, link-local or otherwise non-public address (${literal})`, notAllowed: true };
    }
    if (isLocalhostName(url.hostname)) return { problem: 'must not point to localhost', notAllowed: true };
  } else {
    const literal = ipLiteralOf(url);
    if (literal !== undefined && !isAllowedAddress(literal, mode)) {
      return { problem: `must not point to a link-local, unspecified, multicast or broadcast address, a cloud metadata service or an IPv6 form of an IPv4 address (${literal}); in the sandbox, loopback and private addresses are fine`, notAllowed: true };
    }
  }
  return { url };
}

async function resolveAll(hostname: string): Promise<dns.LookupAddress[] | undefined> {
  return withinTime(dns.promises.lookup(hostname, { all: true, verbatim: true }).catch(() => undefined), creationLookupTimeoutMs, undefined);
}

/** Checks a subscription URL given by a client (create or update); throws a 400 naming `url`. */
export async function checkWebhookUrl(raw: string, mode: Mode): Promise<string> {
  if (raw.length > webhookUrlLengthMax) throw validationError('url', `must be at most ${webhookUrlLengthMax} characters`);
  const parsed = parseWebhookUrl(raw, mode);
  if ('problem' in parsed) {
    if (parsed.notAllowed) throw notAllowed(`url ${parsed.problem}.`);
    throw validationError('url', parsed.problem);
  }
  // What the URL parser quietly repaired is refused, so that the URL stored is the URL called.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
  if (/[\s\\\u0000-\u001f\u007f]/.test(raw)) throw validationError('url', 'must not contain spaces, control characters or backslashes');
  if (!/^https?:\/\/[^/]/i.test(raw)) throw validationError('url', 'must be an absolute URL such as https://example.com/webhooks (scheme, "://", then the host)');
  // An empty fragment ("…/#") and empty credentials ("http://:@host") parse to nothing at all.
  if (raw.includes('#')) throw validationError('url', 'must not contain a fragment (#...)');
  const authority = /^https?:\/\/([^/?#]*)/i.exec(raw)?.[1] ?? '';
  if (authority.includes('@')) throw validationError('url', 'must not contain credentials (user:password@)');
  // The host as typed must be the host called: the parser drops soft hyphens, reads full-width
  // digits, percent-encoding and short IPv4 forms (127.1), and converts international names.
  const defaultPort = parsed.url.protocol === 'https:' ? '443' : '80';
  const typed = authority.toLowerCase();
  if (typed !== parsed.url.host && typed !== `${parsed.url.hostname}:${defaultPort}`) {
    throw validationError('url', `must write its host as it is called: ${parsed.url.host} (the URL parser reads ${JSON.stringify(authority)} so)`);
  }
  if (ipLiteralOf(parsed.url) === undefined) {
    const problem = hostNameProblem(parsed.url.hostname);
    if (problem !== undefined) throw validationError('url', problem);
  }
  // Its path and query follow the text rule: an invisible or direction-changing character (U+200B,
  // U+202E) made the URL shown read otherwise than the one called (until 2026-12-05; found by an audit).
  assertPlainText(raw, 'url');
  if (ipLiteralOf(parsed.url) === undefined && !isLocalhostName(parsed.url.hostname)) {
    const addresses = await resolveAll(parsed.url.hostname);
    const refused = addresses?.find((entry) => !isAllowedAddress(entry.address, mode));
    if (refused) {
      const what = mode === 'production' ? 'a non-public address' : 'a link-local, unspecified, multicast or broadcast address, a cloud metadata service or an IPv6 form of an IPv4 address';
      throw notAllowed(`url must not point to ${what}: ${parsed.url.hostname} resolves to ${refused.address}.`);
    }
  }
  return raw;
}

/**
 * What makes a host name one no DNS lookup can answer (RFC 1035 and RFC 1123: labels of 1 to 63
 * letters, digits and hyphens, not starting or ending with a hyphen; 253 characters in all), which the URL parser
 * lets through; until 2026-12-06 such a subscription was created and only its deliveries failed
 * (found by an audit). An underscore is left alone: private resolvers (Docker's, for one) answer
 * names that have one. A final dot (an absolute name) is allowed.
 */
function hostNameProblem(hostname: string): string | undefined {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name.length > 253) return `has a host name of ${name.length} characters; a DNS name has at most 253`;
  for (const label of name.split('.')) {
    if (label === '') return `has an empty label in its host name ${hostname} (two dots in a row, or a leading dot)`;
    if (label.length > 63) return `has a label of ${label.length} characters in its host name; a DNS label has at most 63`;
    if (label.startsWith('-') || label.endsWith('-')) return `has a label that starts or ends with a hyphen in its host name (${label}); no DNS name does`;
    if (!/^[a-z0-9_-]+$/i.test(label)) return `has a character other than a letter, digit, hyphen or underscore in its host name (${label}); no DNS name does`;
  }
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
/** Resolves every address of a name (dns.lookup with all: true, by default). */
export type ResolveAll = (hostname: string, options: dns.LookupOptions, callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

const systemResolveAll: ResolveAll = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, callback);
};

/**
 * A `lookup` for outgoing sockets that refuses non-public addresses. The connection then uses
 * exactly the address checked here, which closes the gap a separate check-then-connect leaves
 * (DNS rebinding). A name with any non-public address is refused as a whole.
 */
export function guardedLookupWith(resolve: ResolveAll, mode: Mode = 'production') {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, options, (error, addresses) => {
      if (error) {
        callback(error, []);
        return;
      }
      const refused = addresses.find((entry) => !isAllowedAddress(entry.address, mode));
      const first = addresses[0];
      if (refused || !first) {
        const what = mode === 'production' ? 'not a public address' : 'link-local, unspecified, multicast or broadcast, a cloud metadata service or an IPv6 form of an IPv4 address';
        callback(new AddressNotAllowedError(`${hostname} resolves to ${refused?.address ?? 'nothing'}, which is ${what}`), []);
        return;
      }
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

export const guardedLookup = guardedLookupWith(systemResolveAll);

/** The address check of outgoing webhook connections in `mode`, on the system resolver. */
export function guardedLookupFor(mode: Mode): typeof guardedLookup {
  return mode === 'production' ? guardedLookup : guardedLookupWith(systemResolveAll, mode);
}
