-- Webhooks (DESIGN §7.11): endpoints of a company subscribed to events, and
-- their deliveries. A delivery is one event for one webhook: `pending` (due at
-- `next_attempt_at`, leased by one worker while an attempt is in flight) →
-- `delivered`, or `failed` once its attempts are spent. The secret signs the
-- deliveries (Standard Webhooks), so it is kept as given, never shown again.
CREATE TABLE webhooks (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  url text NOT NULL,
  events jsonb NOT NULL,
  description text,
  enabled boolean NOT NULL,
  disabled_reason text,
  secret text NOT NULL,
  last_success_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX webhooks_company ON webhooks (company_id, id DESC);

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  company_id text NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  payload jsonb NOT NULL,
  event_at timestamptz NOT NULL,
  test boolean NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL,
  next_attempt_at timestamptz,
  lease_token text,
  lease_until timestamptz,
  response_status integer,
  response_excerpt text,
  latency_ms integer,
  error text,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id DESC);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
