import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { newId } from "../../../src/platform/Ids.ts"
import { type ProjectRecord, ProjectsRepo } from "../../../src/work/projects/ProjectsRepo.ts"
import { backends, seedTenant } from "../../support/TestServer.ts"

const t0 = new Date("2026-06-01T08:00:00Z")

const fixture = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const repo = yield* ProjectsRepo
  const create = (overrides: Partial<ProjectRecord>) =>
    repo.create({
      id: newId("prj"),
      companyId: tenant.companyId,
      ownerUserId: tenant.userId,
      name: "Project",
      description: "",
      instructions: "",
      sharing: "Private",
      settings: {},
      createdAt: t0,
      updatedAt: t0,
      ...overrides
    })
  return { tenant, repo, create }
})

for (const backend of backends) {
  it.layer(backend.storage)(`ProjectsRepo contract on ${backend.name}`, (it) => {
    it.effect("stores every field, scoped by company", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const project = yield* create({ settings: { nested: { tags: ["a"], on: true } }, description: "d" })
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, project.id))).toEqual(project)
        expect(Option.isNone(yield* repo.get("cmp_other", project.id))).toBe(true)
      }))

    it.effect("a viewer sees shared projects and their own, newest first", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const mine = yield* create({ name: "mine" })
        const theirs = yield* create({ name: "theirs", ownerUserId: null })
        const shared = yield* create({ name: "shared", ownerUserId: null, sharing: "Shared" })
        const names = (viewer: string | null) =>
          Effect.map(repo.listVisible(tenant.companyId, viewer, { offset: 0, limit: 10 }), (page) => ({
            names: page.rows.map((p) => p.name),
            total: page.total
          }))
        expect(yield* names(tenant.userId)).toEqual({ names: [shared.name, mine.name], total: 2 })
        expect(yield* names(null)).toEqual({ names: [shared.name, theirs.name], total: 2 })
        const window = yield* repo.listVisible(tenant.companyId, null, { offset: 1, limit: 1 })
        expect(window).toMatchObject({ total: 2, rows: [{ id: theirs.id }] })
      }))

    it.effect("update changes the supplied fields and always moves updatedAt forward", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const project = yield* create({ description: "keep", settings: { a: 1 } })
        const first = Option.getOrThrow(yield* repo.update(tenant.companyId, project.id, { name: "renamed" }, t0))
        expect(first).toEqual({ ...project, name: "renamed", updatedAt: new Date(t0.getTime() + 1) })
        const second = Option.getOrThrow(
          yield* repo.update(tenant.companyId, project.id, { settings: { b: 2 }, sharing: "Shared" }, t0)
        )
        expect(second).toMatchObject({ settings: { b: 2 }, sharing: "Shared", description: "keep", createdAt: t0 })
        expect(second.updatedAt).toEqual(new Date(t0.getTime() + 2))
        const later = new Date(t0.getTime() + 60_000)
        expect(Option.getOrThrow(yield* repo.update(tenant.companyId, project.id, { instructions: "x" }, later)).updatedAt)
          .toEqual(later)
        expect(Option.isNone(yield* repo.update("cmp_other", project.id, { name: "x" }, later))).toBe(true)
      }))

    it.effect("remove deletes within the company only", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const project = yield* create({})
        expect(yield* repo.remove("cmp_other", project.id)).toBe(false)
        expect(yield* repo.remove(tenant.companyId, project.id)).toBe(true)
        expect(Option.isNone(yield* repo.get(tenant.companyId, project.id))).toBe(true)
      }))
  })
}
