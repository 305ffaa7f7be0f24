/**
 * The vault (issue 20): tokens for the card-data SDK, reveal endpoints authenticated by those
 * tokens alone, a hosted reveal frame, and the audit. See docs/vault.md.
 */
export { registerVaultRoutes } from './vault.routes.js';
export { verifyVaultToken, vaultTokenTtlSeconds, rebaseSecretOverlap, type VaultTokenClaims } from './vault-token.js';
