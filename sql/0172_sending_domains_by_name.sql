-- Inbound mail to any address of a verified domain finds the companies that
-- verified it by the domain's name alone.
CREATE INDEX sending_domains_verified_name ON sending_domains (domain) WHERE status = 'verified';
