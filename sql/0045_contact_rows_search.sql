-- What a row search matches: the row's e-mail, names and company, lower-cased
-- by the service when the row is stored (so every backend folds case alike),
-- in one column, so that a search is one LIKE per row rather than four ILIKEs.
ALTER TABLE contact_list_rows ADD COLUMN search_text text NOT NULL DEFAULT '';

UPDATE contact_list_rows SET search_text = lower(concat_ws(' | ', email, first_name, last_name, company));
