-- Which balance an event's credits came from: model and feature credits, or data credits (searches).
-- Summed together, a data-credit search counted as a credit in the usage summary.
ALTER TABLE usage_events ADD COLUMN pool text NOT NULL DEFAULT 'credits' CHECK (pool IN ('credits', 'data'));

-- Until now only searches spent data credits: job searches, and the content research's web searches, both without a model.
UPDATE usage_events SET pool = 'data' WHERE model = '' AND feature IN ('jobs', 'content');
