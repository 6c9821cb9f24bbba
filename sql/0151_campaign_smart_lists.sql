-- A campaign sends to a contact list (list_id) or to the leads of a smart list (smart_list_id), at most one.
ALTER TABLE campaigns ADD COLUMN smart_list_id text;
