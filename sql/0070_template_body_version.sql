-- A template's body is numbered like a campaign's: 1 when created, one more
-- with every save of its body document (PATCH or a design-chat edit).
ALTER TABLE campaign_templates ADD COLUMN body_version integer NOT NULL DEFAULT 1;
