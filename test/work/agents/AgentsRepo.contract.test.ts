import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { AgentsRepo } from "../../../src/work/agents/AgentsRepo.ts"
import { EmployeesRepo } from "../../../src/work/agents/EmployeesRepo.ts"
import { newId } from "../../../src/platform/Ids.ts"
import { backends, seedTenant } from "../../support/TestServer.ts"

const t0 = new Date("2026-06-01T08:00:00Z")

for (const backend of backends) {
  it.layer(backend.storage)(`AgentsRepo and EmployeesRepo contract on ${backend.name}`, (it) => {
    it.effect("agents are stored, paged and updated per company; a null model resets it", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const repo = yield* AgentsRepo
        const agent = yield* repo.create({
          id: newId("agt"),
          companyId: tenant.companyId,
          name: "Scout",
          description: "d",
          instructions: "i",
          model: "m",
          tools: ["search_knowledge", "remember"],
          status: "active",
          createdAt: t0,
          updatedAt: t0
        })
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, agent.id))).toEqual(agent)
        expect(Option.isNone(yield* repo.get("cmp_other", agent.id))).toBe(true)
        const paused = Option.getOrThrow(yield* repo.update(tenant.companyId, agent.id, { status: "paused", model: null, tools: null }, t0))
        expect(paused).toEqual({ ...agent, status: "paused", model: null, tools: null, updatedAt: new Date(t0.getTime() + 1) })
        const renamed = Option.getOrThrow(yield* repo.update(tenant.companyId, agent.id, { name: "Scout 2" }, t0))
        expect(renamed).toMatchObject({ name: "Scout 2", model: null, tools: null, status: "paused" })
        expect(Option.isNone(yield* repo.update("cmp_other", agent.id, { name: "x" }, t0))).toBe(true)
        expect(yield* repo.list(tenant.companyId, { offset: 0, limit: 10 })).toEqual({ rows: [{ ...renamed }], total: 1 })
      }))

    it.effect("employees are stored and listed per company", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const repo = yield* EmployeesRepo
        const make = (name: string) =>
          repo.create({
            id: newId("emp"),
            companyId: tenant.companyId,
            name,
            role: "analyst",
            instructions: "",
            model: null,
            departmentId: null,
            createdAt: t0,
            updatedAt: t0
          })
        const first = yield* make("Ada")
        const second = yield* make("Bob")
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, first.id))).toEqual(first)
        expect(Option.isNone(yield* repo.get("cmp_other", first.id))).toBe(true)
        expect(yield* repo.list(tenant.companyId, { offset: 0, limit: 1 })).toEqual({ rows: [second], total: 2 })
      }))
  })
}
