-- Outreach sequences (docs/sequences.md). steps is the ordered JSON array of
-- {type, subject, body, delayDays}; organization_id is who pays for drafting.
CREATE TABLE sequences (
  id text PRIMARY KEY,
  company_id text NOT NULL,
  organization_id text NOT NULL,
  user_id text,
  name text NOT NULL,
  steps jsonb NOT NULL,
  list_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX sequences_company ON sequences (company_id, id DESC);
-- One step for one enrolled contact. status: draft (unapproved; drafted_at
-- NULL while the model has not written it yet), approved, sent, failed,
-- skipped. The drafting worker claims undrafted drafts, the sending worker
-- approved ones that are due, both with lease_token / lease_expires_at, and
-- each records only while its lease is still its own. send_started_at is
-- set before the message is handed to the mail server: a send whose worker
-- died after that is never repeated (it becomes failed).
CREATE TABLE sequence_executions (
  id text PRIMARY KEY,
  sequence_id text NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
  company_id text NOT NULL,
  organization_id text NOT NULL,
  list_row_id text NOT NULL,
  email text NOT NULL,
  fields jsonb NOT NULL,
  step_index integer NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'approved', 'sent', 'failed', 'skipped')),
  subject text,
  body text,
  error_message text,
  due_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  drafted_at timestamptz,
  approved_at timestamptz,
  send_started_at timestamptz,
  sent_at timestamptz,
  message_id text,
  open_count integer NOT NULL DEFAULT 0,
  click_count integer NOT NULL DEFAULT 0,
  first_opened_at timestamptz,
  first_clicked_at timestamptz,
  lease_token text,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (sequence_id, list_row_id, step_index)
);
CREATE INDEX sequence_executions_page ON sequence_executions (sequence_id, id DESC);
CREATE INDEX sequence_executions_to_draft ON sequence_executions (id) WHERE status = 'draft' AND drafted_at IS NULL;
CREATE INDEX sequence_executions_to_send ON sequence_executions (due_at) WHERE status = 'approved';
CREATE INDEX sequence_executions_contact ON sequence_executions (company_id, email);
