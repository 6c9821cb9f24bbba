-- The embedded database's balance cache (src/organizations/Balances.ts) holds data credit usage too:
-- a change of it notifies channel `credit_usage` as a change of credit usage does (sql/0085).
DROP TRIGGER organizations_credit_usage_notify ON organizations;

CREATE TRIGGER organizations_credit_usage_notify AFTER UPDATE OF credit_usage, data_credit_usage ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credit_usage();
