-- Smart lists' activity conditions read a company's recent activities of one type (a hashed semi-join),
-- not each lead's: index them so, instead of by lead.
DROP INDEX IF EXISTS lead_activities_type;
CREATE INDEX lead_activities_recent ON lead_activities (company_id, type, at);
