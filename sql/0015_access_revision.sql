-- One counter that every change of who may use which key increments (a key
-- deleted, a personal key revoked, a company user changed or removed). A
-- process trusts a cached principal only at the revision it was resolved at,
-- and reads the current revision in the same round trip as the rate limit.
CREATE TABLE access_revision (
  id integer PRIMARY KEY CHECK (id = 1),
  revision bigint NOT NULL
);

INSERT INTO access_revision (id, revision) VALUES (1, 0);
