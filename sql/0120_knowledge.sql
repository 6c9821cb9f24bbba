-- The knowledge base: documents kept as Markdown, split into chunks that are
-- searched with PostgreSQL's full-text search (a weighted tsvector, GIN index).
CREATE TABLE knowledge_documents (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  organization_id text NOT NULL,
  user_id text,
  project_id text,
  title text NOT NULL,
  type text NOT NULL,
  tags text[] NOT NULL DEFAULT '{}',
  content text NOT NULL,
  tokens integer NOT NULL,
  chunk_count integer NOT NULL,
  -- indexing (embeddings pending) → ready | failed (failure says why)
  status text NOT NULL,
  failure text,
  -- The embedding model the document is indexed for (null: keyword search only).
  embedding_model text,
  lease_token text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX knowledge_documents_company ON knowledge_documents (company_id, id DESC);

CREATE INDEX knowledge_documents_indexing ON knowledge_documents (lease_until) WHERE status = 'indexing';

CREATE TABLE knowledge_chunks (
  id text PRIMARY KEY,
  document_id text NOT NULL REFERENCES knowledge_documents (id) ON DELETE CASCADE,
  company_id text NOT NULL,
  ordinal integer NOT NULL,
  heading text NOT NULL,
  content text NOT NULL,
  tokens integer NOT NULL,
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', heading), 'A') || setweight(to_tsvector('english', content), 'B')
  ) STORED
);

CREATE INDEX knowledge_chunks_search ON knowledge_chunks USING gin (search);

CREATE INDEX knowledge_chunks_document ON knowledge_chunks (document_id, ordinal);
