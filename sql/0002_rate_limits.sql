-- Token buckets shared by every server process on one PostgreSQL.
CREATE TABLE rate_limit_buckets (
  bucket text PRIMARY KEY,
  tokens double precision NOT NULL,
  allowed boolean NOT NULL,
  updated_at timestamptz NOT NULL
);
