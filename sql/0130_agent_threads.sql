-- Conversations with agents and employees. An agent lists the tools it may
-- use (null: every tool the caller may use). A thread belongs to one agent or
-- employee and to the user who started it; its messages keep the order they
-- were said in (seq), with the tool calls an assistant turn made and the
-- result each tool turn answered.
ALTER TABLE agents ADD COLUMN tools jsonb;

CREATE TABLE agent_threads (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  owner_kind text NOT NULL CHECK (owner_kind IN ('agent', 'employee')),
  owner_id text NOT NULL,
  user_id text NOT NULL,
  project_id text,
  title text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX agent_threads_owner ON agent_threads (company_id, owner_kind, owner_id, user_id, id);

CREATE TABLE agent_messages (
  id text PRIMARY KEY,
  thread_id text NOT NULL REFERENCES agent_threads (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  role text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  content text NOT NULL,
  tool_calls jsonb,
  tool_call_id text,
  created_at timestamptz NOT NULL,
  UNIQUE (thread_id, seq)
);
