-- A sequence's own sender (docs/sequences.md): like a campaign's, its address
-- must be on a verified sending domain of the company or be MAIL_FROM's;
-- NULL means MAIL_FROM's.
ALTER TABLE sequences ADD COLUMN from_name text;
ALTER TABLE sequences ADD COLUMN from_email text;
