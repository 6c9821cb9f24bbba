-- Canvases: a company's HTML canvases, each with chat threads. The newest
-- thread made for a canvas is its active one (active_thread_id).
CREATE TABLE canvases (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  owner_user_id text REFERENCES users (id),
  title text NOT NULL,
  html text NOT NULL DEFAULT '',
  active_thread_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX canvases_company ON canvases (company_id, id);

CREATE TABLE canvas_threads (
  id text PRIMARY KEY,
  canvas_id text NOT NULL REFERENCES canvases (id) ON DELETE CASCADE,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  owner_user_id text REFERENCES users (id),
  title text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE INDEX canvas_threads_canvas ON canvas_threads (company_id, canvas_id, id);
