import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { dkimVerify } from "mailauth"
import { type ParsedMail, simpleParser } from "mailparser"
import { generateKeyPairSync, type KeyObject } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Mailer, type MailSettings, pacer } from "../../../src/outreach/mail/Mailer.ts"
import type { DkimSettings } from "../../../src/outreach/mail/MailConfig.ts"
import { addressOf, listUnsubscribeHeaders, type OutgoingMessage } from "../../../src/outreach/mail/Message.ts"
import { longestTurn } from "../../support/EventLoop.ts"
import { loopbackDns } from "../../support/LoopbackDns.ts"
import { parseMail, smtpServer, type SmtpServerScript } from "../../support/SmtpServer.ts"

const settings: MailSettings = { from: "Acme News <news@acme.test>", ratePerSecond: 0, dkim: Option.none() }

const message: OutgoingMessage = {
  to: "Ada Lovelace <ada@example.com>",
  replyTo: "replies@acme.test",
  subject: "Spring offers — 20% off",
  html: "<h1>Hello Ada</h1><p>Read <a href=\"https://acme.test/offers?id=1\">our offers</a> today.</p>" +
    "<img src=\"https://acme.test/pixel.gif\" alt=\"\">",
  headers: listUnsubscribeHeaders("https://mail.acme.test/api/v0/t/u/token123")
}

/** The raw line of a header as it was sent. */
const headerLine = (mail: ParsedMail, key: string) => mail.headerLines.find((line) => line.key === key)?.line ?? ""

/** The mailer of `layer`, alive for the enclosing scope. */
const built = <E>(layer: Layer.Layer<Mailer, E>) => Effect.map(Layer.build(layer), (context) => Context.get(context, Mailer))

/** Runs `use` with an SMTP mailer against a loopback SMTP server following `script`. */
const withSmtp = <A, E>(
  script: SmtpServerScript,
  use: (
    mailer: Mailer["Service"],
    server: Effect.Success<ReturnType<typeof smtpServer>>
  ) => Effect.Effect<A, E>,
  overrides: Partial<MailSettings> = {}
) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* smtpServer(script)
    const mailer = yield* built(Mailer.smtp({ ...settings, ...overrides, url: Redacted.make(server.url), poolSize: 2 })
    )
    return yield* use(mailer, server)
  }))

