-- A company API key acts as the user who created it (DESIGN.md §4), and what
-- it creates carries that user's id. Keys and records made before had no user:
-- they get the company's owner — the organization's owner user when that user
-- is a company owner, else the earliest company owner. A key whose company has
-- no owner keeps no creator and fails authentication (401) until replaced.
ALTER TABLE company_api_keys ADD COLUMN created_by_user_id text REFERENCES users (id);

CREATE VIEW company_owner_for_backfill AS
SELECT DISTINCT ON (company_users.company_id) company_users.company_id, company_users.user_id
FROM company_users
JOIN companies ON companies.id = company_users.company_id
JOIN organizations ON organizations.id = companies.organization_id
WHERE company_users.role = 'owner'
ORDER BY company_users.company_id, COALESCE(company_users.user_id = organizations.owner_user_id, false) DESC,
  company_users.created_at, company_users.id;

UPDATE company_api_keys SET created_by_user_id = owner.user_id
FROM company_owner_for_backfill AS owner WHERE owner.company_id = company_api_keys.company_id;

UPDATE projects SET owner_user_id = owner.user_id
FROM company_owner_for_backfill AS owner WHERE owner.company_id = projects.company_id AND projects.owner_user_id IS NULL;

UPDATE memories SET user_id = owner.user_id
FROM company_owner_for_backfill AS owner WHERE owner.company_id = memories.company_id AND memories.user_id IS NULL;

UPDATE scheduled_tasks SET user_id = owner.user_id
FROM company_owner_for_backfill AS owner WHERE owner.company_id = scheduled_tasks.company_id AND scheduled_tasks.user_id IS NULL;

DROP VIEW company_owner_for_backfill;
