-- The inbox (docs/inbox.md). A mailbox is a company's own e-mail account: its IMAP
-- and SMTP settings (imap/smtp: {host, port, secure, user}) with the passwords
-- sealed by AES-256-GCM (src/inbox/Secrets.ts). The IMAP poller claims a mailbox
-- with lease_token / lease_expires_at and remembers the folder's UIDVALIDITY and
-- the last UID it ingested, so each message is ingested once.
CREATE TABLE mailboxes (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  email text NOT NULL,
  email_key text NOT NULL,
  display_name text,
  imap jsonb NOT NULL,
  imap_password text NOT NULL,
  smtp jsonb NOT NULL,
  smtp_password text NOT NULL,
  daily_limit integer,
  status text NOT NULL CHECK (status IN ('connecting', 'ok', 'error')),
  last_error text,
  uid_validity bigint,
  last_uid bigint NOT NULL DEFAULT 0,
  lease_token text,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (company_id, email_key)
);
CREATE INDEX mailboxes_company ON mailboxes (company_id, id DESC);
CREATE INDEX mailboxes_email ON mailboxes (email_key);
-- A conversation: the messages that answer each other, within one company.
-- classification is the latest inbound reply's; campaign_recipient_id /
-- sequence_execution_id name the outreach message it answers.
CREATE TABLE inbox_threads (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  mailbox_id text REFERENCES mailboxes (id) ON DELETE SET NULL,
  subject text NOT NULL,
  subject_key text NOT NULL,
  contact_email text NOT NULL,
  contact_key text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'archived')),
  classification text CHECK (classification IN ('interested', 'not_interested', 'out_of_office', 'unsubscribe', 'bounce', 'other')),
  unread boolean NOT NULL DEFAULT true,
  lead_id text,
  campaign_id text,
  campaign_recipient_id text,
  sequence_id text,
  sequence_execution_id text,
  message_count integer NOT NULL DEFAULT 0,
  last_message_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX inbox_threads_company ON inbox_threads (company_id, id DESC);
CREATE INDEX inbox_threads_contact ON inbox_threads (company_id, contact_key, subject_key);
-- One message of a thread, in or out. message_id is the Message-ID header;
-- a message ingested twice (the same Message-ID into the same company) is kept once.
CREATE TABLE inbox_messages (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  thread_id text NOT NULL REFERENCES inbox_threads (id) ON DELETE CASCADE,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  message_id text NOT NULL,
  from_address text NOT NULL,
  to_addresses jsonb NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text,
  received_at timestamptz NOT NULL,
  automatic boolean NOT NULL DEFAULT false,
  classification text,
  UNIQUE (company_id, message_id)
);
CREATE INDEX inbox_messages_thread ON inbox_messages (thread_id, received_at, id);
-- Threading finds the outreach message a reply answers by its Message-ID.
CREATE INDEX campaign_recipients_message_id ON campaign_recipients (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX sequence_executions_message_id ON sequence_executions (message_id) WHERE message_id IS NOT NULL;
