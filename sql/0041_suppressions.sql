-- The company-wide suppression list: addresses no campaign or sequence may
-- mail (unsubscribed, hard bounced, or added by hand). One row per company and
-- lower-cased address; email keeps the case it was first seen with.
CREATE TABLE suppressions (
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  email_key text NOT NULL,
  email text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('unsubscribed', 'hard_bounce', 'manual')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (company_id, email_key)
);

CREATE INDEX suppressions_company_created ON suppressions (company_id, created_at DESC, email_key);
