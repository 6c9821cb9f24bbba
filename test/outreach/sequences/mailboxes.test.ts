import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { MailboxesRepo } from "../../../src/outreach/inbox/MailboxesRepo.ts"
import { mailboxesFullReason, mailboxesGoneError } from "../../../src/outreach/sequences/MailboxRotation.ts"
import { SequenceWorker } from "../../../src/outreach/sequences/SequenceWorker.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { anotherSequenceWorker, drain, sequenceTestServer } from "../../support/SequenceWorkerTest.ts"
import { parseMail, smtpServer } from "../../support/SmtpServer.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")
const dayMs = 86_400_000

type Sink = Effect.Success<ReturnType<typeof smtpServer>>

/** The platform's mailer's sink and two mailboxes' own SMTP servers, each taking only its mailbox's login. */
class Sinks extends Context.Service<Sinks, { readonly platform: Sink; readonly alpha: Sink; readonly beta: Sink }>()("test/MailboxSinks") {}

const logins = { alpha: { user: "alpha@sender.example", pass: "alpha-smtp-secret" }, beta: { user: "beta@sender.example", pass: "beta-smtp-secret" } }

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.gen(function*() {
    const sinks = { platform: yield* smtpServer(), alpha: yield* smtpServer({ auth: logins.alpha }), beta: yield* smtpServer({ auth: logins.beta }) }
    return sequenceTestServer(storage, sinks.platform.url, { settings: { batchSize: 2 }, server: { outbound: { allowedHosts: ["127.0.0.1"] } } })
      .pipe(Layer.provideMerge(Layer.succeed(Sinks, sinks)))
  }))

const steps = [
  { type: "email" as const, subject: "Hi {{firstName | there}}", body: "<p>Hello.</p>", delayDays: 0 },
  { type: "email" as const, subject: "Again", body: "<p>A reminder.</p>", delayDays: 1 }
]

const portOf = (sink: Sink) => Number(new URL(sink.url).port)

let tenantCount = 0

/** A company with two mailboxes (alpha: 2 a day, beta: 3 a day) on their own SMTP servers. */
const company = Effect.gen(function*() {
  const tenant = yield* seedTenant(`mbx-${++tenantCount}`)
  const api = yield* client({ apiKey: tenant.apiKey })
  const sinks = yield* Sinks
  const mailbox = (name: "alpha" | "beta", dailyLimit: number) =>
    api.inbox.createMailbox({
      payload: {
        email: logins[name].user,
        displayName: name === "alpha" ? "Alpha" : "Beta",
        imap: { host: "127.0.0.1", port: 1, secure: false, user: logins[name].user, password: "unused" },
        smtp: { host: "127.0.0.1", port: portOf(sinks[name]), secure: false, user: logins[name].user, password: logins[name].pass },
        dailyLimit
      }
    })
  return { tenant, api, alpha: yield* mailbox("alpha", 2), beta: yield* mailbox("beta", 3) }
})

