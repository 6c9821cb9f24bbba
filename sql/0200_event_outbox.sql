-- Events waiting to be fanned out to webhooks. A change and its event commit
-- (or roll back) in one transaction; the delivery worker turns each event into
-- one delivery per matching webhook and deletes it, in one transaction too.
CREATE TABLE event_outbox (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
