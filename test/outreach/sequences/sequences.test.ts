import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { LlmError } from "../../../src/models/llm/Llm.ts"
import { spend } from "../../support/Billing.ts"
import { scriptedUsage } from "../../support/ScriptedLlm.ts"
import { SequencesRepo } from "../../../src/outreach/sequences/SequencesRepo.ts"
import { SequenceWorker } from "../../../src/outreach/sequences/SequenceWorker.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { drain, sequenceTestServer } from "../../support/SequenceWorkerTest.ts"
import { smtpServer } from "../../support/SmtpServer.ts"
import { addPerson, backends, client, seedTenant } from "../../support/TestServer.ts"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"

/** The scripted model fails for contacts at failing.example and drafts a fixed e-mail for everybody else. */
const script = {
  reply: (request: { readonly messages: ReadonlyArray<{ readonly content: ReadonlyArray<{ readonly type: string }> }> }) => {
    const prompt = JSON.stringify(request.messages)
    return prompt.includes("failing.example")
      ? new LlmError({ kind: "upstream", message: "The model is down" })
      : JSON.stringify({ subject: "Hello there", body: "<p>A drafted body</p>" })
  }
}

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.map(smtpServer(), (sink) => sequenceTestServer(storage, sink.url, { script })))

const steps = [
  { type: "email" as const, subject: "Hi {{firstName | there}}", body: "<p>Introduce our product to {{company}}.</p>", delayDays: 0 },
  { type: "email" as const, subject: "Following up", body: "<p>A short reminder.</p>", delayDays: 3 }
]

const rows: ReadonlyArray<Record<string, string> & { readonly email: string }> = [
  { email: "ada@example.com", firstName: "Ada", company: "Engines" },
  { email: "bob@failing.example", firstName: "Bob" },
  { email: "cy@example.com" }
]

