import { sql } from 'kysely';
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
 * Checks `keyId` (FieldCipher.keyId) against the key the database recorded, and records it when
 * none is: the key of the fields already encrypted (a database of before the check), else this one.
 */
export async function checkEncryptionKey(db: Db, keyId: string): Promise<void> {
  let recorded = (await sql<{ key_id: string }>`SELECT key_id FROM encryption_key_check`.execute(db)).rows[0]?.key_id;
  if (recorded === undefined) {
    // The key id is the second part of an encrypted field ("v1.<key id>.<nonce>.<tag>.<ciphertext>").
    const existing = await sql<{ key_id: string }>`
      SELECT split_part(value, '.', 2) AS key_id FROM (
        (SELECT ssn_ciphertext AS value FROM customers WHERE ssn_ciphertext LIKE 'v1.%' LIMIT 1)
        UNION ALL (SELECT secret_encrypted FROM vault_settings WHERE secret_encrypted LIKE 'v1.%' LIMIT 1)
        UNION ALL (SELECT secret FROM webhook_subscriptions WHERE secret LIKE 'v1.%' LIMIT 1)
      ) AS encrypted LIMIT 1`.execute(db);
    const candidate = existing.rows[0]?.key_id ?? keyId;
    await sql`INSERT INTO encryption_key_check (key_id) VALUES (${candidate}) ON CONFLICT (singleton) DO NOTHING`.execute(db);
    recorded = (await sql<{ key_id: string }>`SELECT key_id FROM encryption_key_check`.execute(db)).rows[0]?.key_id ?? candidate;
  }
  if (recorded !== keyId) throw new EncryptionKeyMismatchError(recorded, keyId);
}
