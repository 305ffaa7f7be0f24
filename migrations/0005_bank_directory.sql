-- Bank directory: reference data about banks, used to validate US routing numbers, SWIFT/BIC
-- codes and IBANs and to name the bank behind them.
--
-- Unlike every other table, these tables are global reference data, the same for all clients,
-- and deliberately carry no client_id: they hold public facts about banks (as published by the
-- Federal Reserve and SWIFT), never a client's data, and no API call can change them. They are
-- filled from the directory built into the program when a server starts and finds a kind
-- missing or its built-in data outdated, and replaced one kind at a time by
-- `openbaas directory import`.

-- Where each kind of data came from: the built-in directory or an imported file.
CREATE TABLE bank_directory_sources (
  kind text PRIMARY KEY CHECK (kind IN ('FEDACH', 'FEDWIRE', 'BIC', 'IBAN_BANK_CODE')),
  origin text NOT NULL CHECK (origin IN ('BUILT_IN', 'IMPORT')),
  -- SHA-256 of the built-in data or of the imported file, so a newer built-in directory
  -- replaces an older one at start, while imported data is never replaced by the built-in.
  version text NOT NULL CHECK (version ~ '^[0-9a-f]{64}$'),
  file_name text CHECK (length(file_name) <= 255),
  record_count integer NOT NULL CHECK (record_count >= 0),
  loaded_at timestamptz NOT NULL
);

-- Routing numbers that take ACH entries (the FedACH participant directory).
CREATE TABLE bank_directory_ach_participants (
  routing_number text PRIMARY KEY CHECK (routing_number ~ '^[0-9]{9}$'),
  bank_name text NOT NULL CHECK (length(bank_name) BETWEEN 1 AND 200),
  address text CHECK (length(address) <= 200),
  city text CHECK (length(city) <= 100),
  state text CHECK (state ~ '^[A-Z]{2}$'),
  zip_code text CHECK (zip_code ~ '^[0-9]{5}(-[0-9]{4})?$'),
  phone_number text CHECK (phone_number ~ '^[0-9]{3}-[0-9]{3}-[0-9]{4}$'),
  -- Set when the Federal Reserve says to send entries to another routing number instead.
  new_routing_number text CHECK (new_routing_number ~ '^[0-9]{9}$')
);

-- Routing numbers known to Fedwire Funds (the Fedwire participant directory). The official
-- file has no street address or ZIP; the built-in directory may supply them.
CREATE TABLE bank_directory_fedwire_participants (
  routing_number text PRIMARY KEY CHECK (routing_number ~ '^[0-9]{9}$'),
  telegraphic_name text CHECK (length(telegraphic_name) <= 100),
  bank_name text NOT NULL CHECK (length(bank_name) BETWEEN 1 AND 200),
  address text CHECK (length(address) <= 200),
  city text CHECK (length(city) <= 100),
  state text CHECK (state ~ '^[A-Z]{2}$'),
  zip_code text CHECK (zip_code ~ '^[0-9]{5}(-[0-9]{4})?$'),
  funds_transfer_eligible boolean NOT NULL,
  -- A settlement-only participant receives settlement transfers only, not customer transfers.
  settlement_only boolean NOT NULL,
  book_entry_securities_eligible boolean NOT NULL,
  revised_on date
);

-- SWIFT/BIC codes, always in their 11-character form (branch XXX is the primary office).
CREATE TABLE bank_directory_bics (
  bic text PRIMARY KEY CHECK (bic ~ '^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{5}$'),
  bank_name text NOT NULL CHECK (length(bank_name) BETWEEN 1 AND 200),
  address text CHECK (length(address) <= 300),
  city text CHECK (length(city) <= 100),
  country_code text NOT NULL CHECK (country_code = substr(bic, 5, 2))
);
-- IBANs of some countries carry the first four letters of the bank's BIC: found by prefix.
CREATE INDEX bank_directory_bics_institution ON bank_directory_bics (substr(bic, 1, 6));

-- National bank codes as they appear inside IBANs (German BLZ, French code banque, ...).
CREATE TABLE bank_directory_iban_bank_codes (
  country_code text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
  bank_code text NOT NULL CHECK (bank_code ~ '^[A-Z0-9]{1,12}$'),
  bank_name text NOT NULL CHECK (length(bank_name) BETWEEN 1 AND 200),
  bic text CHECK (bic ~ '^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{5}$'),
  PRIMARY KEY (country_code, bank_code)
);
