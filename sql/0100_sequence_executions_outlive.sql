-- A deleted sequence's executions stay: the e-mails already sent keep working tracking and unsubscribe
-- links. Deleting a sequence skips its unsent executions in the same statement (src/sequences/SequencesRepo.ts).
ALTER TABLE sequence_executions DROP CONSTRAINT IF EXISTS sequence_executions_sequence_id_fkey;
