-- Scheduled tasks: prompts an employee (AI persona) runs once, on a cron or
-- interval schedule, or as a heartbeat. The lease columns let several server
-- processes share one database: a process claims a due task by setting
-- lease_token and lease_expires_at, and only the holder of an unexpired
-- lease may record the run. History rows are soft-deleted (reset).
CREATE TABLE scheduled_tasks (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  organization_id text NOT NULL REFERENCES organizations (id),
  user_id text REFERENCES users (id),
  employee_id text NOT NULL REFERENCES employees (id),
  name text NOT NULL,
  prompt text NOT NULL,
  schedule_type text NOT NULL CHECK (schedule_type IN ('one_time', 'recurring', 'heartbeat')),
  scheduled_at timestamptz,
  recurring_config jsonb,
  context_settings jsonb NOT NULL DEFAULT '{}',
  timezone text NOT NULL,
  next_run_at timestamptz,
  last_run_at timestamptz,
  status text NOT NULL CHECK (status IN ('active', 'paused', 'completed')),
  run_count integer NOT NULL DEFAULT 0,
  daily_credit_limit integer CHECK (daily_credit_limit > 0),
  template_id text,
  template_version integer,
  pending_execution_id text,
  lease_token text,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);

CREATE INDEX scheduled_tasks_company ON scheduled_tasks (company_id, id) WHERE deleted_at IS NULL;

CREATE INDEX scheduled_tasks_due ON scheduled_tasks (next_run_at) WHERE deleted_at IS NULL AND status = 'active';

CREATE INDEX scheduled_tasks_requested ON scheduled_tasks (id) WHERE deleted_at IS NULL AND pending_execution_id IS NOT NULL;

-- One row per run of a task. A scheduled occurrence has at most one live
-- execution: a retry after a crash continues the same row.
CREATE TABLE task_executions (
  id text PRIMARY KEY,
  task_id text NOT NULL REFERENCES scheduled_tasks (id) ON DELETE CASCADE,
  trigger text NOT NULL CHECK (trigger IN ('scheduled', 'heartbeat', 'manual')),
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  scheduled_for timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  model text NOT NULL DEFAULT '',
  output text,
  error text,
  input_tokens integer NOT NULL DEFAULT 0,
  output_tokens integer NOT NULL DEFAULT 0,
  credits integer NOT NULL DEFAULT 0,
  started_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz NOT NULL,
  deleted_at timestamptz
);

CREATE UNIQUE INDEX task_executions_occurrence ON task_executions (task_id, scheduled_for)
  WHERE deleted_at IS NULL AND trigger <> 'manual';

CREATE INDEX task_executions_task ON task_executions (task_id, id) WHERE deleted_at IS NULL;

CREATE TABLE task_evaluations (
  id text PRIMARY KEY,
  task_id text NOT NULL REFERENCES scheduled_tasks (id) ON DELETE CASCADE,
  execution_id text NOT NULL REFERENCES task_executions (id) ON DELETE CASCADE,
  passed boolean NOT NULL,
  score double precision NOT NULL,
  checks jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  deleted_at timestamptz
);

CREATE INDEX task_evaluations_execution ON task_evaluations (execution_id) WHERE deleted_at IS NULL;

-- Per task and local day (in the task's time zone): what its runs spent, and
-- why it stopped for the day when it did.
CREATE TABLE task_daily_logs (
  id text PRIMARY KEY,
  task_id text NOT NULL REFERENCES scheduled_tasks (id) ON DELETE CASCADE,
  day text NOT NULL,
  runs integer NOT NULL DEFAULT 0,
  failures integer NOT NULL DEFAULT 0,
  check_ins integer NOT NULL DEFAULT 0,
  credits integer NOT NULL DEFAULT 0,
  input_tokens integer NOT NULL DEFAULT 0,
  output_tokens integer NOT NULL DEFAULT 0,
  stopped_reason text,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);

CREATE UNIQUE INDEX task_daily_logs_day ON task_daily_logs (task_id, day) WHERE deleted_at IS NULL;

-- A task's notes: input left for its next run, and the journal of heartbeat
-- check-ins and daily-limit stops.
CREATE TABLE task_notes (
  id text PRIMARY KEY,
  task_id text NOT NULL REFERENCES scheduled_tasks (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('input', 'heartbeat', 'daily_limit')),
  content text NOT NULL,
  execution_id text,
  processed_at timestamptz,
  created_at timestamptz NOT NULL,
  deleted_at timestamptz
);

CREATE INDEX task_notes_task ON task_notes (task_id, id) WHERE deleted_at IS NULL;
