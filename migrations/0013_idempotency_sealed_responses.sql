-- A write whose response shows a secret once (a webhook signing secret, a person's document
-- numbers) keeps replaying that response for the idempotency retention, so its stored copy is
-- encrypted with the field cipher (OPENBAAS_ENCRYPTION_KEY), bound to the client and the key:
-- response_body then holds the ciphertext as a JSON string and response_sealed is true.
ALTER TABLE idempotency_keys ADD COLUMN response_sealed boolean NOT NULL DEFAULT false;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_sealed_is_text
  CHECK (NOT response_sealed OR jsonb_typeof(response_body) = 'string');
