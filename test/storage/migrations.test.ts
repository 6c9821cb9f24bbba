import { PGlite } from "@electric-sql/pglite"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { migrationsDirectory } from "../../src/storage/Migrations.ts"

/** Data migrations, run on a database holding rows written before them (embedded PostgreSQL). */

const migrationFiles = readdirSync(migrationsDirectory).filter((file) => /^\d+_.+\.sql$/.test(file)).sort()

const migrateThrough = async (db: PGlite, from: number, to: number) => {
  for (const file of migrationFiles) {
    const version = Number(file.slice(0, 4))
    if (version >= from && version <= to) await db.exec(readFileSync(`${migrationsDirectory}${file}`, "utf8"))
  }
}

describe("0016: company keys and their records get the company's owner", () => {
  const db = new PGlite()
  afterAll(() => db.close())

  it("backfills keys, projects and memories made without a user; leaves ownerless companies' keys without one", async () => {
    await migrateThrough(db, 1, 15)
    await db.exec(`
      INSERT INTO users (id, email) VALUES ('usr_owner', 'owner@x'), ('usr_boss', 'boss@x'), ('usr_admin', 'admin@x');
      INSERT INTO organizations (id, name, owner_user_id) VALUES ('org_a', 'A', 'usr_boss'), ('org_b', 'B', NULL);
      INSERT INTO companies (id, organization_id, name) VALUES ('cmp_a', 'org_a', 'A'), ('cmp_b', 'org_b', 'B'), ('cmp_c', 'org_b', 'C');
      INSERT INTO company_users (id, company_id, user_id, role, created_at) VALUES
        ('cu_1', 'cmp_a', 'usr_owner', 'owner', '2026-01-01'),
        ('cu_2', 'cmp_a', 'usr_boss', 'owner', '2026-02-01'),
        ('cu_3', 'cmp_a', 'usr_admin', 'admin', '2025-01-01'),
        ('cu_4', 'cmp_b', 'usr_admin', 'admin', '2025-01-01'),
        ('cu_5', 'cmp_c', 'usr_owner', 'owner', '2026-01-01');
      INSERT INTO company_api_keys (id, company_id, name, key_hash, masked) VALUES
        ('key_a', 'cmp_a', 'default', 'h1', 'm'), ('key_b', 'cmp_b', 'default', 'h2', 'm'), ('key_c', 'cmp_c', 'default', 'h3', 'm');
      INSERT INTO projects (id, company_id, owner_user_id, name, sharing, created_at, updated_at) VALUES
        ('prj_company', 'cmp_a', NULL, 'Made by a key', 'Shared', now(), now()),
        ('prj_person', 'cmp_a', 'usr_admin', 'Made by a person', 'Private', now(), now());
      INSERT INTO memories (id, company_id, user_id, content, category, created_at, updated_at) VALUES
        ('mem_company', 'cmp_c', NULL, 'c', 'general', now(), now());
    `)
    await migrateThrough(db, 16, 16)
    const keys = await db.query<{ id: string; created_by_user_id: string | null }>(
      "SELECT id, created_by_user_id FROM company_api_keys ORDER BY id"
    )
    // cmp_a: the organization's owner user is a company owner (preferred over the earlier owner);
    // cmp_b has no owner at all; cmp_c: its only owner.
    expect(keys.rows).toEqual([
      { id: "key_a", created_by_user_id: "usr_boss" },
      { id: "key_b", created_by_user_id: null },
      { id: "key_c", created_by_user_id: "usr_owner" }
    ])
    const projects = await db.query<{ id: string; owner_user_id: string }>("SELECT id, owner_user_id FROM projects ORDER BY id")
    expect(projects.rows).toEqual([
      { id: "prj_company", owner_user_id: "usr_boss" },
      { id: "prj_person", owner_user_id: "usr_admin" }
    ])
    const memories = await db.query<{ user_id: string }>("SELECT user_id FROM memories")
    expect(memories.rows).toEqual([{ user_id: "usr_owner" }])
  })
})
