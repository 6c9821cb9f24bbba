-- Inbound mail accepted by SMTP and not yet processed: the raw message, stored (group-committed) before the
-- sender hears 250, then claimed with a lease by a worker that parses, threads, classifies and stores it and
-- deletes it here in the same transaction. A message that cannot be processed stays here, quarantined with why.
CREATE TABLE inbound_queue (
  id text PRIMARY KEY,
  raw bytea NOT NULL,
  destinations jsonb NOT NULL,
  received_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  lease_token text,
  lease_expires_at timestamptz,
  quarantined_reason text
);
CREATE INDEX inbound_queue_pending ON inbound_queue (id) WHERE quarantined_reason IS NULL;
