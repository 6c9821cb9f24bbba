import { Effect, Option } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized, ownsOrManages } from "../../auth/Policy.ts"
import type { Principal } from "../../auth/Principal.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { NewProject, Project, ProjectPatch } from "./Api.ts"
import { ProjectNotChangeable, ProjectNotFound } from "./Errors.ts"
import { type ProjectRecord, ProjectsRepo } from "./ProjectsRepo.ts"

/**
 * Projects: Private ones are visible to their owner only, Shared ones to the
 * whole company. The owner, and company owners and admins, change a project
 * they can see; anybody else gets 403. Decisions in docs/projects.md.
 */

export const toProject = (record: ProjectRecord): typeof Project.Type => ({
  id: record.id,
  name: record.name,
  description: record.description,
  instructions: record.instructions,
  sharing: record.sharing,
  settings: record.settings,
  uid: record.ownerUserId,
  companyId: record.companyId,
  created: record.createdAt.getTime(),
  updated: record.updatedAt.getTime()
})

const visibleTo = (principal: Principal, project: ProjectRecord) =>
  project.sharing === "Shared" || project.ownerUserId === principal.userId

/** The project if the caller can see it; 404 otherwise (another company's, or somebody's private one). */
const findVisible = (principal: Principal, id: string) =>
  Effect.flatMap(
    ProjectsRepo.use((repo) => repo.get(principal.companyId, id)),
    (found) =>
      Option.isSome(found) && visibleTo(principal, found.value)
        ? Effect.succeed(found.value)
        : Effect.fail(new ProjectNotFound({ id }))
  )

/** The project if the caller may change it: visible (else 404) and owned or managed (else 403). */
const findChangeable = (principal: Principal, id: string) =>
  Effect.flatMap(findVisible(principal, id), (project) =>
    ownsOrManages(principal, project.ownerUserId)
      ? Effect.succeed(project)
      : Effect.fail(new ProjectNotChangeable({ id })))

export const create = Effect.fn("Projects.create")(function*(input: typeof NewProject.Type) {
  yield* Authorized("projects:write")
  const principal = yield* requireCompany(input.companyId)
  const now = yield* currentDate
  const created = yield* ProjectsRepo.use((repo) =>
    repo.create({
      id: newId("prj"),
      companyId: principal.companyId,
      ownerUserId: principal.userId,
      name: input.name,
      description: input.description ?? "",
      instructions: input.instructions ?? "",
      // A person's project starts private; a company key's (an integration's) starts shared with the company.
      sharing: input.sharing ?? (principal.keyKind === "company" ? "Shared" : "Private"),
      settings: input.settings ?? {},
      createdAt: now,
      updatedAt: now
    })
  )
  return toProject(created)
})

export const list = Effect.fn("Projects.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("projects:read")
  const { rows, total } = yield* ProjectsRepo.use((repo) =>
    repo.listVisible(principal.companyId, principal.userId, windowOf(request))
  )
  return toPage(rows.map(toProject), total, request)
})

export const get = Effect.fn("Projects.get")(function*(id: string) {
  const { principal } = yield* Authorized("projects:read")
  return toProject(yield* findVisible(principal, id))
})

export const update = Effect.fn("Projects.update")(function*(id: string, patch: typeof ProjectPatch.Type) {
  yield* Authorized("projects:write")
  const principal = yield* requireCompany(patch.companyId)
  const project = yield* findChangeable(principal, id)
  const { companyId: _, ...change } = patch
  if (Object.values(change).every((value) => value === undefined)) return toProject(project)
  const now = yield* currentDate
  const updated = yield* ProjectsRepo.use((repo) => repo.update(principal.companyId, id, change, now))
  if (Option.isNone(updated)) return yield* new ProjectNotFound({ id })
  return toProject(updated.value)
})

export const remove = Effect.fn("Projects.remove")(function*(id: string) {
  const { principal } = yield* Authorized("projects:write")
  const project = yield* findChangeable(principal, id)
  yield* ProjectsRepo.use((repo) => repo.remove(principal.companyId, id))
  return toProject(project)
})
