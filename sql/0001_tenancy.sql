-- Tenancy: users reach companies through company users and organizations
-- through memberships or ownership. Each statement ends with ';' at the end of
-- a line: the migrator runs them one by one (PostgreSQL's extended protocol
-- takes one statement at a time).

CREATE TABLE users (
  id text PRIMARY KEY,
  email text NOT NULL,
  display_name text NOT NULL DEFAULT '',
  photo text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  owner_user_id text REFERENCES users (id),
  subscription_type text NOT NULL DEFAULT 'free',
  status text NOT NULL DEFAULT 'active',
  credit_limit bigint NOT NULL DEFAULT 0 CHECK (credit_limit >= 0),
  credit_usage bigint NOT NULL DEFAULT 0 CHECK (credit_usage >= 0),
  data_credit_limit bigint NOT NULL DEFAULT 0 CHECK (data_credit_limit >= 0),
  data_credit_usage bigint NOT NULL DEFAULT 0 CHECK (data_credit_usage >= 0),
  seats integer NOT NULL DEFAULT 1,
  company_limit integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organization_owners (
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users (id),
  PRIMARY KEY (organization_id, user_id)
);

CREATE TABLE organization_members (
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);

CREATE INDEX organization_members_user ON organization_members (user_id);

CREATE TABLE companies (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX companies_organization ON companies (organization_id);

CREATE TABLE company_users (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  allowed_features jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, user_id)
);

CREATE INDEX company_users_user ON company_users (user_id);

CREATE TABLE company_api_keys (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  masked text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, name)
);

CREATE TABLE personal_access_keys (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  masked text NOT NULL,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX personal_access_keys_user ON personal_access_keys (user_id);

CREATE TABLE usage_events (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  company_id text,
  user_id text,
  feature text NOT NULL,
  model text NOT NULL DEFAULT '',
  credits bigint NOT NULL DEFAULT 0,
  tokens bigint NOT NULL DEFAULT 0,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX usage_events_organization_time ON usage_events (organization_id, created_at);
