import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * This process's encryption key is not the one this database's fields are encrypted with: it could
 * open none of them, and what it encrypted no other process could open (until 2026-12-05 such a
 * process started and did so; found by an audit). Refused at start.
 */
export class EncryptionKeyMismatchError extends Error {
  constructor(recorded: string, configured: string) {
    super(
      `the encryption key of this process (key id ${configured}) is not the key this database's fields are encrypted with ` +
        `(key id ${recorded}): every process on one database needs the same OPENBAAS_ENCRYPTION_KEY (on the embedded database, ` +
        'its data folder keeps the key in encryption.key: restore that file). Nothing was written.',
    );
    this.name = 'EncryptionKeyMismatchError';
  }
}

/**
 * This process's card vault key (OPENBAAS_VAULT_KEY, or the key derived from the encryption key
 * when it is unset) is not the one this database's card numbers are encrypted with: it could open
 * none of them and would compute other fingerprints. Refused at start (until 2026-12-07 such a
 * process started; found by an audit).
 */
export class VaultKeyMismatchError extends Error {
  constructor(recorded: string, configured: string) {
    super(
      `the card vault key of this process (key id ${configured}) is not the key this database's card numbers are encrypted with ` +
        `(key id ${recorded}): every process on one database needs the same OPENBAAS_VAULT_KEY, or none of them one (the key is then ` +
        'derived from the encryption key). Nothing was written.',
    );
    this.name = 'VaultKeyMismatchError';
  }
}

/**
 * Checks `keyId` (FieldCipher.keyId) against the key the database recorded, and records it when
 * none is: the key of the fields already encrypted (a database of before the check), else this one.
 */
export async function checkEncryptionKey(db: Db, keyId: string): Promise<void> {
  // The key id is the second part of an encrypted field ("v1.<key id>.<nonce>.<tag>.<ciphertext>").
  const existing = sql<{ key_id: string }>`
    SELECT split_part(value, '.', 2) AS key_id FROM (
      (SELECT ssn_ciphertext AS value FROM customers WHERE ssn_ciphertext LIKE 'v1.%' LIMIT 1)
      UNION ALL (SELECT secret_encrypted FROM vault_settings WHERE secret_encrypted LIKE 'v1.%' LIMIT 1)
      UNION ALL (SELECT secret FROM webhook_subscriptions WHERE secret LIKE 'v1.%' LIMIT 1)
    ) AS encrypted LIMIT 1`;
  const recorded = await recordedKeyId(db, 'encryption_key_check', keyId, existing);
  if (recorded !== keyId) throw new EncryptionKeyMismatchError(recorded, keyId);
}

/** The same for the card vault's key (CardVault.keyId), taken from the card numbers already encrypted. */
export async function checkVaultKey(db: Db, keyId: string): Promise<void> {
  const existing = sql<{ key_id: string }>`SELECT split_part(pan_encrypted, '.', 2) AS key_id FROM cards WHERE pan_encrypted LIKE 'v1.%' LIMIT 1`;
  const recorded = await recordedKeyId(db, 'vault_key_check', keyId, existing);
  if (recorded !== keyId) throw new VaultKeyMismatchError(recorded, keyId);
}

/** The key id `table` records, recording the one of the data already encrypted (`existing`), else `keyId`, when it holds none. */
async function recordedKeyId(db: Db, table: 'encryption_key_check' | 'vault_key_check', keyId: string, existing: RawBuilder<{ key_id: string }>): Promise<string> {
  const read = async () => (await sql<{ key_id: string }>`SELECT key_id FROM ${sql.table(table)}`.execute(db)).rows[0]?.key_id;
  const recorded = await read();
  if (recorded !== undefined) return recorded;
  const candidate = (await existing.execute(db)).rows[0]?.key_id ?? keyId;
  await sql`INSERT INTO ${sql.table(table)} (key_id) VALUES (${candidate}) ON CONFLICT (singleton) DO NOTHING`.execute(db);
  // Another process may have recorded its own first.
  return (await read()) ?? candidate;
}
