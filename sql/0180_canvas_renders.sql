-- Renders of canvases: each a still image or a looping video, its bytes a
-- public file (files.id = file_id, owner the canvas) at a permanent URL.
CREATE TABLE canvas_renders (
  id text PRIMARY KEY,
  canvas_id text NOT NULL REFERENCES canvases (id) ON DELETE CASCADE,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  owner_user_id text REFERENCES users (id),
  file_id text NOT NULL,
  file_name text NOT NULL,
  format text NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  scale double precision NOT NULL,
  duration_ms integer,
  fps integer,
  bytes integer NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE INDEX canvas_renders_canvas ON canvas_renders (company_id, canvas_id, id);
