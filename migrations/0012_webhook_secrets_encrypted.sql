-- Webhook signing secrets are now stored encrypted with the field cipher (OPENBAAS_ENCRYPTION_KEY),
-- in its `v1.<key id>.<nonce>.<tag>.<ciphertext>` form, bound to their client and subscription.
-- Rows written before this migration still hold the secret in plain text (`whsec_…`); each process
-- encrypts those when it starts (sealPlaintextWebhookSecrets, after the migrations), and until then
-- they sign as before. Both forms are accepted here for that reason; nothing writes plain text now.
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_secret_check;
ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_secret_check
  CHECK (secret ~ '^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' OR secret LIKE 'whsec\_%');
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_previous_secret_check;
ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_previous_secret_check
  CHECK (previous_secret ~ '^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' OR previous_secret LIKE 'whsec\_%');
COMMENT ON COLUMN webhook_subscriptions.secret IS
  'the signing secret, encrypted with the field cipher (plain whsec_ text only on rows not yet sealed at startup)';
