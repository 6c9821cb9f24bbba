-- Sending domains of a company (docs/domains.md): the DKIM key pair made for
-- it (the private key sealed with AES-256-GCM, never returned), and the last
-- DNS check of each record to publish (checks: purpose -> {status, found}).
-- A domain is unique per company; two companies may claim one name, each
-- proving it with its own DKIM selector.
CREATE TABLE sending_domains (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  domain text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'verified', 'failed')),
  dkim_selector text NOT NULL,
  dkim_public_key text NOT NULL,
  dkim_private_key text NOT NULL,
  checks jsonb NOT NULL,
  checked_at timestamptz,
  verified_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (company_id, domain)
);
