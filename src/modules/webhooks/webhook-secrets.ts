import type { Deps } from '../../platform/deps.js';
import { fieldCipherOf, type FieldCipher } from '../../platform/crypto/field-cipher.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { secretPrefix } from './webhook-signing.js';
import './webhooks.tables.js';

/** How a subscription's secrets are stored: encrypted, or in plain text for a row not yet sealed. */
export interface StoredSecrets {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/** Most opened secrets kept in memory by one process (each delivery would otherwise decrypt). */
const openedSecretsMax = 1_000;

/**
 * Keeps the signing secrets encrypted at rest. A secret has to be readable to sign, so it cannot
 * be hashed like an API key; it is encrypted with the field cipher (OPENBAAS_ENCRYPTION_KEY),
 * bound to its client and subscription, so a database dump holds no usable secret and a value
 * copied onto another subscription does not open. The same value serves as current and, after a
 * rotation, as previous secret. A value still in plain text (`whsec_…`, written before migration
 * 0012) opens as itself until `sealPlaintextWebhookSecrets` has encrypted it.
 */
export class WebhookSecretBox {
  readonly #opened = new Map<string, string>();

  constructor(private readonly cipher: FieldCipher) {}

  seal(clientId: string, subscriptionId: string, secret: string): string {
    if (!secret.startsWith(secretPrefix)) throw new Error('a webhook secret starts with whsec_');
    return this.cipher.encrypt(secret, boundTo(clientId, subscriptionId));
  }

  open(clientId: string, subscriptionId: string, stored: string): string {
    if (stored.startsWith(secretPrefix)) return stored;
    const cacheKey = `${clientId}/${subscriptionId}/${stored}`;
    let secret = this.#opened.get(cacheKey);
    if (secret === undefined) {
      secret = this.cipher.decrypt(stored, boundTo(clientId, subscriptionId));
      if (this.#opened.size >= openedSecretsMax) this.#opened.clear();
      this.#opened.set(cacheKey, secret);
    }
    return secret;
  }

  /** The secrets a delivery made at `now` is signed with: the current one, plus the previous one during the overlap. */
  signingSecrets(clientId: string, subscriptionId: string, stored: StoredSecrets, now: Date): string[] {
    const secrets = [this.open(clientId, subscriptionId, stored.secret)];
    if (stored.previous_secret && stored.previous_secret_expires_at && now < stored.previous_secret_expires_at) {
      secrets.push(this.open(clientId, subscriptionId, stored.previous_secret));
    }
    return secrets;
  }
}

const boundTo = (clientId: string, subscriptionId: string) => `${clientId}:webhook:${subscriptionId}:secret`;

const boxes = new WeakMap<FieldCipher, WebhookSecretBox>();

/** The secret box of a running program (one per field cipher, so its cache is shared). */
export function webhookSecretBoxOf(deps: Pick<Deps, 'config' | 'database'>): WebhookSecretBox {
  const cipher = fieldCipherOf(deps);
  let box = boxes.get(cipher);
  if (!box) {
    box = new WebhookSecretBox(cipher);
    boxes.set(cipher, box);
  }
  return box;
}

/** Rows sealed per transaction by `sealPlaintextWebhookSecrets`. */
const sealBatchMax = 500;

/**
 * Encrypts every secret still stored in plain text (subscriptions created before migration
 * 0012). Runs at startup, after the migrations; safe with several processes at once: a row is
 * rewritten only if it still holds what was read, so a concurrent rotation or another process's
 * sealing wins and the row is simply read again. Returns the number of rows rewritten.
 */
export async function sealPlaintextWebhookSecrets(deps: Pick<Deps, 'config' | 'database' | 'db'>): Promise<number> {
  const box = webhookSecretBoxOf(deps);
  const plaintext = `${secretPrefix.replace(/_/g, '\\_')}%`;
  let sealed = 0;
  for (;;) {
    const rows = await deps.db
      .selectFrom('webhook_subscriptions')
      .select(['client_id', 'id', 'secret', 'previous_secret'])
      .where((eb) => eb.or([eb('secret', 'like', plaintext), eb('previous_secret', 'like', plaintext)]))
      .limit(sealBatchMax)
      .execute();
    if (rows.length === 0) return sealed;
    const seal = (clientId: string, id: string, stored: string) => (stored.startsWith(secretPrefix) ? box.seal(clientId, id, stored) : stored);
    await withTransaction(deps.db, async (tx) => {
      for (const row of rows) {
        const result = await tx
          .updateTable('webhook_subscriptions')
          .set({
            secret: seal(row.client_id, row.id, row.secret),
            previous_secret: row.previous_secret === null ? null : seal(row.client_id, row.id, row.previous_secret),
          })
          .where('client_id', '=', row.client_id)
          .where('id', '=', row.id)
          .where('secret', '=', row.secret)
          .where((eb) => (row.previous_secret === null ? eb('previous_secret', 'is', null) : eb('previous_secret', '=', row.previous_secret)))
          .executeTakeFirst();
        sealed += Number(result.numUpdatedRows);
      }
    });
  }
}
