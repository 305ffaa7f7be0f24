import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';

/** AES-256-GCM: 32-byte key, 12-byte random nonce per value, 16-byte tag. */
const keyLengthBytes = 32;
const nonceLengthBytes = 12;
const formatVersion = 'v1';
export const encryptionKeyFileName = 'encryption.key';

/**
 * Encrypts single fields (SSN, document numbers) before they reach the database. Each value is
 * bound to where it belongs through the additional authenticated data (for example
 * `client:customer:ssn`), so a ciphertext copied into another row or column does not decrypt.
 *
 * Stored form: `v1.<key id>.<nonce>.<tag>.<ciphertext>` (base64url parts). The key id is the
 * first 8 hex digits of the key's SHA-256, so a value written under another key fails with a
 * clear message instead of a bare authentication error.
 */
export class FieldCipher {
  readonly keyId: string;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== keyLengthBytes) throw new Error(`an encryption key must be ${keyLengthBytes} bytes`);
    this.#key = Buffer.from(key);
    this.keyId = crypto.createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  encrypt(plaintext: string, boundTo: string): string {
    const nonce = crypto.randomBytes(nonceLengthBytes);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [formatVersion, this.keyId, nonce.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  decrypt(stored: string, boundTo: string): string {
    const [version, keyId, nonce, tag, ciphertext] = stored.split('.');
    if (version !== formatVersion || !keyId || nonce === undefined || tag === undefined || ciphertext === undefined) {
      throw new Error('an encrypted field is not in the v1 format');
    }
    if (keyId !== this.keyId) {
      throw new Error(
        `an encrypted field was written with key ${keyId} but the configured key is ${this.keyId}: ` +
          'OPENBAAS_ENCRYPTION_KEY (or the key file in the data folder) changed',
      );
    }
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.#key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** Parses OPENBAAS_ENCRYPTION_KEY: 32 bytes as 64 hex digits or as base64 (44 characters). */
export function parseEncryptionKey(raw: string): Buffer | undefined {
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return key.length === keyLengthBytes ? key : undefined;
  }
  return undefined;
}

/**
 * The embedded database's key when none is configured: generated once and kept next to the
 * database in the data folder (readable by the owner only). Creating it with the exclusive flag
 * means two processes starting at once agree on one key.
 */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, encryptionKeyFileName);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(keyLengthBytes).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = parseEncryptionKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a 32-byte key in hex or base64`);
  return key;
}

const keys = new WeakMap<Config, Buffer>();
const ciphers = new WeakMap<Config, FieldCipher>();

/**
 * The encryption key of a running program. It comes from OPENBAAS_ENCRYPTION_KEY; without it
 * the embedded database uses a key file in its data folder (an in-memory database a throwaway
 * key). PostgreSQL without a configured key is refused when the configuration is loaded, since
 * several processes share that database and must share the key.
 */
export function encryptionKeyOf(deps: { config: Config; database: Pick<DatabaseHandle, 'kind'> }): Buffer {
  const cached = keys.get(deps.config);
  if (cached) return cached;
  let key = deps.config.encryptionKey;
  if (!key) {
    if (deps.database.kind === 'postgres') {
      throw new Error('OPENBAAS_ENCRYPTION_KEY is required when the database is PostgreSQL');
    }
    key = deps.config.memory ? crypto.randomBytes(keyLengthBytes) : loadOrCreateKeyFile(deps.config.dataDir);
  }
  keys.set(deps.config, key);
  return key;
}

/** The field cipher of a running program, with the key of encryptionKeyOf. */
export function fieldCipherOf(deps: { config: Config; database: Pick<DatabaseHandle, 'kind'> }): FieldCipher {
  const cached = ciphers.get(deps.config);
  if (cached) return cached;
  const cipher = new FieldCipher(encryptionKeyOf(deps));
  ciphers.set(deps.config, cipher);
  return cipher;
}

/**
 * A key of its own for one purpose (card numbers, their fingerprints, ...), derived from `master`
 * with HKDF-SHA256: knowing one derived key tells nothing about the master or the others.
 */
export function derivedKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), Buffer.from(`openbaas/${purpose}`, 'utf8'), keyLengthBytes));
}
