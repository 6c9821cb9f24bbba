-- Replies and bounces the inbox hears (docs/inbox.md): on the campaign recipient or sequence
-- execution answered, counted once per recipient in the campaign's metrics; a sequence stops
-- a contact who replied unless its stop_on_reply is off.
ALTER TABLE campaign_recipients ADD COLUMN replied_at timestamptz;
ALTER TABLE campaign_recipients ADD COLUMN bounced_at timestamptz;
ALTER TABLE campaign_recipient_counts ADD COLUMN replied integer NOT NULL DEFAULT 0;
ALTER TABLE campaign_recipient_counts ADD COLUMN bounced integer NOT NULL DEFAULT 0;
ALTER TABLE sequence_executions ADD COLUMN replied_at timestamptz;
ALTER TABLE sequence_executions ADD COLUMN bounced_at timestamptz;
ALTER TABLE sequences ADD COLUMN stop_on_reply boolean NOT NULL DEFAULT true;
