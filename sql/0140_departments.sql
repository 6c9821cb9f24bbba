-- Departments of a company: a name, a description and instructions that join
-- the prompts of the employees in them. Deleting a department leaves its
-- employees without one.
CREATE TABLE departments (
  id text PRIMARY KEY,
  company_id text NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  instructions text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE INDEX departments_company ON departments (company_id, id);

ALTER TABLE employees ADD COLUMN department_id text REFERENCES departments (id) ON DELETE SET NULL;

CREATE INDEX employees_department ON employees (department_id);
