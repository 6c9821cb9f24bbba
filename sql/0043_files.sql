-- Files served publicly at /api/v0/public/files/{id}/{name} (e-mail clients
-- load images from there). The id is 128 random bits: unguessable. owner_id
-- names what the file belongs to (a campaign template); the bytes are the
-- blob of the same id.
CREATE TABLE files (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  owner_id text NOT NULL,
  name text NOT NULL,
  content_type text NOT NULL,
  size integer NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE INDEX files_owner ON files (company_id, owner_id, created_at);
