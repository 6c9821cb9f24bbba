-- Secrets this installation generates once and every process shares, such
-- as the key that signs campaign tracking links when TRACKING_SECRET is not
-- configured. The first process to start stores its candidate; the others
-- read it.
CREATE TABLE installation_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL
);
