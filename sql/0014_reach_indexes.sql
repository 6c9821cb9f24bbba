-- How a user reaches organizations: ownership as the owner user and as one of the owners.
CREATE INDEX organizations_owner_user ON organizations (owner_user_id);

CREATE INDEX organization_owners_user ON organization_owners (user_id);
