-- A process takes tokens from a credential's shared bucket in blocks (1% of
-- the capacity) and spends them in memory (src/auth/RateLimiter.ts): `taken`
-- is how many the last update handed out.
ALTER TABLE rate_limit_buckets ADD COLUMN taken integer NOT NULL DEFAULT 0;
