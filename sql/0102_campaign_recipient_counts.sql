-- The recipients page reads a campaign's metrics from one row kept by the statements that change
-- recipients (src/campaigns/RecipientsRepo.ts), instead of counting the campaign's rows per request;
-- its search (a case-insensitive substring of the address) uses a trigram index.
CREATE TABLE campaign_recipient_counts (
  campaign_id text PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
  total integer NOT NULL DEFAULT 0,
  sent integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0,
  uncertain integer NOT NULL DEFAULT 0,
  opened integer NOT NULL DEFAULT 0,
  clicked integer NOT NULL DEFAULT 0
);
INSERT INTO campaign_recipient_counts (campaign_id, total, sent, failed, skipped, uncertain, opened, clicked)
SELECT campaign_id, count(*), count(*) FILTER (WHERE status = 'sent'), count(*) FILTER (WHERE status = 'failed'),
  count(*) FILTER (WHERE status = 'skipped'), count(*) FILTER (WHERE status = 'uncertain'),
  count(*) FILTER (WHERE opened), count(*) FILTER (WHERE clicked)
FROM campaign_recipients GROUP BY campaign_id;

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX campaign_recipients_email_trgm ON campaign_recipients USING gin (email gin_trgm_ops);