describe("the SMTP mailer against a real SMTP server", () => {
  it.effect("delivers both parts, the headers and a unique Message-ID", () =>
    withSmtp({}, (mailer, server) =>
      Effect.gen(function*() {
        const outcome = yield* mailer.send(message)
        expect(outcome._tag).toBe("Accepted")
        if (outcome._tag !== "Accepted") return
        expect(outcome.response).toMatch(/^250/)
        expect(outcome.messageId).toMatch(/^<[0-9a-f-]{36}@acme\.test>$/)
        const [received] = yield* server.received
        expect(received).toMatchObject({ from: "news@acme.test", to: ["ada@example.com"] })
        const mail = yield* parseMail(received)
        expect(mail.messageId).toBe(outcome.messageId)
        expect(mail.subject).toBe("Spring offers — 20% off")
        expect(mail.from?.value).toEqual([{ name: "Acme News", address: "news@acme.test" }])
        expect(mail.to).toMatchObject({ value: [{ name: "Ada Lovelace", address: "ada@example.com" }] })
        expect(mail.replyTo?.value).toEqual([{ name: "", address: "replies@acme.test" }])
        expect(headerLine(mail, "list-unsubscribe")).toBe("List-Unsubscribe: <https://mail.acme.test/api/v0/t/u/token123>")
        expect(headerLine(mail, "list-unsubscribe-post")).toBe("List-Unsubscribe-Post: List-Unsubscribe=One-Click")
        expect(mail.html).toContain("<a href=\"https://acme.test/offers?id=1\">our offers</a>")
        expect(mail.text).toContain("HELLO ADA")
        expect(mail.text).toContain("our offers [https://acme.test/offers?id=1]")
        expect(mail.text).not.toContain("pixel.gif")
        const second = yield* mailer.send(message)
        expect(second.messageId).not.toBe(outcome.messageId)
      })))

  it.effect("a 4xx reply is a temporary failure with the server's text", () =>
    withSmtp({ onRecipient: () => ({ code: 451, message: "Greylisted, try again later" }) }, (mailer, server) =>
      Effect.gen(function*() {
        const outcome = yield* mailer.send(message)
        expect(outcome).toMatchObject({ _tag: "TemporaryFailure", code: 451 })
        expect(outcome._tag === "TemporaryFailure" && outcome.response).toContain("Greylisted, try again later")
        expect(yield* server.received).toHaveLength(0)
      })))

  it.effect("a 5xx refusal of the recipient is a permanent failure and a hard bounce", () =>
    withSmtp({ onRecipient: () => ({ code: 550, message: "5.1.1 No such user here" }) }, (mailer) =>
      Effect.gen(function*() {
        const outcome = yield* mailer.send(message)
        expect(outcome).toMatchObject({ _tag: "PermanentFailure", code: 550, hardBounce: true })
        expect(outcome._tag === "PermanentFailure" && outcome.response).toContain("No such user here")
      })))

  it.effect("a 5xx refusal of the content is permanent but not a bounce of the address", () =>
    withSmtp({ onData: () => ({ code: 554, message: "5.7.1 Message rejected as spam" }) }, (mailer, server) =>
      Effect.gen(function*() {
        const outcome = yield* mailer.send(message)
        expect(outcome).toMatchObject({ _tag: "PermanentFailure", code: 554, hardBounce: false })
        expect(outcome._tag === "PermanentFailure" && outcome.response).toContain("Message rejected as spam")
        expect(yield* server.received).toHaveLength(0)
      })))

  it.effect("4xx then accepted: the retry of the same message gets through", () =>
    withSmtp(
      { onRecipient: (_, attempt) => (attempt === 1 ? { code: 421, message: "Too busy" } : undefined) },
      (mailer, server) =>
        Effect.gen(function*() {
          expect((yield* mailer.send(message))._tag).toBe("TemporaryFailure")
          expect((yield* mailer.send(message))._tag).toBe("Accepted")
          expect(server.attemptsFor("ada@example.com")).toBe(2)
          expect(yield* server.received).toHaveLength(1)
        })
    ))

  it.effect("many messages at once share the pool; each arrives once with its own Message-ID", () =>
    withSmtp({}, (mailer, server) =>
      Effect.gen(function*() {
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, i) => ({ ...message, to: `user${i}@example.com` })),
          (each) => mailer.send(each),
          { concurrency: "unbounded" }
        )
        expect(outcomes.every((outcome) => outcome._tag === "Accepted")).toBe(true)
        const received = yield* server.received
        expect(received.map((mail) => mail.to[0]).sort()).toEqual(
          Array.from({ length: 40 }, (_, i) => `user${i}@example.com`).sort()
        )
        const ids = yield* Effect.forEach(received, (mail) => Effect.map(parseMail(mail), (parsed) => parsed.messageId))
        expect(new Set(ids).size).toBe(40)
      })))

  it.effect("signs with DKIM when configured", () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
    const dkim = Option.some({
      domain: "acme.test",
      selector: "mail2026",
      privateKey: Redacted.make(privateKey)
    })
    return withSmtp({}, (mailer, server) =>
      Effect.gen(function*() {
        expect((yield* mailer.send(message))._tag).toBe("Accepted")
        const mail = yield* parseMail((yield* server.received)[0])
        const signature = headerLine(mail, "dkim-signature")
        expect(signature).toMatch(/d=acme\.test/)
        expect(signature).toMatch(/s=mail2026/)
        // A 2048-bit RSA signature is 344 base64 characters (folded over several lines).
        expect(signature.replace(/\s+/g, "")).toMatch(/;b=[A-Za-z0-9+/]{342}={0,2}$/)
      }), { dkim })
  })

  it.effect("an unreachable server is a temporary failure without a reply code", () =>
    Effect.scoped(Effect.gen(function*() {
      const closedPort = yield* Effect.scoped(Effect.map(smtpServer(), (server) => server.url))
      const mailer = yield* built(Mailer.smtp({ ...settings, url: Redacted.make(closedPort), poolSize: 1 })
      )
      expect(yield* mailer.send(message)).toMatchObject({ _tag: "TemporaryFailure", code: null })
    })))
})

describe("the outbox mailer", () => {
  it.effect("writes each message as a real .eml file", () =>
    Effect.scoped(Effect.gen(function*() {
      const folder = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "outbox-"))),
        (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
      )
      const outbox = join(folder, "outbox")
      const mailer = yield* built(Mailer.outbox(outbox, settings))
      expect(mailer.backend).toBe("outbox")
      const first = yield* mailer.send(message)
      const second = yield* mailer.send({ ...message, to: "grace@example.com", text: "Plain words." })
      expect(first).toMatchObject({ _tag: "Accepted", response: expect.stringContaining(outbox) })
      const files = readdirSync(outbox).sort()
      expect(files).toHaveLength(2)
      expect(files.every((file) => file.endsWith(".eml"))).toBe(true)
      const parsed = yield* Effect.forEach(files, (file) => Effect.promise(() => simpleParser(readFileSync(join(outbox, file)))))
      const byId = new Map(parsed.map((mail) => [mail.messageId, mail]))
      const mail = byId.get(first.messageId)!
      expect(mail.subject).toBe(message.subject)
      expect(mail.html).toContain("our offers")
      expect(mail.text).toContain("our offers [https://acme.test/offers?id=1]")
      expect(headerLine(mail, "list-unsubscribe-post")).toBe("List-Unsubscribe-Post: List-Unsubscribe=One-Click")
      expect(byId.get(second.messageId)!.text).toBe("Plain words.")
      expect(readFileSync(join(outbox, files[0])).toString()).toContain("\r\n")
    })))
})

