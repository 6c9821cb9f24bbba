import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { zipSync } from "fflate"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { deliver, Inbound, inboundTestServer, rawMail, sentCampaign, sharedAddress } from "../../support/InboxTest.ts"
import { parseMail } from "../../support/SmtpServer.ts"
import { backends } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")

/** A campaign sent to `email` and its reply taken in: the tenant's client and the thread. */
const repliedThread = (email: string, text = "Sounds interesting, tell me more.") =>
  Effect.gen(function*() {
    yield* TestClock.setTime(start)
    const sent = yield* sentCampaign([email])
    const inbound = rawMail({ from: email, to: sharedAddress, subject: "Re: Quick question", text, inReplyTo: sent.messageIds.get(email)!, messageId: `<${crypto.randomUUID()}@contact.example>` })
    expect(yield* deliver(sharedAddress, inbound)).toMatchObject({ accepted: true })
    const thread = (yield* sent.api.inbox.listThreads({ query: {} })).items[0]!
    return { ...sent, thread }
  })

for (const backend of backends) {
  it.layer(inboundTestServer(backend.storage), { timeout: 120_000 })(`answers and hostile mail on ${backend.name}`, (it) => {
    it.effect("a reply goes out with In-Reply-To and References and joins the thread; a suppressed contact is refused", () =>
      Effect.gen(function*() {
        const { api, tenant, thread } = yield* repliedThread("ada@example.com")
        const { sink } = yield* Inbound
        const before = (yield* sink.received).length
        const inboundMessage = (yield* api.inbox.getThread({ params: { threadId: thread.id }, query: {} })).messages[0]!
        const sent = yield* api.inbox.reply({ params: { threadId: thread.id }, payload: { text: "Happy to show you.\nTuesday?" } })
        expect(sent).toMatchObject({ direction: "outbound", to: ["ada@example.com"], subject: "Re: Quick question", classification: null })
        const received = (yield* sink.received).slice(before)
        expect(received.map((mail) => mail.to)).toEqual([["ada@example.com"]])
        const mail = yield* parseMail(received[0]!)
        expect(mail.inReplyTo).toBe(inboundMessage.messageId)
        expect(mail.references).toEqual(inboundMessage.messageId)
        expect(mail.messageId).toBe(sent.messageId)
        expect(mail.text).toContain("Tuesday?")
        const after = yield* api.inbox.getThread({ params: { threadId: thread.id }, query: {} })
        expect(after.messages.map((message) => message.direction)).toEqual(["inbound", "outbound"])

        yield* api.lists.addSuppression({ payload: { email: "ADA@example.com" } })
        const refused = yield* send(requestWithKey("POST", `/api/v0/inbox/threads/${thread.id}/reply`, tenant.apiKey, { text: "Again" }))
        expectErrorResponse(refused, 400, /suppression list/)
      }))

    it.effect("a draft is written by the model and sends nothing", () =>
      Effect.gen(function*() {
        const { api, thread } = yield* repliedThread("bo@example.com")
        const { sink } = yield* Inbound
        const before = (yield* sink.received).length
        const draft = yield* api.inbox.draft({ params: { threadId: thread.id }, payload: {} })
        expect(draft.subject).toBe("Re: Quick question")
        expect(draft.text.length).toBeGreaterThan(10)
        expect((yield* sink.received).length).toBe(before)
        expect((yield* api.inbox.getThread({ params: { threadId: thread.id }, query: {} })).messageCount).toBe(1)
      }))

    it.effect("a 50 MB message is refused with 552, one without headers with 550 naming why, and the server goes on", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const huge = Buffer.concat([rawMail({ from: "x@example.com", to: sharedAddress, subject: "Big", text: "" }), Buffer.alloc(50 * 1024 * 1024, "a\r\n")])
        const tooLarge = yield* deliver(sharedAddress, huge)
        expect(tooLarge).toMatchObject({ accepted: false, code: 552 })
        expect(tooLarge.response).toMatch(/maximum size/)
        const headless = yield* deliver(sharedAddress, Buffer.from("\r\n\r\nno headers at all\r\n"))
        expect(headless).toMatchObject({ accepted: false, code: 550 })
        expect(headless.response).toMatch(/Malformed message/)
        const { api, thread } = yield* repliedThread("cy@example.com")
        expect(thread.contactEmail).toBe("cy@example.com")
        expect((yield* api.inbox.listThreads({ query: {} })).total).toBe(1)
      }))

    it.effect("a zip bomb attachment and broken MIME are taken without unpacking or crashing; injected header lines stay one line", () =>
      Effect.gen(function*() {
        const { api, messageIds } = yield* sentCampaign(["dee@example.com"])
        const bomb = Buffer.from(zipSync({ "zeros.bin": new Uint8Array(64 * 1024 * 1024) }, { level: 9 }))
        expect(bomb.length).toBeLessThan(1024 * 1024)
        const boundary = "b0und4ry"
        const raw = Buffer.from([
          "From: =?utf-8?q?Dee=0D=0ABcc=3A_evil=40attacker=2Eexample?= <dee@example.com>",
          `To: ${sharedAddress}`,
          "Subject: =?utf-8?q?Re=3A_Quick_question=0D=0ABcc=3A_evil=40attacker=2Eexample?=",
          `In-Reply-To: ${messageIds.get("dee@example.com")!}`,
          "Message-ID: <bomb-1@contact.example>",
          "MIME-Version: 1.0",
          `Content-Type: multipart/mixed; boundary="${boundary}"`,
          "",
          `--${boundary}`,
          "Content-Type: text/plain; charset=utf-8",
          "",
          "Not interested, thanks.",
          `--${boundary}`,
          "Content-Type: application/zip; name=\"bomb.zip\"",
          "Content-Transfer-Encoding: base64",
          "",
          bomb.toString("base64").replace(/.{76}/g, "$&\r\n"),
          `--${boundary}`,
          "Content-Type: multipart/alternative; boundary=\"never-closed\"",
          "",
          "--never-closed",
          "Content-Type: text/html",
          "",
          "<p>broken"
        ].join("\r\n"))
        expect(yield* deliver(sharedAddress, raw)).toMatchObject({ accepted: true })
        const thread = (yield* api.inbox.listThreads({ query: {} })).items[0]!
        expect(thread.subject).not.toMatch(/[\r\n]/)
        expect(thread.classification).toBe("not_interested")
        const full = yield* api.inbox.getThread({ params: { threadId: thread.id }, query: {} })
        expect(full.messages[0]!.text).toContain("Not interested")
        // The answer's subject carries the injected text as words, never as a header line.
        yield* api.inbox.reply({ params: { threadId: thread.id }, payload: { text: "Understood." } })
        const { sink } = yield* Inbound
        const answer = (yield* sink.received).at(-1)!
        expect(answer.to).toEqual(["dee@example.com"])
        expect(answer.raw.toString()).not.toMatch(/^Bcc:/im)
      }))
  })
}
