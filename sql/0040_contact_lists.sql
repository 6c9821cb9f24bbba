-- Contact lists: a company's named lists of e-mail recipients. row_count is
-- kept with every append and delete (in the same transaction), so listing
-- lists costs no count over their rows.
CREATE TABLE contact_lists (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id text REFERENCES users (id),
  name text NOT NULL,
  row_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX contact_lists_company ON contact_lists (company_id, id);

-- One contact of a list. email keeps the case it was given; email_key is its
-- lower-case form, unique within the list (duplicates are kept once). fields
-- holds the further merge fields (string values).
CREATE TABLE contact_list_rows (
  id text PRIMARY KEY,
  list_id text NOT NULL REFERENCES contact_lists (id) ON DELETE CASCADE,
  email text NOT NULL,
  email_key text NOT NULL,
  first_name text,
  last_name text,
  company text,
  fields jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL
);

CREATE UNIQUE INDEX contact_list_rows_email ON contact_list_rows (list_id, email_key);

CREATE INDEX contact_list_rows_list ON contact_list_rows (list_id, id);
