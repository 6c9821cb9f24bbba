import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { SequencesConfig } from "../../../src/outreach/sequences/SequencesConfig.ts"
import { SequencesRepo } from "../../../src/outreach/sequences/SequencesRepo.ts"
import { SequenceWorker } from "../../../src/outreach/sequences/SequenceWorker.ts"
import { deliver, Inbound, inboundTestServer, rawMail, sharedAddress } from "../../support/InboxTest.ts"
import { drain } from "../../support/SequenceWorkerTest.ts"
import { parseMail } from "../../support/SmtpServer.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"

/**
 * The outreach loop end to end, through the API and real SMTP: leads imported
 * from CSV → a smart list → a sequence enrolled from it, drafted, approved and
 * sent → the contact replies by SMTP → the sequence stops for that contact →
 * the lead is `interested` → the thread is answered, threaded to the reply.
 */

const start = Date.parse("2026-06-01T08:00:00Z")

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  SequenceWorker.layer.pipe(
    Layer.provideMerge(SequencesConfig.layerWith({ enabled: false })),
    Layer.provideMerge(inboundTestServer(storage))
  )

const csv = (text: string) => {
  const form = new FormData()
  form.append("file", new Blob([text], { type: "text/csv" }), "leads.csv")
  return form
}

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 90_000 })(`the outreach loop on ${backend.name}`, (it) => {
    it.effect("import → smart list → sequence → reply → sequence stops → lead interested → thread answered", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const api = yield* client({ apiKey: (yield* seedTenant()).apiKey })
        const imported = yield* api.leads.import({
          payload: csv("email,firstName,company\nada@example.com,Ada,Acme\nbob@example.com,Bob,Acme\ncy@example.com,Cy,Other\n")
        })
        expect(imported).toMatchObject({ created: 3 })
        const acme = yield* api.smartLists.create({
          payload: { name: "Acme", filter: { all: [{ field: "company", op: "eq", value: "Acme" }] } }
        })
        const sequence = yield* api.sequences.create({
          payload: {
            name: "Intro",
            steps: [
              { type: "email", subject: "Hello {{firstName}}", body: "<p>Would a demo help?</p>", delayDays: 0 },
              { type: "email", subject: "Following up", body: "<p>Just checking in.</p>", delayDays: 3 }
            ]
          }
        })
        const params = { sequenceId: sequence.id }
        expect(yield* api.sequences.enroll({ params, payload: { smartListId: acme.id } })).toMatchObject({ enrolled: 2 })
        const worker = yield* SequenceWorker
        yield* drain(worker.draftBatch)
        const drafts = yield* api.sequences.executions({ params, query: {} })
        yield* api.sequences.approve({ params, payload: { executionIds: drafts.items.map((execution) => execution.id) } })
        yield* drain(worker.sendBatch)
        const sent = (yield* api.sequences.executions({ params, query: { status: "sent" } })).items
        expect(sent.map((execution) => execution.email).toSorted()).toEqual(["ada@example.com", "bob@example.com"])

        const toAda = yield* SequencesRepo.use((repo) => repo.execution(sent.find((execution) => execution.email === "ada@example.com")!.id))
        const reply = rawMail({
          from: "Ada <ada@example.com>",
          to: sharedAddress,
          subject: "Re: Hello Ada",
          text: "Yes, that sounds interesting. Let's talk on Tuesday.",
          inReplyTo: toAda._tag === "Some" ? toAda.value.messageId! : ""
        })
        expect(yield* deliver(sharedAddress, reply)).toMatchObject({ accepted: true })

        const secondSteps = (yield* api.sequences.executions({ params, query: {} })).items
          .filter((execution) => execution.stepIndex === 1)
          .map((execution) => [execution.email, execution.status])
          .toSorted()
        expect(secondSteps).toEqual([["ada@example.com", "skipped"], ["bob@example.com", "draft"]])
        const ada = (yield* api.leads.list({ query: { search: "ada@example.com" } })).items[0]!
        expect(ada.status).toBe("interested")
        const timeline = (yield* api.leads.activities({ params: { leadId: ada.id }, query: {} })).items.map((activity) => activity.type)
        expect(timeline).toEqual(expect.arrayContaining(["sent", "replied", "status_changed"]))

        const [thread] = (yield* api.inbox.listThreads({ query: { leadId: ada.id } })).items
        expect(thread).toMatchObject({ contactEmail: "ada@example.com", sequenceId: sequence.id, classification: "interested" })
        const { sink } = yield* Inbound
        const before = (yield* sink.received).length
        const answer = yield* api.inbox.reply({ params: { threadId: thread!.id }, payload: { text: "Tuesday at ten, then." } })
        const [mail] = (yield* sink.received).slice(before)
        const parsed = yield* parseMail(mail!)
        const inbound = (yield* api.inbox.getThread({ params: { threadId: thread!.id }, query: {} })).messages[0]!
        expect(parsed.inReplyTo).toBe(inbound.messageId)
        expect(parsed.messageId).toBe(answer.messageId)
        expect(parsed.text).toContain("Tuesday at ten")
      }))
  })
}
