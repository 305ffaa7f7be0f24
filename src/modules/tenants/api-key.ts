import crypto from 'node:crypto';
import net from 'node:net';
import { apiKeyPrefixLength } from '../../platform/http/auth.js';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const apiKeySecretLength = 32;
export const apiKeyPattern = /^sk_(test|live)_[A-Za-z0-9]{16,96}$/;

export function generateApiKey(live: boolean): string {
  const bytes = crypto.randomBytes(apiKeySecretLength * 2);
  let secret = '';
  for (const byte of bytes) {
    // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
    if (byte < 248) secret += base62[byte % 62];
    if (secret.length === apiKeySecretLength) break;
  }
  if (secret.length < apiKeySecretLength) return generateApiKey(live);
  return `sk_${live ? 'live' : 'test'}_${secret}`;
}

export function apiKeyPrefix(key: string): string {
  return key.slice(0, apiKeyPrefixLength);
}

export function hashApiKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key, 'utf8').digest();
}

export function hashesMatch(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** Parses "10.0.0.0/8", "2001:db8::/32" or a single address into a BlockList entry. */
export function parseCidr(value: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address, prefixText, ...rest] = value.split('/');
  // An IPv6 zone (fe80::1%eth0) names an interface of the sender's machine, not an address the
  // server can match (until 2026-12-05 it was stored as sent; found by an audit).
  if (!address || rest.length > 0 || address.includes('%')) return undefined;
  const version = net.isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const prefixMax = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? prefixMax : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > prefixMax || (prefixText !== undefined && !/^(?:0|[1-9]\d*)$/.test(prefixText))) {
    return undefined;
  }
  return { address, prefix, family };
}

export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  const list = new net.BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  const normalized = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  const family = net.isIPv4(normalized) ? 'ipv4' : 'ipv6';
  return list.check(normalized, family);
}
