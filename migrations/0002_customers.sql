-- Customers (individual PRIVATE and business LEGAL), membership programs, portfolios, multi-asset
-- wallets and the person relations of business customers. Every key includes client_id.

CREATE TABLE membership_programs (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  is_default boolean NOT NULL,
  features jsonb NOT NULL CHECK (jsonb_typeof(features) = 'array'),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id)
);
-- Programs are also looked up by display name, case-insensitively.
CREATE UNIQUE INDEX membership_programs_name_key ON membership_programs (client_id, lower(name));
CREATE UNIQUE INDEX membership_programs_one_default ON membership_programs (client_id) WHERE is_default;

-- Clients created before this migration get the same two programs a new client gets.
INSERT INTO membership_programs (client_id, id, name, is_default, features, created_at)
SELECT id, gen_random_uuid(), 'Standard', true,
       '["Virtual account for USD deposits","Debit cards","ACH and FedWire transfers","Internal transfers"]'::jsonb, now()
FROM clients;
INSERT INTO membership_programs (client_id, id, name, is_default, features, created_at)
SELECT id, gen_random_uuid(), 'Premium', false,
       '["Virtual account for USD deposits","Debit and credit cards","ACH, FedWire and SWIFT transfers","Internal transfers","Crypto deposits, withdrawals and trades","Dedicated account numbers"]'::jsonb, now()
FROM clients;

CREATE TABLE customers (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('PRIVATE', 'LEGAL')),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  phone_number text CHECK (phone_number ~ '^[0-9]{2,17}$'),
  phone_country_code text CHECK (phone_country_code ~ '^[0-9]{1,4}$'),
  membership_program_id uuid NOT NULL,
  -- Set by the compliance module: NULL until a KYC or KYB onboarding is started.
  onboarding_id uuid,
  onboarding_status text,
  -- Individual (PRIVATE) identity data.
  first_name text,
  middle_name text,
  last_name text,
  sex text CHECK (sex IN ('MALE', 'FEMALE')),
  birth_date date,
  nationality text CHECK (nationality ~ '^[A-Z]{2}$'),
  tax_id_country text CHECK (tax_id_country ~ '^[A-Z]{2}$'),
  occupation text CHECK (occupation ~ '^[0-9]{2}$'),
  ip_address text,
  -- Sensitive numbers: AES-256-GCM ciphertexts (see src/platform/crypto/field-cipher.ts); the
  -- last four SSN digits are kept apart so the masked form needs no decryption.
  ssn_ciphertext text,
  ssn_last4 text CHECK (ssn_last4 ~ '^[0-9]{4}$'),
  document_id_card_ciphertext text,
  document_license_ciphertext text,
  document_passport_ciphertext text,
  -- Business (LEGAL) data: the KYB block without its address.
  kyb jsonb CHECK (kyb IS NULL OR jsonb_typeof(kyb) = 'object'),
  -- Registration address of an individual, main business address of a business.
  main_address jsonb,
  billing_address jsonb,
  delivery_address jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, membership_program_id) REFERENCES membership_programs (client_id, id),
  CHECK (type = 'LEGAL' OR (first_name IS NOT NULL AND last_name IS NOT NULL)),
  CHECK ((ssn_ciphertext IS NULL) = (ssn_last4 IS NULL))
);
-- One customer per email address and client, whatever the letter case.
CREATE UNIQUE INDEX customers_email_key ON customers (client_id, lower(email));
CREATE INDEX customers_client_type ON customers (client_id, type, id);
CREATE INDEX customers_client_created ON customers (client_id, created_at);

CREATE TABLE portfolios (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  is_default boolean NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  -- Lets wallets reference (portfolio, customer) together, so a wallet's customer is its portfolio's.
  UNIQUE (client_id, customer_id, id),
  FOREIGN KEY (client_id, customer_id) REFERENCES customers (client_id, id)
);
CREATE UNIQUE INDEX portfolios_one_default ON portfolios (client_id, customer_id) WHERE is_default;

CREATE TABLE wallets (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  portfolio_id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  is_primary boolean NOT NULL,
  -- Filled by the virtual-account and bank issues; NULL until then.
  virtual_account_number text,
  dedicated_account_number text,
  vrn text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, customer_id, portfolio_id) REFERENCES portfolios (client_id, customer_id, id)
);
CREATE UNIQUE INDEX wallets_one_primary ON wallets (client_id, customer_id) WHERE is_primary;
CREATE INDEX wallets_customer ON wallets (client_id, customer_id, id);
CREATE INDEX wallets_portfolio ON wallets (client_id, portfolio_id, id);

CREATE TABLE business_person_relations (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  business_customer_id uuid NOT NULL,
  person_customer_id uuid NOT NULL,
  role text NOT NULL CHECK (role IN ('SHAREHOLDER', 'REPRESENTATIVE')),
  ownership_percentage numeric(7, 4) CHECK (ownership_percentage > 0 AND ownership_percentage <= 100),
  representing_start date,
  representing_end date,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  UNIQUE (client_id, business_customer_id, person_customer_id, role),
  FOREIGN KEY (client_id, business_customer_id) REFERENCES customers (client_id, id),
  FOREIGN KEY (client_id, person_customer_id) REFERENCES customers (client_id, id),
  CHECK ((role = 'SHAREHOLDER') = (ownership_percentage IS NOT NULL)),
  CHECK (representing_end IS NULL OR (representing_start IS NOT NULL AND representing_end >= representing_start))
);
CREATE INDEX business_person_relations_person ON business_person_relations (client_id, person_customer_id);
