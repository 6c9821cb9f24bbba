import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { SequencesConfig } from "../../../src/outreach/sequences/SequencesConfig.ts"
import { SequencesRepo } from "../../../src/outreach/sequences/SequencesRepo.ts"
import { SequenceWorker } from "../../../src/outreach/sequences/SequenceWorker.ts"
import { deliver, inboundTestServer, rawMail, sentCampaign, sharedAddress } from "../../support/InboxTest.ts"
import { drain } from "../../support/SequenceWorkerTest.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  SequenceWorker.layer.pipe(
    Layer.provideMerge(SequencesConfig.layerWith({ enabled: false })),
    Layer.provideMerge(inboundTestServer(storage))
  )

const steps = [
  { type: "email" as const, subject: "Hello {{firstName}}", body: "<p>Would a demo help?</p>", delayDays: 0 },
  { type: "email" as const, subject: "Following up", body: "<p>Just checking in.</p>", delayDays: 3 }
]

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 90_000 })(`replies to sequences on ${backend.name}`, (it) => {
    it.effect("a reply stops the contact's sequences that stop on reply, not the others; an absence notice stops nothing", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const list = yield* api.lists.create({ payload: { name: "Leads", rows: [{ email: "ada@example.com", firstName: "Ada" }, { email: "bob@example.com", firstName: "Bob" }] } })
        const stopping = yield* api.sequences.create({ payload: { name: "Stops", steps, listId: list.id } })
        expect(stopping.stopOnReply).toBe(true)
        const keeping = yield* api.sequences.create({ payload: { name: "Keeps", steps, listId: list.id, stopOnReply: false } })
        for (const sequence of [stopping, keeping]) yield* api.sequences.enroll({ params: { sequenceId: sequence.id }, payload: { listId: list.id } })
        const worker = yield* SequenceWorker
        yield* drain(worker.draftBatch)
        for (const sequence of [stopping, keeping]) {
          const drafts = yield* api.sequences.executions({ params: { sequenceId: sequence.id }, query: {} })
          yield* api.sequences.approve({ params: { sequenceId: sequence.id }, payload: { executionIds: drafts.items.map((execution) => execution.id) } })
        }
        yield* drain(worker.sendBatch)
        const sent = yield* api.sequences.executions({ params: { sequenceId: stopping.id }, query: { status: "sent" } })
        const toAda = sent.items.find((execution) => execution.email === "ada@example.com")!
        const toBob = sent.items.find((execution) => execution.email === "bob@example.com")!
        const messageIdOf = (id: string) => Effect.map(SequencesRepo.use((repo) => repo.execution(id)), (execution) => execution._tag === "Some" ? execution.value.messageId! : "")

        const reply = rawMail({ from: "ada@example.com", to: sharedAddress, subject: "Re: Hello Ada", text: "Yes, let's talk.", inReplyTo: yield* messageIdOf(toAda.id) })
        expect(yield* deliver(sharedAddress, reply)).toMatchObject({ accepted: true })
        const absence = rawMail({
          from: "bob@example.com",
          to: sharedAddress,
          subject: "Automatic reply: Hello Bob",
          text: "I am out of the office until Monday.",
          inReplyTo: yield* messageIdOf(toBob.id),
          headers: { "Auto-Submitted": "auto-replied" }
        })
        expect(yield* deliver(sharedAddress, absence)).toMatchObject({ accepted: true })

        const pending = (sequenceId: string, email: string) =>
          Effect.map(api.sequences.executions({ params: { sequenceId }, query: {} }), (page) =>
            page.items.filter((execution) => execution.email === email && execution.stepIndex === 1).map((execution) => [execution.status, execution.errorMessage]))
        expect(yield* pending(stopping.id, "ada@example.com")).toEqual([["skipped", "The contact replied"]])
        expect(yield* pending(keeping.id, "ada@example.com")).toEqual([["draft", null]])
        expect(yield* pending(stopping.id, "bob@example.com")).toEqual([["draft", null]])
        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.sequenceId, thread.classification]).toSorted()).toEqual([
          ["ada@example.com", stopping.id, "interested"],
          ["bob@example.com", stopping.id, "out_of_office"]
        ])
      }))

    it.effect("a reply to a campaign message takes the contact out of the company's sequences that stop on reply too", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, messageIds } = yield* sentCampaign(["ada@example.com", "bob@example.com"])
        const list = yield* api.lists.create({ payload: { name: "Nurture", rows: [{ email: "ada@example.com" }, { email: "bob@example.com" }] } })
        const sequence = yield* api.sequences.create({ payload: { name: "Nurture", steps, listId: list.id } })
        yield* api.sequences.enroll({ params: { sequenceId: sequence.id }, payload: { listId: list.id } })
        yield* drain((yield* SequenceWorker).draftBatch)

        const reply = rawMail({ from: "ada@example.com", to: sharedAddress, subject: "Re: Quick question", text: "Yes, tell me more.", inReplyTo: messageIds.get("ada@example.com")! })
        expect(yield* deliver(sharedAddress, reply)).toMatchObject({ accepted: true })

        const executions = yield* api.sequences.executions({ params: { sequenceId: sequence.id }, query: {} })
        expect(executions.items.map((execution) => [execution.email, execution.status, execution.errorMessage]).toSorted()).toEqual([
          ["ada@example.com", "skipped", "The contact replied"],
          ["bob@example.com", "draft", null]
        ])
      }))
  })
}
