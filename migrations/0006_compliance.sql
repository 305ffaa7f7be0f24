-- Compliance: per-client onboarding settings, KYC/KYB onboardings, compliance documents, sandbox
-- check overrides, and the virtual account numbers of wallets. Every key includes client_id,
-- except the two lookups that arrive without a client: the hosted page's token hash and an
-- inbound deposit's virtual account number (both are random or sequence-made, so global).

CREATE TABLE compliance_settings (
  client_id uuid PRIMARY KEY REFERENCES clients (id),
  onboarding_strategy text NOT NULL CHECK (onboarding_strategy IN ('STANDARD', 'EXTERNAL')),
  updated_at timestamptz NOT NULL
);

CREATE TABLE onboardings (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('KYC', 'KYB')),
  strategy text NOT NULL CHECK (strategy IN ('STANDARD', 'EXTERNAL')),
  status text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'EXPIRED', 'ARCHIVED')),
  verification_status text NOT NULL CHECK (verification_status IN
    ('PENDING', 'MANUAL_REVIEW', 'APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'ERROR', 'EXPIRED', 'NOT_REQUIRED')),
  -- The onboarding this one replaced through a re-run.
  previous_onboarding_id uuid,
  -- The SDK link: only the SHA-256 of its secret token is kept.
  sdk_token_sha256 bytea CHECK (sdk_token_sha256 IS NULL OR length(sdk_token_sha256) = 32),
  sdk_expires_at timestamptz,
  sdk_completed_at timestamptz,
  error_type text CHECK (length(error_type) <= 100),
  error_message text CHECK (length(error_message) <= 1000),
  decided_at timestamptz,
  archived_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, customer_id) REFERENCES customers (client_id, id),
  FOREIGN KEY (client_id, previous_onboarding_id) REFERENCES onboardings (client_id, id),
  UNIQUE (client_id, sdk_token_sha256),
  CHECK ((sdk_token_sha256 IS NULL) = (sdk_expires_at IS NULL)),
  CHECK ((status = 'ARCHIVED') = (archived_at IS NOT NULL)),
  CHECK (kind = 'KYC' OR sdk_token_sha256 IS NULL)
);
-- The hosted page finds its onboarding by token hash alone (256 random bits: never shared).
CREATE INDEX onboardings_sdk_token ON onboardings (sdk_token_sha256) WHERE sdk_token_sha256 IS NOT NULL;
CREATE INDEX onboardings_customer ON onboardings (client_id, customer_id, kind, id);
-- At most one running onboarding per customer and kind.
CREATE UNIQUE INDEX onboardings_one_live ON onboardings (client_id, customer_id, kind) WHERE status IN ('PENDING', 'PROCESSING');
-- The expiry worker scans pending links by their deadline.
CREATE INDEX onboardings_pending_expiry ON onboardings (sdk_expires_at) WHERE status = 'PENDING' AND sdk_expires_at IS NOT NULL;

CREATE TABLE compliance_documents (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  -- The onboarding it was produced for (source-of-funds declarations); NULL for plain uploads.
  onboarding_id uuid,
  document_type text NOT NULL CHECK (document_type ~ '^DOC_[A-Z0-9_]+$'),
  file_name text CHECK (length(file_name) BETWEEN 1 AND 255),
  content_type text NOT NULL CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg')),
  size_bytes integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 10485760),
  sha256 bytea NOT NULL CHECK (length(sha256) = 32),
  content bytea NOT NULL,
  -- The declared sources of a generated source-of-funds declaration.
  declaration jsonb CHECK (declaration IS NULL OR jsonb_typeof(declaration) = 'object'),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, customer_id) REFERENCES customers (client_id, id),
  FOREIGN KEY (client_id, onboarding_id) REFERENCES onboardings (client_id, id),
  CHECK (length(content) = size_bytes)
);
CREATE INDEX compliance_documents_customer ON compliance_documents (client_id, customer_id, document_type);

-- Sandbox control: a check forced to pass or fail for one customer.
CREATE TABLE compliance_check_overrides (
  client_id uuid NOT NULL,
  customer_id uuid NOT NULL,
  check_name text NOT NULL CHECK (check_name ~ '^[A-Z][A-Z0-9_]*$'),
  passed boolean NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, customer_id, check_name),
  FOREIGN KEY (client_id, customer_id) REFERENCES customers (client_id, id)
);

-- Virtual account numbers: "70" + a 9-digit serial from this sequence + a Luhn check digit.
-- A sequence never hands out a value twice, so a number is never reused.
CREATE SEQUENCE virtual_account_serial AS bigint MINVALUE 1 MAXVALUE 999999999 NO CYCLE;
ALTER TABLE wallets ADD CONSTRAINT wallets_virtual_account_number_format CHECK (virtual_account_number ~ '^70[0-9]{10}$');
-- A deposit names only the number, so it is unique across every client.
CREATE UNIQUE INDEX wallets_virtual_account_number_key ON wallets (virtual_account_number) WHERE virtual_account_number IS NOT NULL;
