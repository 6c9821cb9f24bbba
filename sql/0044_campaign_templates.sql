-- Reusable e-mail designs: a subject and a body document (its html field is
-- the e-mail's HTML; what a visual builder saves beside it is kept as given).
CREATE TABLE campaign_templates (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id text REFERENCES users (id),
  name text NOT NULL,
  subject text NOT NULL DEFAULT '',
  body_document jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX campaign_templates_company ON campaign_templates (company_id, id);
