-- Memories: what the AI keeps about a person in one company. user_id is null
-- for the memories kept through company API keys (the company's own).
CREATE TABLE memories (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id text REFERENCES users (id),
  content text NOT NULL,
  category text NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  source_chat_id text,
  source_message_id text,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX memories_owner ON memories (company_id, user_id, id);
