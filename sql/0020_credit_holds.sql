-- Credits held for model calls in flight (docs/usage-and-credits.md): a call
-- holds its worst-case cost before it starts and settles to its real cost
-- when it ends. The organization's held total lives beside its usage so that
-- one conditional UPDATE can check usage + held + hold <= limit. A hold
-- whose process stopped renewing it expires and is released by a sweeper.
ALTER TABLE organizations ADD COLUMN credit_held bigint NOT NULL DEFAULT 0 CHECK (credit_held >= 0);

ALTER TABLE organizations ADD COLUMN data_credit_held bigint NOT NULL DEFAULT 0 CHECK (data_credit_held >= 0);

CREATE TABLE credit_holds (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  pool text NOT NULL CHECK (pool IN ('credits', 'data')),
  amount bigint NOT NULL CHECK (amount >= 0),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX credit_holds_expiry ON credit_holds (expires_at);
