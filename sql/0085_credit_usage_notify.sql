-- A change of an organization's credit usage notifies channel `credit_usage`,
-- but only in a session that asked for it (`platform.notify_credit_usage`):
-- the embedded database's single session caches balances in the process and
-- drops them when notified (src/organizations/Balances.ts). Sessions on a
-- shared PostgreSQL never ask, since NOTIFY serializes the commits that send it.
CREATE FUNCTION notify_credit_usage() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF current_setting('platform.notify_credit_usage', true) = 'on' THEN PERFORM pg_notify('credit_usage', ''); END IF; RETURN NULL; END $$;

CREATE TRIGGER organizations_credit_usage_notify AFTER UPDATE OF credit_usage ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credit_usage();
