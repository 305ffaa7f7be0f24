import type { Deps } from '../../platform/deps.js';
import { derivedKey, encryptionKeyOf, FieldCipher } from '../../platform/crypto/field-cipher.js';
import crypto from 'node:crypto';
import { deriveSandboxCvv, type CardExpiry } from './network/index.js';

/**
 * Where card numbers live. A PAN is stored only encrypted (AES-256-GCM, bound to its client and
 * card so a ciphertext copied to another row does not decrypt), with a keyed fingerprint
 * (HMAC-SHA256) that keeps numbers unique per client and finds a card by its number. The CVV is
 * never stored: it is derived again when needed (contract §12.6).
 *
 * The keys: OPENBAAS_VAULT_KEY when set, otherwise a key derived from the encryption key; from it,
 * one key per purpose (HKDF), so the fingerprint key cannot decrypt and the reverse.
 */
export class CardVault {
  readonly #cipher: FieldCipher;
  readonly #fingerprintKey: Buffer;
  readonly #cvvKey: Buffer;

  constructor(vaultKey: Buffer) {
    this.#cipher = new FieldCipher(derivedKey(vaultKey, 'card-vault/pan'));
    this.#fingerprintKey = derivedKey(vaultKey, 'card-vault/fingerprint');
    this.#cvvKey = derivedKey(vaultKey, 'card-vault/cvv');
  }

  /** The id every number this vault encrypts carries (checked against the database's at start: key-check.ts). */
  get keyId(): string {
    return this.#cipher.keyId;
  }

  encryptPan(pan: string, clientId: string, cardId: string): string {
    return this.#cipher.encrypt(pan, boundTo(clientId, cardId));
  }

  decryptPan(stored: string, clientId: string, cardId: string): string {
    return this.#cipher.decrypt(stored, boundTo(clientId, cardId));
  }

  fingerprint(pan: string): string {
    return crypto.createHmac('sha256', this.#fingerprintKey).update(pan, 'utf8').digest('hex');
  }

  /** SANDBOX value: stable for a card, never stored or logged (see deriveSandboxCvv). */
  cvv(pan: string, expiry: CardExpiry): string {
    return deriveSandboxCvv(this.#cvvKey, pan, expiry);
  }
}

function boundTo(clientId: string, cardId: string): string {
  return `${clientId}:card:${cardId}:pan`;
}

const vaults = new WeakMap<Deps['config'], CardVault>();

/** The card vault of a running program. */
export function cardVaultOf(deps: Pick<Deps, 'config' | 'database'>): CardVault {
  const cached = vaults.get(deps.config);
  if (cached) return cached;
  const vault = new CardVault(deps.config.vaultKey ?? derivedKey(encryptionKeyOf(deps), 'vault-key'));
  vaults.set(deps.config, vault);
  return vault;
}
