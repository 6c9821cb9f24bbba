-- Canvas versions and chat messages. Every change of a canvas's HTML (PATCH,
-- restore, an edit of the canvas chat) is the next numbered version; the
-- canvas's html_version is the newest. Each canvas so far is its version 1.
ALTER TABLE canvases ADD COLUMN html_version integer NOT NULL DEFAULT 1;

CREATE TABLE canvas_versions (
  canvas_id text NOT NULL REFERENCES canvases (id) ON DELETE CASCADE,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  version integer NOT NULL,
  html text NOT NULL,
  source text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (canvas_id, version)
);

INSERT INTO canvas_versions (canvas_id, company_id, version, html, source, created_at)
SELECT id, company_id, 1, html, 'api', created_at FROM canvases;

-- The turns of a canvas chat thread: the user's message and the assistant's
-- answer, the history the next message is answered with.
CREATE TABLE canvas_messages (
  id text PRIMARY KEY,
  thread_id text NOT NULL REFERENCES canvas_threads (id) ON DELETE CASCADE,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  role text NOT NULL,
  content text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE INDEX canvas_messages_thread ON canvas_messages (company_id, thread_id, id);
