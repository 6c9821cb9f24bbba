-- One row per list row of a campaign, made when sending starts. status:
-- pending (to deliver), sent, failed, skipped (suppressed, duplicate, or
-- cancelled before delivery). fields are the row's merge fields, copied so
-- that later edits of the list do not change a send in progress. The
-- sending worker claims pending rows with lease_token / lease_expires_at and
-- marks one sent only while its lease is still its own.
CREATE TABLE campaign_recipients (
  id text PRIMARY KEY,
  campaign_id text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  company_id text NOT NULL,
  list_row_id text NOT NULL,
  email text NOT NULL,
  fields jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_token text,
  lease_expires_at timestamptz,
  message_id text,
  sent_at timestamptz,
  error_message text,
  opened boolean NOT NULL DEFAULT false,
  open_count integer NOT NULL DEFAULT 0,
  first_opened_at timestamptz,
  last_opened_at timestamptz,
  clicked boolean NOT NULL DEFAULT false,
  click_count integer NOT NULL DEFAULT 0,
  first_clicked_at timestamptz,
  last_clicked_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX campaign_recipients_page ON campaign_recipients (campaign_id, id DESC);
CREATE INDEX campaign_recipients_pending ON campaign_recipients (campaign_id, id) WHERE status = 'pending';
CREATE INDEX campaign_recipients_lease ON campaign_recipients (lease_token) WHERE lease_token IS NOT NULL;
