-- Marketing campaigns and their body versions. status moves as
-- docs/campaigns.md tells (draft → scheduled → sending ⇄ paused → sent, or
-- cancelled / failed). The lease columns let several server processes share
-- one database: the campaign scheduler claims a due scheduled campaign by
-- setting lease_token and lease_expires_at (as scheduled_tasks does).
CREATE TABLE campaigns (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id text REFERENCES users (id),
  name text NOT NULL,
  subject text NOT NULL,
  from_name text,
  from_email text,
  reply_to text,
  list_id text,
  status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled', 'failed')),
  body_document jsonb NOT NULL,
  body_version integer NOT NULL,
  scheduled_at timestamptz,
  started_at timestamptz,
  completed_at timestamptz,
  error_message text,
  lease_token text,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX campaigns_company ON campaigns (company_id, id DESC);
CREATE INDEX campaigns_due ON campaigns (scheduled_at) WHERE status = 'scheduled';
CREATE INDEX campaigns_sending ON campaigns (id) WHERE status = 'sending';
-- Every save of a campaign's body document, numbered from 1.
CREATE TABLE campaign_versions (
  campaign_id text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  version integer NOT NULL,
  body_document jsonb NOT NULL,
  source text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (campaign_id, version)
);
