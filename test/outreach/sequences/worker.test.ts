import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import { abandonedSendError } from "../../../src/outreach/sequences/ExecutionStates.ts"
import { SequencesRepo } from "../../../src/outreach/sequences/SequencesRepo.ts"
import { SequenceWorker } from "../../../src/outreach/sequences/SequenceWorker.ts"
import { testRetryBaseMs } from "../../support/CampaignWorkerTest.ts"
import { getRedirect, send } from "../../support/Http.ts"
import { anotherSequenceWorker, drain, sequenceTestServer, testSequenceLeaseMs } from "../../support/SequenceWorkerTest.ts"
import { parseMail, smtpServer, type SmtpReply } from "../../support/SmtpServer.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")
const dayMs = 86_400_000

/** `tempfail…` is refused with 451 on its first try, `always-tempfail…` always, `bounce…` with 550 5.1.1. */
const answer = (address: string, attempt: number): SmtpReply | undefined => {
  if (address.startsWith("bounce")) return { code: 550, message: "5.1.1 No such user" }
  if (address.startsWith("always-tempfail")) return { code: 451, message: "4.3.0 Try again later" }
  if (address.startsWith("tempfail") && attempt === 1) return { code: 451, message: "4.3.0 Try again later" }
  return undefined
}

class Sink extends Context.Service<Sink, Effect.Success<ReturnType<typeof smtpServer>>>()("test/SequenceSink") {}

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.map(smtpServer({ onRecipient: answer }), (sink) =>
    sequenceTestServer(storage, sink.url, { settings: { batchSize: 10 } }).pipe(Layer.provideMerge(Layer.succeed(Sink, sink)))))

const steps = [
  {
    type: "email" as const,
    subject: "Hi {{firstName | there}}",
    body: `<p>Hello {{firstName | there}} at {{company | your company}}.</p><p><a href="https://shop.example/offer">The offer</a></p><p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>`,
    delayDays: 0
  },
  { type: "email" as const, subject: "Again, {{firstName | there}}", body: "<p>A reminder.</p>", delayDays: 2 }
]

let tenantCount = 0

/** A company with a two-step sequence and every contact of `emails` enrolled. */
const enrolled = (emails: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant(`seq-${++tenantCount}`)
    const api = yield* client({ apiKey: tenant.apiKey })
    const list = yield* api.lists.create({
      payload: { name: "Leads", rows: emails.map((email) => ({ email, firstName: "Ada", company: "Engines & Co" })) }
    })
    const sequence = yield* api.sequences.create({ payload: { name: "Intro", steps } })
    yield* api.sequences.enroll({ params: { sequenceId: sequence.id }, payload: { listId: list.id } })
    const params = { sequenceId: sequence.id }
    const executions = (status?: "draft" | "approved" | "sent" | "failed" | "skipped") =>
      Effect.map(api.sequences.executions({ params, query: status === undefined ? { pageSize: 100 } : { status, pageSize: 100 } }), (page) => page.items)
    /** Drafts everything pending and approves every written draft. */
    const draftAndApprove = Effect.gen(function*() {
      yield* drain((yield* SequenceWorker).draftBatch)
      const drafts = (yield* executions("draft")).filter((e) => e.drafted)
      yield* api.sequences.approve({ params, payload: { executionIds: drafts.map((e) => e.id) } })
    })
    return { tenant, api, params, executions, draftAndApprove }
  })

const mailsTo = (address: string) => Effect.map(Sink.use((sink) => sink.received), (all) => all.filter((m) => m.to[0] === address))

