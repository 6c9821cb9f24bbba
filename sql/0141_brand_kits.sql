-- One brand kit per company: what every model prompt that writes for the
-- company is told, and the colours and fonts HTML work uses as CSS variables.
CREATE TABLE brand_kits (
  company_id text PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  name text,
  logo_file_id text,
  colors jsonb NOT NULL DEFAULT '{}',
  fonts jsonb NOT NULL DEFAULT '{}',
  voice jsonb NOT NULL DEFAULT '{}',
  links jsonb NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL
);
