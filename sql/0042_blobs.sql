-- Uploaded bytes, when blobs live in the database (the default; BLOB_DIR
-- keeps them in a folder instead). Shared by every process on one PostgreSQL.
CREATE TABLE blobs (
  id text PRIMARY KEY,
  content_type text NOT NULL,
  size integer NOT NULL,
  data bytea NOT NULL,
  created_at timestamptz NOT NULL
);
