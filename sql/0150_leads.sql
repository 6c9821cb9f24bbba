-- Leads: one person per company, unique by e-mail ignoring case (the unique index on lower(email)).
-- email keeps the case it was first given. tags is a JSON array of strings, fields a JSON object of
-- custom fields; search_text (derived, so every write keeps it) is what a `search` matches.
CREATE TABLE leads (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  email text NOT NULL,
  first_name text,
  last_name text,
  company text,
  title text,
  phone text,
  website text,
  linkedin_url text,
  tags jsonb NOT NULL DEFAULT '[]',
  status text NOT NULL DEFAULT 'new'
    CHECK (status IN ('new', 'contacted', 'replied', 'interested', 'not_interested', 'unsubscribed', 'bounced')),
  fields jsonb NOT NULL DEFAULT '{}',
  search_text text GENERATED ALWAYS AS (lower(email || ' | ' || coalesce(first_name, '') || ' ' ||
    coalesce(last_name, '') || ' | ' || coalesce(company, ''))) STORED,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE UNIQUE INDEX leads_email ON leads (company_id, lower(email));

CREATE INDEX leads_company ON leads (company_id, id);

CREATE INDEX leads_status ON leads (company_id, status, id);

CREATE INDEX leads_tags ON leads USING gin (tags jsonb_path_ops);

CREATE INDEX leads_search ON leads USING gin (search_text gin_trgm_ops);

-- A lead's timeline: what happened to them, newest first by (at, id).
CREATE TABLE lead_activities (
  id text PRIMARY KEY,
  company_id text NOT NULL,
  lead_id text NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('sent', 'opened', 'clicked', 'replied', 'bounced', 'unsubscribed',
    'status_changed', 'form_submitted')),
  at timestamptz NOT NULL,
  campaign_id text,
  sequence_id text,
  thread_id text,
  page_id text,
  detail jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX lead_activities_timeline ON lead_activities (lead_id, at DESC, id DESC);

CREATE INDEX lead_activities_type ON lead_activities (lead_id, type, at);

-- Smart lists: a saved filter over the company's leads, evaluated live.
CREATE TABLE smart_lists (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  filter jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX smart_lists_company ON smart_lists (company_id, id);