const path = (url: string) => new URL(url).pathname

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 60_000 })(`sequence worker on ${backend.name}`, (it) => {
    it.effect("the local model drafts the rendered template; approved steps are sent when due, each next step after its delay", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, executions, draftAndApprove } = yield* enrolled(["ada@steps.example"])
        const worker = yield* SequenceWorker
        yield* drain(worker.draftBatch)
        const [first] = yield* executions()
        expect(first).toMatchObject({ stepIndex: 0, status: "draft", drafted: true, subject: "Hi Ada" })
        expect(first.body).toContain("Hello Ada at Engines &amp; Co.")
        // The unsubscribe link is resolved at send time: the draft shows its merge field, not a blank.
        expect(first.body).toContain(`<a href="{{unsubscribeUrl}}">Unsubscribe</a>`)
        // Not approved: nothing is sent.
        yield* drain(worker.sendBatch)
        expect(yield* mailsTo("ada@steps.example")).toHaveLength(0)

        yield* draftAndApprove
        yield* drain(worker.sendBatch)
        const [mail] = yield* mailsTo("ada@steps.example")
        const parsed = yield* parseMail(mail)
        expect(parsed.subject).toBe("Hi Ada")
        expect(parsed.messageId).toBe(`<${first.id}@shop.example>`)
        const html = String(parsed.html)
        expect(html).toContain("Hello Ada at Engines &amp; Co.")
        expect(html).not.toContain("shop.example/offer")
        expect(parsed.text).toContain("https://shop.example/offer")
        const lines = new Map(parsed.headerLines.map((header) => [header.key, header.line]))
        const unsubscribeUrl = /^List-Unsubscribe:\s*<([^>]+)>$/.exec(lines.get("list-unsubscribe") ?? "")![1]
        expect(unsubscribeUrl).toMatch(/^https:\/\/mail\.example\.test\/api\/v0\/t\/u\//)
        expect(html).toContain(`<a href="${unsubscribeUrl}">Unsubscribe</a>`)

        const clickUrl = /href="(https:\/\/mail\.example\.test\/api\/v0\/t\/c\/[^"]+)"/.exec(html)![1]
        const pixelUrl = /<img src="(https:\/\/mail\.example\.test\/api\/v0\/t\/o\/[^"]+)"/.exec(html)![1]
        expect((yield* send(HttpClientRequest.get(path(pixelUrl)))).status).toBe(200)
        const click = yield* getRedirect(path(clickUrl))
        expect(click.status).toBe(302)
        expect(click.location).toBe("https://shop.example/offer")

        const afterFirst = yield* executions()
        const sent = afterFirst.find((e) => e.stepIndex === 0)!
        expect(sent).toMatchObject({ status: "sent", sentAt: new Date(start), openCount: 1, clickCount: 1 })
        const second = afterFirst.find((e) => e.stepIndex === 1)!
        expect(second).toMatchObject({ status: "draft", drafted: false, dueAt: new Date(start + 2 * dayMs) })

        yield* draftAndApprove
        const approved = (yield* executions("approved")).map((e) => e.id)
        expect(approved).toEqual([second.id])
        yield* drain(worker.sendBatch)
        expect(yield* mailsTo("ada@steps.example")).toHaveLength(1)
        yield* TestClock.adjust(2 * dayMs)
        yield* drain(worker.sendBatch)
        const both = yield* mailsTo("ada@steps.example")
        expect(both).toHaveLength(2)
        const again = yield* parseMail(both[1])
        expect(again.subject).toBe("Again, Ada")
        // A body without an unsubscribe link gets one.
        const againUnsubscribe = /^List-Unsubscribe:\s*<([^>]+)>$/.exec(
          again.headerLines.find((header) => header.key === "list-unsubscribe")!.line
        )![1]
        expect(String(again.html)).toContain(`href="${againUnsubscribe}"`)
        expect((yield* executions("sent")).map((e) => e.stepIndex).toSorted()).toEqual([0, 1])
        expect(yield* executions()).toHaveLength(2)
        expect((yield* api.sequences.get({ params: { sequenceId: sent.sequenceId }, query: {} })).steps).toHaveLength(2)
      }))

    it.effect("a contact who unsubscribes or is suppressed leaves the sequence: its remaining executions are skipped", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, executions, draftAndApprove } = yield* enrolled(["una@leave.example", "sue@leave.example"])
        const worker = yield* SequenceWorker
        yield* draftAndApprove
        yield* drain(worker.sendBatch)
        yield* draftAndApprove
        expect((yield* executions("approved")).map((e) => e.email).toSorted()).toEqual(["sue@leave.example", "una@leave.example"])

        const parsed = yield* parseMail((yield* mailsTo("una@leave.example"))[0])
        const unsubscribeUrl = /^List-Unsubscribe:\s*<([^>]+)>$/.exec(
          parsed.headerLines.find((header) => header.key === "list-unsubscribe")!.line
        )![1]
        const oneClick = yield* send(
          HttpClientRequest.post(path(unsubscribeUrl)).pipe(
            HttpClientRequest.bodyText("List-Unsubscribe=One-Click", "application/x-www-form-urlencoded")
          )
        )
        expect(oneClick.status).toBe(200)
        const skipped = yield* executions("skipped")
        expect(skipped.map((e) => [e.email, e.stepIndex, e.errorMessage])).toEqual([
          ["una@leave.example", 1, "The contact unsubscribed"]
        ])

        // Suppressed some other way (the API): skipped when its send comes due, nothing sent.
        yield* api.lists.addSuppression({ payload: { email: "sue@leave.example" } })
        yield* TestClock.adjust(2 * dayMs)
        yield* drain(worker.sendBatch)
        expect(yield* mailsTo("sue@leave.example")).toHaveLength(1)
        expect(yield* mailsTo("una@leave.example")).toHaveLength(1)
        expect((yield* executions("skipped")).map((e) => e.email).toSorted()).toEqual(["sue@leave.example", "una@leave.example"])
        expect((yield* executions("sent")).map((e) => e.stepIndex)).toEqual([0, 0])
      }))

    it.effect("SMTP outcomes: 4xx retried then sent or failed, 5xx failed, a hard bounce suppressed", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, executions, draftAndApprove } = yield* enrolled([
          "tempfail@smtp.example",
          "always-tempfail@smtp.example",
          "bounce@smtp.example"
        ])
        const worker = yield* SequenceWorker
        yield* draftAndApprove
        for (let round = 0; round < 4; round++) {
          yield* drain(worker.sendBatch)
          yield* TestClock.adjust(testRetryBaseMs * 2 ** round)
        }
        const byEmail = new Map((yield* executions()).filter((e) => e.stepIndex === 0).map((e) => [e.email, e]))
        expect(byEmail.get("tempfail@smtp.example")).toMatchObject({ status: "sent" })
        expect(byEmail.get("always-tempfail@smtp.example")).toMatchObject({ status: "failed" })
        expect(byEmail.get("always-tempfail@smtp.example")!.errorMessage).toContain("451")
        expect((yield* Sink).attemptsFor("always-tempfail@smtp.example")).toBe(3)
        expect(byEmail.get("bounce@smtp.example")).toMatchObject({ status: "failed" })
        expect(byEmail.get("bounce@smtp.example")!.errorMessage).toContain("550")
        const suppressed = yield* api.lists.listSuppressions({ query: {} })
        expect(suppressed.items.map((s) => [s.email, s.reason])).toEqual([["bounce@smtp.example", "hard_bounce"]])
        // Failed sends can be regenerated: fresh drafts, written again by the model.
        const failedIds = (yield* executions("failed")).map((e) => e.id)
        const { msg } = yield* api.sequences.regenerate({ params: { sequenceId: byEmail.get("bounce@smtp.example")!.sequenceId }, payload: { executionIds: failedIds } })
        expect(msg).toBe("Regenerated 2 executions as unapproved drafts; skipped 0.")
      }))

    it.effect("racing workers: each execution is drafted once and sent once; a send cut off mid-way is never repeated", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const emails = Array.from({ length: 12 }, (_, i) => `race${i}@race.example`)
        const worker = yield* SequenceWorker
        // Earlier tests' executions drafted first: the claims below see this test's only.
        yield* drain(worker.draftBatch)
        const { api, executions, draftAndApprove } = yield* enrolled(emails)
        const other = yield* anotherSequenceWorker
        const repo = yield* SequencesRepo
        const now = new Date(start)
        // A drafting worker that claimed one execution and died: it is drafted by another once its lease expired.
        const deadDraft = yield* repo.claimDrafts(now, new Date(start + testSequenceLeaseMs), 1)
        const drafted = yield* Effect.all([drain(worker.draftBatch), drain(other.draftBatch)], { concurrency: 2 })
        expect(drafted[0] + drafted[1]).toBeGreaterThanOrEqual(emails.length - 1)
        expect((yield* executions("draft")).filter((e) => !e.drafted).map((e) => e.id)).toEqual([deadDraft.executions[0].id])
        yield* TestClock.adjust(testSequenceLeaseMs + 1)
        yield* Effect.all([drain(worker.draftBatch), drain(other.draftBatch)], { concurrency: 2 })
        expect((yield* executions("draft")).every((e) => e.drafted)).toBe(true)
        expect(yield* repo.recordDraft(deadDraft.executions[0].id, deadDraft.token, { _tag: "Drafted", subject: "late", body: "late" }, now))
          .toBe(false)
        yield* TestClock.setTime(start)
        yield* draftAndApprove

        // A worker that claimed two executions and died: one after marking its send as started, one before.
        const claim = yield* repo.claimSends(now, new Date(start + testSequenceLeaseMs), 2)
        const [cutOff, untouched] = claim.executions
        expect(yield* repo.beginSend(cutOff.id, claim.token, now)).toBe(true)
        yield* Effect.all([drain(worker.sendBatch), drain(other.sendBatch)], { concurrency: 2 })
        yield* TestClock.adjust(testSequenceLeaseMs + 1)
        yield* Effect.all([drain(worker.sendBatch), drain(other.sendBatch)], { concurrency: 2 })

        for (const email of emails) {
          expect(yield* mailsTo(email)).toHaveLength(email === cutOff.email ? 0 : 1)
        }
        const first = (yield* executions()).filter((e) => e.stepIndex === 0)
        expect(first.find((e) => e.id === cutOff.id)).toMatchObject({ status: "uncertain", errorMessage: abandonedSendError })
        expect(first.find((e) => e.id === untouched.id)).toMatchObject({ status: "sent" })
        expect(first.filter((e) => e.status === "sent")).toHaveLength(emails.length - 1)
        // The dead worker's late outcome is refused: its lease is gone.
        expect(yield* repo.recordSend(cutOff.id, claim.token, { _tag: "Sent", messageId: "<late@x>", next: undefined }, 3, now))
          .toBe(false)
        // Maybe delivered: regenerate leaves it unless asked.
        const params = { sequenceId: cutOff.sequenceId }
        const skipped = yield* api.sequences.regenerate({ params, payload: { executionIds: [cutOff.id] } })
        expect(skipped.msg).toBe("Regenerated 0 executions as unapproved drafts; skipped 1 (1 not failed).")
        const asked = yield* api.sequences.regenerate({ params, payload: { executionIds: [cutOff.id], includeUncertain: true } })
        expect(asked.msg).toBe("Regenerated 1 execution as unapproved drafts; skipped 0.")
      }))
  })
}