const setUp = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const api = yield* client({ apiKey: tenant.apiKey })
  const list = yield* api.lists.create({ payload: { name: "Leads", rows } })
  const sequence = yield* api.sequences.create({ payload: { name: "Intro", steps, listId: list.id } })
  return { tenant, api, list, sequence, params: { sequenceId: sequence.id } }
})

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 60_000 })(`sequences API on ${backend.name}`, (it) => {
    it.effect("create answers 201; get, list and patch", () =>
      Effect.gen(function*() {
        const { tenant, api, list, sequence, params } = yield* setUp
        expect(sequence).toMatchObject({ name: "Intro", steps, listId: list.id, companyId: tenant.companyId })
        expect(yield* api.sequences.get({ params, query: {} })).toEqual(sequence)
        const second = yield* api.sequences.create({ payload: { name: "Second", steps: [steps[0]] } })
        const listed = yield* api.sequences.list({ query: {} })
        expect(listed).toMatchObject({ total: 2, pages: 1, hasNext: false })
        expect(listed.items.map((s) => s.id)).toEqual([second.id, sequence.id])
        const changed = yield* api.sequences.update({ params, payload: { name: "Renamed", steps: [steps[1]] } })
        expect(changed).toMatchObject({ name: "Renamed", steps: [steps[1]], listId: list.id })
        expect(changed.updated_date.getTime()).toBeGreaterThan(sequence.updated_date.getTime())
      }))

    it.effect("enroll makes one first-step draft per contact, skips suppressed and already enrolled contacts", () =>
      Effect.gen(function*() {
        const { api, list, params } = yield* setUp
        yield* api.lists.addSuppression({ payload: { email: "CY@example.com" } })
        const enrolled = yield* api.sequences.enroll({ params, payload: { listId: list.id } })
        expect(enrolled).toEqual({ enrolled: 2, suppressed: 1, alreadyEnrolled: 0 })
        const again = yield* api.sequences.enroll({ params, payload: { listId: list.id } })
        expect(again).toEqual({ enrolled: 0, suppressed: 1, alreadyEnrolled: 2 })
        const page = yield* api.sequences.executions({ params, query: {} })
        expect(page.total).toBe(2)
        expect(page.items.map((e) => [e.email, e.stepIndex, e.status, e.drafted]).toSorted()).toEqual([
          ["ada@example.com", 0, "draft", false],
          ["bob@failing.example", 0, "draft", false]
        ])
        const rowsPage = yield* api.lists.listRows({ params: { listId: list.id }, query: {} })
        const other = yield* api.sequences.create({ payload: { name: "Chosen", steps } })
        const ada = rowsPage.items.find((row) => row.email === "ada@example.com")!
        const chosen = yield* api.sequences.enroll({ params: { sequenceId: other.id }, payload: { rowIds: [ada.id] } })
        expect(chosen).toEqual({ enrolled: 1, suppressed: 0, alreadyEnrolled: 0 })
      }))

    it.effect("drafting, approve, status filter and regenerate of failed executions", () =>
      Effect.gen(function*() {
        const { api, list, params } = yield* setUp
        yield* api.sequences.enroll({ params, payload: { listId: list.id } })
        const worker = yield* SequenceWorker
        // The worker drafts every company's executions: other tests' too.
        expect(yield* drain(worker.draftBatch)).toBeGreaterThanOrEqual(3)
        const drafts = yield* api.sequences.executions({ params, query: { status: "draft" } })
        expect(drafts.items.map((e) => [e.email, e.subject, e.body, e.drafted]).toSorted()).toEqual([
          ["ada@example.com", "Hello there", "<p>A drafted body</p>", true],
          ["cy@example.com", "Hello there", "<p>A drafted body</p>", true]
        ])
        const failed = yield* api.sequences.executions({ params, query: { status: "failed" } })
        expect(failed.items).toHaveLength(1)
        expect(failed.items[0]).toMatchObject({ email: "bob@failing.example", drafted: false })
        expect(failed.items[0].errorMessage).toContain("The model is down")

        const ada = drafts.items.find((e) => e.email === "ada@example.com")!
        const approval = yield* api.sequences.approve({
          params,
          payload: { executionIds: [ada.id, ada.id, failed.items[0].id, "sqx_unknown"] }
        })
        expect(approval).toEqual({
          approved: 1,
          skipped: 2,
          msg: "Approved 1 execution; skipped 2 (1 not an execution of this sequence, 1 not a written, unapproved draft)."
        })
        const approved = yield* api.sequences.executions({ params, query: { status: "approved" } })
        expect(approved.items.map((e) => e.id)).toEqual([ada.id])

        const regenerated = yield* api.sequences.regenerate({
          params,
          payload: { executionIds: [failed.items[0].id, ada.id, "sqx_unknown"] }
        })
        expect(regenerated.msg).toBe(
          "Regenerated 1 execution as unapproved drafts; skipped 2 (1 not an execution of this sequence, 1 not failed)."
        )
        const fresh = yield* api.sequences.executions({ params, query: { status: "draft" } })
        const bob = fresh.items.find((e) => e.id === failed.items[0].id)!
        expect(bob).toMatchObject({ status: "draft", drafted: false, subject: null, body: null, errorMessage: null })
        // Drafted again by the model: still failing for this contact, so failed again with its reason.
        expect(yield* drain(worker.draftBatch)).toBe(1)
        const again = yield* api.sequences.executions({ params, query: { status: "failed" } })
        expect(again.items.map((e) => e.id)).toEqual([bob.id])
        const none = yield* api.sequences.regenerate({ params, payload: { executionIds: [] } })
        expect(none.msg).toBe("Regenerated 0 executions as unapproved drafts; skipped 0.")
      }))

    it.effect("each draft is billed to the sequence's organization under feature sequences; without credits it fails", () =>
      Effect.gen(function*() {
        const { tenant, api, list, params } = yield* setUp
        yield* api.sequences.enroll({ params, payload: { listId: list.id } })
        yield* drain((yield* SequenceWorker).draftBatch)
        const history = yield* usageHistory(tenant.organizationId)
        // Two drafts written, one failed model call (released, not charged).
        expect(history.events.map((e) => [e.feature, e.companyId, e.inputTokens, e.outputTokens])).toEqual([
          ["sequences", tenant.companyId, scriptedUsage.inputTokens, scriptedUsage.outputTokens],
          ["sequences", tenant.companyId, scriptedUsage.inputTokens, scriptedUsage.outputTokens]
        ])
        expect(history.events.every((e) => e.credits > 0)).toBe(true)

        const organization = Option.getOrThrow(yield* settledOrganization(tenant.organizationId))
        const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }
        yield* spend(payer, { feature: "chat", credits: organization.creditLimit - organization.creditUsage })
        const broke = yield* api.sequences.create({ payload: { name: "Broke", steps } })
        yield* api.sequences.enroll({ params: { sequenceId: broke.id }, payload: { listId: list.id } })
        yield* drain((yield* SequenceWorker).draftBatch)
        const failed = yield* api.sequences.executions({ params: { sequenceId: broke.id }, query: { status: "failed" } })
        expect(failed.total).toBe(3)
        // The hold comes before the model call: nobody's draft is attempted.
        expect(failed.items.map((e) => e.errorMessage)).toEqual(Array(3).fill("The model failed: Insufficient credits"))
      }))

    it.effect("unenroll by address or row skips the contact's unsent executions; delete stops them all", () =>
      Effect.gen(function*() {
        const { api, list, sequence, params } = yield* setUp
        yield* api.sequences.enroll({ params, payload: { listId: list.id } })
        const executions = () => Effect.map(api.sequences.executions({ params, query: { pageSize: 100 } }), (page) => page.items)
        const byEmail = (email: string) => Effect.map(executions(), (all) => all.find((e) => e.email === email)!)

        expect(yield* api.sequences.unenroll({ params, payload: { emails: ["ADA@example.com", "nobody@example.com"] } }))
          .toEqual({ unenrolled: 1 })
        expect(yield* byEmail("ada@example.com")).toMatchObject({ status: "skipped", errorMessage: "The contact was unenrolled" })
        expect((yield* byEmail("cy@example.com")).status).toBe("draft")
        const cy = yield* byEmail("cy@example.com")
        expect(yield* api.sequences.unenroll({ params, payload: { rowIds: [cy.listRowId] } })).toEqual({ unenrolled: 1 })
        expect((yield* byEmail("cy@example.com")).status).toBe("skipped")
        // Already out: nothing more to stop.
        expect(yield* api.sequences.unenroll({ params, payload: { rowIds: [cy.listRowId] } })).toEqual({ unenrolled: 0 })

        const bob = yield* byEmail("bob@failing.example")
        expect(bob.status).toBe("draft")
        expect(yield* api.sequences.remove({ params, query: {} })).toEqual(sequence)
        expect((yield* Effect.flip(api.sequences.get({ params, query: {} })))._tag).toBe("NotFound")
        expect((yield* Effect.flip(api.sequences.remove({ params, query: {} })))._tag).toBe("NotFound")
        const stopped = yield* SequencesRepo.use((repo) => repo.execution(bob.id))
        expect(Option.map(stopped, (e) => [e.status, e.errorMessage])).toEqual(Option.some(["skipped", "The sequence was deleted"]))
        // The drafting worker leaves it alone.
        yield* drain((yield* SequenceWorker).draftBatch)
        expect(Option.map(yield* SequencesRepo.use((repo) => repo.execution(bob.id)), (e) => e.status)).toEqual(Option.some("skipped"))
      }))

    it.effect("bad input answers 400 naming the field", () =>
      Effect.gen(function*() {
        const { tenant, list, sequence } = yield* setUp
        const base = `/api/v0/sequences/${sequence.id}`
        const cases = [
          ["POST", "/api/v0/sequences", { steps }, "name"],
          ["POST", "/api/v0/sequences", { name: "N", steps: [] }, "steps"],
          ["POST", "/api/v0/sequences", { name: "   ", steps }, "name"],
          ["POST", "/api/v0/sequences", { name: "N", steps: Array(21).fill(steps[0]) }, "steps"],
          ["POST", "/api/v0/sequences", { name: "N", steps: [{ ...steps[0], type: "sms" }] }, "type"],
          ["POST", "/api/v0/sequences", { name: "N", steps: [{ ...steps[0], delayDays: -1 }] }, "delayDays"],
          ["POST", "/api/v0/sequences", { name: "N", steps: [{ ...steps[0], subject: "{{RANDOM | a" }] }, "steps[0].subject"],
          ["PATCH", base, { steps: [{ ...steps[0], body: "x".repeat(20_001) }] }, "body"],
          ["POST", `${base}/enroll`, {}, "listId"],
          ["POST", `${base}/enroll`, { listId: list.id, rowIds: ["r"] }, "listId"],
          ["POST", `${base}/enroll`, { rowIds: [] }, "rowIds"],
          ["POST", `${base}/executions/regenerate`, {}, "executionIds"],
          ["POST", `${base}/executions/regenerate`, { executionIds: "sqx_1" }, "executionIds"],
          ["POST", `${base}/executions/regenerate`, { executionIds: [1] }, "executionIds"],
          ["POST", `${base}/executions/regenerate`, { executionIds: Array.from({ length: 1_001 }, (_, i) => `sqx_${i}`) }, "executionIds"],
          ["POST", `${base}/executions/approve`, { executionIds: null }, "executionIds"],
          ["GET", `${base}/executions?status=sending`, undefined, "status"],
          ["POST", `${base}/unenroll`, {}, "rowIds"],
          ["POST", `${base}/unenroll`, { rowIds: ["r"], emails: ["a@example.com"] }, "rowIds"],
          ["POST", `${base}/unenroll`, { emails: [] }, "emails"]
        ] as const
        for (const [method, path, payload, field] of cases) {
          const response = yield* send(requestWithKey(method, path, tenant.apiKey, payload))
          expectErrorResponse(response, 400, field)
        }
      }))

    it.effect("roles: a viewer reads but cannot write; nobody reaches another company's sequence", () =>
      Effect.gen(function*() {
        const { tenant, api, list, sequence, params } = yield* setUp
        const other = yield* seedTenant("other")
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const reader = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        expect((yield* reader.sequences.get({ params, query: {} })).id).toBe(sequence.id)
        const denied = yield* Effect.flip(reader.sequences.enroll({ params, payload: { listId: list.id } }))
        expect(denied._tag).toBe("Forbidden")

        const stranger = yield* client({ apiKey: other.apiKey })
        const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
          stranger.sequences.get({ params, query: {} }),
          stranger.sequences.update({ params, payload: { name: "mine" } }),
          stranger.sequences.enroll({ params, payload: { listId: list.id } }),
          stranger.sequences.executions({ params, query: {} }),
          stranger.sequences.approve({ params, payload: { executionIds: [] } }),
          stranger.sequences.regenerate({ params, payload: { executionIds: [] } }),
          stranger.sequences.unenroll({ params, payload: { emails: ["ada@example.com"] } }),
          stranger.sequences.remove({ params, query: {} }),
          api.sequences.regenerate({ params: { sequenceId: "seq_unknown" }, payload: { executionIds: [] } })
        ]
        for (const attempt of attempts) {
          expect((yield* Effect.flip(attempt))._tag).toBe("NotFound")
        }
        // Their own sequence cannot enroll our list or our rows.
        const theirs = yield* stranger.sequences.create({ payload: { name: "Theirs", steps } })
        const theirParams = { sequenceId: theirs.id }
        expect((yield* Effect.flip(stranger.sequences.enroll({ params: theirParams, payload: { listId: list.id } })))._tag)
          .toBe("NotFound")
        const ourRows = yield* api.lists.listRows({ params: { listId: list.id }, query: {} })
        const foreignRows = yield* Effect.flip(
          stranger.sequences.enroll({ params: theirParams, payload: { rowIds: [ourRows.items[0].id] } })
        )
        expect(foreignRows._tag).toBe("NotFound")
        expect((yield* stranger.sequences.list({ query: {} })).items.map((s) => s.id)).toEqual([theirs.id])
        const anonymous = yield* client({})
        expect((yield* Effect.flip(anonymous.sequences.list({ query: {} })))._tag).toBe("Unauthorized")
      }))
  })
}
