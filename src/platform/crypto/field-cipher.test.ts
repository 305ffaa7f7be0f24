import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { encryptionKeyFileName, FieldCipher, fieldCipherOf, loadOrCreateKeyFile, parseEncryptionKey } from './field-cipher.js';
import { temporaryFolder } from '../../../test/support/temp-folder.js';

const key = crypto.randomBytes(32);

describe('FieldCipher', () => {
  it('round-trips a value, with a fresh nonce every time', () => {
    const cipher = new FieldCipher(key);
    const first = cipher.encrypt('123-45-6789', 'client:customer:ssn');
    const second = cipher.encrypt('123-45-6789', 'client:customer:ssn');
    expect(first).not.toBe(second);
    expect(first).not.toContain('6789');
    expect(cipher.decrypt(first, 'client:customer:ssn')).toBe('123-45-6789');
    expect(cipher.decrypt(second, 'client:customer:ssn')).toBe('123-45-6789');
  });

  it('refuses a value moved to another row or field, or altered', () => {
    const cipher = new FieldCipher(key);
    const stored = cipher.encrypt('P1234567', 'client:customer-1:documentPassport');
    expect(() => cipher.decrypt(stored, 'client:customer-2:documentPassport')).toThrow();
    expect(() => cipher.decrypt(stored, 'client:customer-1:documentLicense')).toThrow();
    const parts = stored.split('.');
    const body = Buffer.from(parts[4] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    parts[4] = body.toString('base64url');
    expect(() => cipher.decrypt(parts.join('.'), 'client:customer-1:documentPassport')).toThrow();
  });

  it('says plainly when the key changed', () => {
    const stored = new FieldCipher(key).encrypt('x', 'a');
    expect(() => new FieldCipher(crypto.randomBytes(32)).decrypt(stored, 'a')).toThrow(/OPENBAAS_ENCRYPTION_KEY .* changed/);
  });
});

describe('parseEncryptionKey', () => {
  it('accepts 32 bytes in hex or base64 and nothing else', () => {
    expect(parseEncryptionKey(key.toString('hex'))?.equals(key)).toBe(true);
    expect(parseEncryptionKey(key.toString('base64'))?.equals(key)).toBe(true);
    expect(parseEncryptionKey(key.toString('base64url'))?.equals(key)).toBe(true);
    expect(parseEncryptionKey('abc')).toBeUndefined();
    expect(parseEncryptionKey(crypto.randomBytes(16).toString('hex'))).toBeUndefined();
    expect(parseEncryptionKey(crypto.randomBytes(31).toString('base64'))).toBeUndefined();
  });
});

describe('key configuration', () => {
  it('refuses DATABASE_URL without OPENBAAS_ENCRYPTION_KEY, and a malformed key', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/x' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/x' })).toThrow(/OPENBAAS_ENCRYPTION_KEY is required/);
    expect(() => loadConfig({ OPENBAAS_ENCRYPTION_KEY: 'short' })).toThrow(/64 hex digits/);
    expect(loadConfig({ DATABASE_URL: 'postgres://localhost/x', OPENBAAS_ENCRYPTION_KEY: key.toString('hex') }).encryptionKey?.equals(key)).toBe(true);
  });

  it('generates the embedded key file once, readable by its owner only, and reuses it', () => {
    const folder = temporaryFolder('key');
    const first = loadOrCreateKeyFile(folder);
    const second = loadOrCreateKeyFile(folder);
    expect(first.equals(second)).toBe(true);
    expect(fs.statSync(path.join(folder, encryptionKeyFileName)).mode & 0o777).toBe(0o600);
  });

  it('picks the configured key, the data folder key, or a throwaway key for an in-memory database', () => {
    const folder = temporaryFolder('key');
    const configured = fieldCipherOf({ config: loadConfig({ OPENBAAS_ENCRYPTION_KEY: key.toString('hex') }), database: { kind: 'pglite' } });
    expect(configured.keyId).toBe(new FieldCipher(key).keyId);
    const onDisk = fieldCipherOf({ config: loadConfig({ DATA_DIR: folder }), database: { kind: 'pglite' } });
    expect(onDisk.keyId).toBe(new FieldCipher(loadOrCreateKeyFile(folder)).keyId);
    const memory = fieldCipherOf({ config: loadConfig({ DATA_DIR: folder }, { memory: true }), database: { kind: 'pglite' } });
    expect(memory.keyId).not.toBe(onDisk.keyId);
    expect(() => fieldCipherOf({ config: loadConfig({}), database: { kind: 'postgres' } })).toThrow(/required/);
  });
});
