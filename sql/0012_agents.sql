-- Agents (configured assistants) and employees (AI personas that scheduled
-- tasks run as), each belonging to one company. A null model means the
-- platform's default model.
CREATE TABLE agents (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  instructions text NOT NULL DEFAULT '',
  model text,
  status text NOT NULL CHECK (status IN ('active', 'paused', 'archived')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX agents_company ON agents (company_id, id);

CREATE TABLE employees (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  role text NOT NULL,
  instructions text NOT NULL DEFAULT '',
  model text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX employees_company ON employees (company_id, id);