/** A fresh 2048-bit key for `domain`, its public half published in `dns` as a DNS provider would (in 255-octet strings). */
const signingKey = (dns: Effect.Success<typeof loopbackDns>, domain: string, selector: string): DkimSettings => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const record = `v=DKIM1; k=rsa; p=${publicKey.export({ type: "spki", format: "der" }).toString("base64")}`
  dns.publish(`${selector}._domainkey.${domain}`, record.match(/.{1,255}/g)!)
  return { domain, selector, privateKey: Redacted.make<KeyObject>(privateKey) }
}

/** mailauth's verdict on each DKIM signature of a message, its keys looked up in `dns`. */
const verdicts = (raw: Buffer, dns: Effect.Success<typeof loopbackDns>) =>
  Effect.map(Effect.promise(() => dkimVerify(raw, { resolver: dns.resolve })), (verdict) =>
    verdict.results.map((result) => ({ domain: result.signingDomain, selector: result.selector, result: result.status.result })))

// Live clock: the signing threads' time limits run on real time.
describe("DKIM signing on signing threads", () => {
  it.live("concurrent messages from three domains, each with its own key or the configured one, all verify with mailauth against DNS; no turn of the event loop over 50 ms", () =>
    Effect.scoped(Effect.gen(function*() {
      const dns = yield* loopbackDns
      const keys = [signingKey(dns, "one.test", "s1"), signingKey(dns, "two.test", "s2")]
      const configured = signingKey(dns, "acme.test", "mail2026")
      const server = yield* smtpServer()
      const mailer = yield* built(Mailer.smtp({ ...settings, dkim: Option.some(configured), url: Redacted.make(server.url), poolSize: 3 }))
      // Every third message from MAIL_FROM (the configured key), the others from a domain with its own key.
      const sent = Array.from({ length: 30 }, (_, i): OutgoingMessage => {
        const key = i % 3 === 2 ? undefined : keys[i % 3]
        return { ...message, to: `reader${i}@example.com`, subject: `Offer ${i}`, ...(key ? { from: `news@${key.domain}`, dkim: key } : {}) }
      })
      // One of them large (1 MB of HTML, its text given): signing it holds the event loop no longer than the others.
      sent[0] = { ...sent[0]!, html: `<p>${"Our autumn sale starts today. ".repeat(35_000)}</p>`, text: "Our autumn sale starts today." }
      const { result: outcomes, longestMs } = yield* longestTurn(Effect.forEach(sent, (outgoing) => mailer.send(outgoing), { concurrency: "unbounded" }))
      expect(outcomes.every((outcome) => outcome._tag === "Accepted")).toBe(true)
      expect(longestMs).toBeLessThan(50)
      const received = yield* server.received
      expect(received).toHaveLength(30)
      for (const mail of received) {
        const outgoing = sent.find((candidate) => candidate.to === mail.to[0])!
        // Sent as the built message with its own envelope: the sender's and the recipient's addresses.
        expect(mail.from).toBe(addressOf(outgoing.from ?? settings.from))
        const key = outgoing.dkim ?? configured
        // The signed message as built, nothing added in front of its signature.
        expect(mail.raw.subarray(0, 15).toString()).toBe("DKIM-Signature:")
        expect(yield* verdicts(mail.raw, dns)).toEqual([{ domain: key.domain, selector: key.selector, result: "pass" }])
        expect((yield* parseMail(mail)).subject).toBe(outgoing.subject)
      }
    })))

  it.live("the outbox's .eml files are signed the same way", () =>
    Effect.scoped(Effect.gen(function*() {
      const dns = yield* loopbackDns
      const folder = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "outbox-"))),
        (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
      )
      const mailer = yield* built(Mailer.outbox(folder, settings))
      const key = signingKey(dns, "one.test", "s1")
      const outcome = yield* mailer.send({ ...message, from: "news@one.test", dkim: key })
      expect(outcome._tag).toBe("Accepted")
      const [file] = readdirSync(folder)
      expect(yield* verdicts(readFileSync(join(folder, file!)), dns)).toEqual([{ domain: "one.test", selector: "s1", result: "pass" }])
    })))

  it.live("a key that cannot sign RSA-SHA256: a temporary failure, and nothing goes out unsigned", () =>
    withSmtp({}, (mailer, server) =>
      Effect.gen(function*() {
        const { privateKey } = generateKeyPairSync("ed25519")
        const outcome = yield* mailer.send({ ...message, dkim: { domain: "acme.test", selector: "s1", privateKey: Redacted.make(privateKey) } })
        expect(outcome).toMatchObject({ _tag: "TemporaryFailure", code: null, response: expect.stringContaining("DKIM signing failed") })
        expect(yield* server.received).toHaveLength(0)
        // The next message, with a good key, goes out.
        expect((yield* mailer.send(message))._tag).toBe("Accepted")
      })))
})

describe("the send rate", () => {
  it.effect("MAIL_RATE_PER_SECOND spaces concurrent sends evenly", () =>
    Effect.gen(function*() {
      const pace = yield* pacer(10)
      const fiber = yield* Effect.forkChild(
        Effect.all(Array.from({ length: 4 }, () => Effect.andThen(pace, Clock.currentTimeMillis)), { concurrency: 4 })
      )
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(fiber)).toSorted((a, b) => a - b)).toEqual([0, 100, 200, 300])
    }))
})