/** Who received what from a sink: recipient → count. */
const receivedBy = (sink: Sink) => Effect.map(sink.received, (all) => all.map((mail) => mail.to[0]!))

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 90_000 })(`sequences through mailboxes on ${backend.name}`, (it) => {
    it.effect("two racing workers keep each mailbox's daily limit exactly, rotate, defer to the next UTC day and keep a contact on its mailbox", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, alpha, beta } = yield* company
        const sinks = yield* Sinks
        const emails = Array.from({ length: 6 }, (_, i) => `c${i}@contacts.example`)
        const list = yield* api.lists.create({ payload: { name: "Leads", rows: emails.map((email) => ({ email, firstName: "Ada" })) } })
        const sequence = yield* api.sequences.create({ payload: { name: "Rotating", steps, listId: list.id, mailboxIds: [alpha.id, beta.id] } })
        expect(sequence.mailboxIds).toEqual([alpha.id, beta.id])
        yield* api.sequences.enroll({ params: { sequenceId: sequence.id }, payload: { listId: list.id } })
        const worker = yield* SequenceWorker
        const other = yield* anotherSequenceWorker
        const params = { sequenceId: sequence.id }
        const executions = Effect.map(api.sequences.executions({ params, query: { pageSize: 100 } }), (page) => page.items)
        const draftAndApprove = Effect.gen(function*() {
          yield* drain(worker.draftBatch)
          const drafts = (yield* executions).filter((e) => e.status === "draft" && e.drafted)
          yield* api.sequences.approve({ params, payload: { executionIds: drafts.map((e) => e.id) } })
        })
        const race = Effect.all([drain(worker.sendBatch), drain(other.sendBatch)], { concurrency: 2 })
        const counts = Effect.gen(function*() {
          return { alpha: (yield* receivedBy(sinks.alpha)).length, beta: (yield* receivedBy(sinks.beta)).length, platform: (yield* receivedBy(sinks.platform)).length }
        })

        // Day 1: five of six fit (2 + 3); the sixth waits for midnight UTC, approved, not failed.
        yield* draftAndApprove
        yield* race
        expect(yield* counts).toEqual({ alpha: 2, beta: 3, platform: 0 })
        const day1 = (yield* executions).filter((e) => e.stepIndex === 0)
        expect(day1.filter((e) => e.status === "sent").map((e) => e.mailboxId).toSorted()).toEqual([alpha.id, alpha.id, beta.id, beta.id, beta.id].toSorted())
        const waiting = day1.filter((e) => e.status === "approved")
        expect(waiting.map((e) => [e.dueAt, e.errorMessage])).toEqual([[new Date("2026-06-02T00:00:00Z"), mailboxesFullReason]])
        // Sent through the mailbox's own server: its address and name, no platform Reply-To.
        const first = yield* parseMail((yield* sinks.alpha.received)[0]!)
        expect(first.from?.value[0]).toMatchObject({ address: "alpha@sender.example", name: "Alpha" })
        expect(first.messageId).toMatch(/@sender\.example>$/)
        expect(first.replyTo).toBeUndefined()

        // Midnight UTC: the sixth goes out; each contact's next step is due a day after its first.
        yield* TestClock.setTime(Date.parse("2026-06-02T00:00:01Z"))
        yield* race
        expect((yield* counts).alpha + (yield* counts).beta).toBe(6)
        const firstMailbox = new Map((yield* executions).filter((e) => e.stepIndex === 0).map((e) => [e.email, e.mailboxId]))
        expect([...firstMailbox.values()].every((id) => id === alpha.id || id === beta.id)).toBe(true)
        const usedToday = (yield* executions).find((e) => e.id === waiting[0]!.id)!.mailboxId
        // The next steps keep their contact's mailbox, even when it is full and the other one is not.
        yield* draftAndApprove
        expect((yield* executions).filter((e) => e.stepIndex === 1).every((e) => e.mailboxId === firstMailbox.get(e.email))).toBe(true)
        yield* TestClock.setTime(start + dayMs)
        yield* race
        const day2 = yield* counts
        // Day 2: one sent at midnight plus the five second steps kept on their mailboxes; the full one's last waits.
        expect(day2.alpha + day2.beta).toBe(10)
        expect(day2.alpha - 2).toBeLessThanOrEqual(2)
        expect(day2.beta - 3).toBeLessThanOrEqual(3)
        expect(usedToday === alpha.id ? day2.alpha - 2 : day2.beta - 3).toBe(usedToday === alpha.id ? 2 : 3)

        // Day 3: the deferred second step and the sixth contact's go out, each through its contact's mailbox.
        yield* TestClock.setTime(start + 2 * dayMs)
        yield* race
        expect(yield* counts).toMatchObject({ platform: 0 })
        const all = yield* executions
        expect(all.filter((e) => e.status === "sent")).toHaveLength(12)
        for (const email of emails) {
          const [viaAlpha, viaBeta] = [(yield* receivedBy(sinks.alpha)).filter((to) => to === email).length, (yield* receivedBy(sinks.beta)).filter((to) => to === email).length]
          expect(firstMailbox.get(email) === alpha.id ? [viaAlpha, viaBeta] : [viaBeta, viaAlpha]).toEqual([2, 0])
        }
      }))

    it.effect("twenty concurrent takers of one day's sends get exactly the mailboxes' limits, least used first", () =>
      Effect.gen(function*() {
        const { tenant, alpha, beta } = yield* company
        const repo = yield* MailboxesRepo
        const takers = Array.from({ length: 20 }, () => repo.takeDailySlot(tenant.companyId, [alpha.id, beta.id], "2026-07-01"))
        const slots = yield* Effect.all(takers, { concurrency: 20 })
        const taken = slots.flatMap((slot) => (slot._tag === "Taken" ? [slot.mailbox.id] : []))
        expect(taken.filter((id) => id === alpha.id)).toHaveLength(2)
        expect(taken.filter((id) => id === beta.id)).toHaveLength(3)
        expect(slots.filter((slot) => slot._tag === "Full")).toHaveLength(15)
        // A new day counts afresh; alternating while both have room.
        const next = yield* Effect.forEach([1, 2, 3, 4], () => repo.takeDailySlot(tenant.companyId, [alpha.id, beta.id], "2026-07-02"))
        expect(next.map((slot) => (slot._tag === "Taken" ? slot.mailbox.id : slot._tag))).toEqual(
          [alpha.id, beta.id].toSorted().concat([alpha.id, beta.id].toSorted())
        )
        expect(yield* repo.takeDailySlot(tenant.companyId, ["mbx_unknown"], "2026-07-02")).toEqual({ _tag: "Gone" })
      }))

    it.effect("mailboxes are the company's own (404 otherwise); [] returns to the platform's mailer; deleted mailboxes fail the send", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const own = yield* company
        const stranger = yield* company
        const refused = yield* send(requestWithKey("POST", "/api/v0/sequences", own.tenant.apiKey, { name: "Theirs", steps, mailboxIds: [stranger.alpha.id] }))
        expectErrorResponse(refused, 404, new RegExp(`Mailbox ${stranger.alpha.id} not found`))
        const sequence = yield* own.api.sequences.create({ payload: { name: "Mine", steps: [steps[0]!], mailboxIds: [own.alpha.id] } })
        const patchRefused = yield* send(requestWithKey("PATCH", `/api/v0/sequences/${sequence.id}`, own.tenant.apiKey, { mailboxIds: [stranger.beta.id] }))
        expectErrorResponse(patchRefused, 404, /not found/)
        const list = yield* own.api.lists.create({ payload: { name: "L", rows: [{ email: "gone@contacts.example" }, { email: "platform@contacts.example" }] } })
        const params = { sequenceId: sequence.id }
        const worker = yield* SequenceWorker
        const approveAll = Effect.gen(function*() {
          yield* drain(worker.draftBatch)
          const drafts = (yield* own.api.sequences.executions({ params, query: {} })).items.filter((e) => e.status === "draft" && e.drafted)
          yield* own.api.sequences.approve({ params, payload: { executionIds: drafts.map((e) => e.id) } })
        })
        const rows = (yield* own.api.lists.listRows({ params: { listId: list.id }, query: {} })).items
        yield* own.api.sequences.enroll({ params, payload: { rowIds: [rows.find((row) => row.email === "gone@contacts.example")!.id] } })
        yield* approveAll
        yield* own.api.inbox.deleteMailbox({ params: { mailboxId: own.alpha.id }, query: {} })
        yield* drain(worker.sendBatch)
        const failed = (yield* own.api.sequences.executions({ params, query: { status: "failed" } })).items
        expect(failed.map((e) => [e.email, e.errorMessage])).toEqual([["gone@contacts.example", mailboxesGoneError]])

        const back = yield* own.api.sequences.update({ params, payload: { mailboxIds: [] } })
        expect(back.mailboxIds).toEqual([])
        yield* own.api.sequences.enroll({ params, payload: { rowIds: [rows.find((row) => row.email === "platform@contacts.example")!.id] } })
        yield* approveAll
        yield* drain(worker.sendBatch)
        expect(yield* receivedBy((yield* Sinks).platform)).toContain("platform@contacts.example")
      }))
  })
}
