-- Sequences may send through the company's mailboxes, rotating them within each one's daily_limit
-- (docs/sequences.md). mailbox_ids: the mailboxes a sequence sends through (empty: the platform's mailer).
-- An execution records the mailbox that sent it, and the contact's next step keeps to that mailbox.
ALTER TABLE sequences ADD COLUMN mailbox_ids jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE sequence_executions ADD COLUMN mailbox_id text;
-- Messages handed to a mailbox's SMTP server per UTC day: taken by one conditional upsert
-- (sent < daily_limit) in the transaction that marks the execution in flight, so the limit holds
-- exactly across workers and processes.
CREATE TABLE mailbox_daily_sends (
  mailbox_id text NOT NULL REFERENCES mailboxes (id) ON DELETE CASCADE,
  day date NOT NULL,
  sent integer NOT NULL,
  PRIMARY KEY (mailbox_id, day)
);
