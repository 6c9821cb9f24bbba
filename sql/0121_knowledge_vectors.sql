-- Semantic search: chunk embeddings with pgvector. Vectors of any length share
-- the column; each length gets its own partial HNSW index when a model of that
-- length is first used (src/documents/DocumentsRepo.ts, `ensureVectorIndex`).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE knowledge_embeddings (
  chunk_id text NOT NULL REFERENCES knowledge_chunks (id) ON DELETE CASCADE,
  model text NOT NULL,
  company_id text NOT NULL,
  dimensions integer NOT NULL,
  embedding vector NOT NULL,
  PRIMARY KEY (chunk_id, model)
);
