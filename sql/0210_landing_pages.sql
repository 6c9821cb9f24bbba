-- Company slugs (the first part of a landing page's public URL /p/{companySlug}/{slug}): made from the
-- name when a company is created, lower-case ASCII letters, digits and dashes, unique (a second "Acme"
-- becomes acme-2). A slug never changes afterwards, so published URLs stay valid when a company is renamed.
-- The trigger gives every insert one, whichever code path makes the company; an advisory lock per base
-- slug keeps two concurrent inserts of the same name from picking the same one.
ALTER TABLE companies ADD COLUMN slug text;
CREATE FUNCTION company_slug_base(name text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT coalesce(nullif(trim(both '-' from left(regexp_replace(lower(translate(name, 'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿ', 'AAAAAACEEEEIIIINOOOOOOUUUUYaaaaaaceeeeiiiinoooooouuuuyy')), '[^a-z0-9]+', '-', 'g'), 48)), ''), 'company') $$;
CREATE FUNCTION next_company_slug(name text) RETURNS text LANGUAGE plpgsql AS $$ DECLARE base text := company_slug_base(name); candidate text := base; n integer := 1; BEGIN PERFORM pg_advisory_xact_lock(hashtext('company_slug:' || base)); WHILE EXISTS (SELECT 1 FROM companies WHERE slug = candidate) LOOP n := n + 1; candidate := base || '-' || n; END LOOP; RETURN candidate; END $$;
CREATE FUNCTION assign_company_slug() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.slug IS NULL THEN NEW.slug := next_company_slug(NEW.name); END IF; RETURN NEW; END $$;
DO $$ DECLARE r record; BEGIN FOR r IN SELECT id, name FROM companies ORDER BY created_at, id LOOP UPDATE companies SET slug = next_company_slug(r.name) WHERE id = r.id; END LOOP; END $$;
ALTER TABLE companies ALTER COLUMN slug SET NOT NULL;
CREATE UNIQUE INDEX companies_slug ON companies (slug);
CREATE TRIGGER companies_slug BEFORE INSERT ON companies FOR EACH ROW EXECUTE FUNCTION assign_company_slug();

-- Landing pages: a versioned body like a campaign's (landing_page_versions numbered from 1). served_html is
-- the sanitised document the public URL answers, made whenever the body or slug changes (never at request
-- time); served_etag its strong validator. Served only while status = 'published'.
CREATE TABLE landing_pages (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  user_id text,
  name text NOT NULL,
  slug text NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'published')),
  body_document jsonb NOT NULL,
  body_version integer NOT NULL,
  thank_you_url text,
  served_html text NOT NULL,
  served_etag text NOT NULL,
  published_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX landing_pages_slug ON landing_pages (company_id, slug);
CREATE INDEX landing_pages_company ON landing_pages (company_id, id DESC);
CREATE TABLE landing_page_versions (
  page_id text NOT NULL REFERENCES landing_pages (id) ON DELETE CASCADE,
  version integer NOT NULL,
  body_document jsonb NOT NULL,
  source text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (page_id, version)
);

-- Per page and UTC day: views, distinct visitors and form submissions. A visitor is a salted hash of the
-- address (the salt derived from an installation secret and the day, so hashes of two days cannot be
-- linked); no address is stored.
CREATE TABLE landing_page_days (
  page_id text NOT NULL REFERENCES landing_pages (id) ON DELETE CASCADE,
  day date NOT NULL,
  views integer NOT NULL DEFAULT 0,
  unique_visitors integer NOT NULL DEFAULT 0,
  submissions integer NOT NULL DEFAULT 0,
  PRIMARY KEY (page_id, day)
);
CREATE TABLE landing_page_visitors (
  page_id text NOT NULL REFERENCES landing_pages (id) ON DELETE CASCADE,
  day date NOT NULL,
  visitor text NOT NULL,
  PRIMARY KEY (page_id, day, visitor)
);
