-- A message is recorded as in flight (send_started_at) just before the SMTP transaction. One whose
-- process died before its outcome was written is `uncertain`: the server may or may not have taken it,
-- and it is not sent again by itself (docs/campaigns.md, docs/sequences.md).
ALTER TABLE campaign_recipients ADD COLUMN send_started_at timestamptz;
ALTER TABLE campaign_recipients DROP CONSTRAINT IF EXISTS campaign_recipients_status_check;
ALTER TABLE campaign_recipients ADD CONSTRAINT campaign_recipients_status_check
  CHECK (status IN ('pending', 'sent', 'failed', 'skipped', 'uncertain'));
CREATE INDEX campaign_recipients_in_flight ON campaign_recipients (lease_expires_at)
  WHERE status = 'pending' AND send_started_at IS NOT NULL;
ALTER TABLE sequence_executions DROP CONSTRAINT IF EXISTS sequence_executions_status_check;
ALTER TABLE sequence_executions ADD CONSTRAINT sequence_executions_status_check
  CHECK (status IN ('draft', 'approved', 'sent', 'failed', 'skipped', 'uncertain'));
CREATE INDEX sequence_executions_in_flight ON sequence_executions (lease_expires_at)
  WHERE status = 'approved' AND send_started_at IS NOT NULL;
