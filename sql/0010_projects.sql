-- Projects: a company's workspaces with custom AI instructions. A project is
-- Private (its owner only) or Shared (the whole company); owner_user_id is
-- null for projects made with a company API key (owned by the company).
CREATE TABLE projects (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  owner_user_id text REFERENCES users (id),
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  instructions text NOT NULL DEFAULT '',
  sharing text NOT NULL CHECK (sharing IN ('Private', 'Shared')),
  settings jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX projects_company ON projects (company_id, id);
