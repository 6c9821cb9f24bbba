import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { dkimVerify } from "mailauth"
import { CampaignWorker } from "../../../src/outreach/campaigns/CampaignWorker.ts"
import type { Domain } from "../../../src/outreach/domains/Api.ts"
import { drainSender, testCampaignSettings, testDelivery, testMailFrom } from "../../support/CampaignWorkerTest.ts"
import { expectErrorResponse, send } from "../../support/Http.ts"
import { loopbackDns } from "../../support/LoopbackDns.ts"
import { onLiveClock } from "../../support/SchedulerTest.ts"
import { smtpServer } from "../../support/SmtpServer.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

class Dns extends Context.Service<Dns, Effect.Success<typeof loopbackDns>>()("test/Dns") {}
class Sink extends Context.Service<Sink, Effect.Success<ReturnType<typeof smtpServer>>>()("test/Sink") {}

/** The service (domains verified against the loopback DNS server) and a campaign worker mailing the loopback SMTP sink. */
const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.gen(function*() {
    const dns = yield* loopbackDns
    const sink = yield* smtpServer()
    return CampaignWorker.layer.pipe(
      Layer.provideMerge(testDelivery(sink.url)),
      Layer.provideMerge(testCampaignSettings()),
      Layer.provideMerge(testServer(onLiveClock(storage), {
        publicBaseUrl: "https://mail.example.test",
        mail: { from: testMailFrom },
        outbound: { dnsServers: [dns.address] }
      })),
      Layer.provideMerge(Layer.succeed(Sink, sink)),
      Layer.provideMerge(Layer.succeed(Dns, dns))
    )
  }))

let domainCounter = 0
/** A domain name no other test of the run uses. */
const freshDomain = () => `d${process.pid}x${Date.now()}x${domainCounter++}.example`

/** Publishes the domain's records as given (a DKIM key longer than 255 octets as several character-strings, as DNS providers do). */
const publishAll = (domain: typeof Domain.Type) =>
  Dns.useSync((dns) => {
    for (const record of domain.records) {
      const chunks = record.value.match(/.{1,255}/g)!
      dns.publish(record.name, chunks)
    }
  })

const html = "<p>Hello {{firstName | there}}</p>"

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 60_000 })(`sending domains on ${backend.name}`, (it) => {
    it.effect("create answers 201 with a fresh DKIM key's records to publish, all pending; the private key never leaves, and is sealed at rest", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const name = freshDomain()
        const created = yield* api.domains.create({ payload: { domain: ` ${name.toUpperCase()}. ` } })
        expect(created).toMatchObject({ domain: name, status: "pending", companyId: tenant.companyId, checkedAt: null, verifiedAt: null })
        expect(created.dkimSelector).toMatch(/^pa[0-9a-f]{8}$/)
        expect(created.records.map(({ type, name, purpose, status, found }) => ({ type, name, purpose, status, found }))).toEqual([
          { type: "TXT", name, purpose: "spf", status: "pending", found: [] },
          { type: "TXT", name: `${created.dkimSelector}._domainkey.${name}`, purpose: "dkim", status: "pending", found: [] },
          { type: "TXT", name: `_dmarc.${name}`, purpose: "dmarc", status: "pending", found: [] }
        ])
        expect(created.records[0]!.value).toBe("v=spf1 mx ~all")
        const dkim = created.records[1]!.value
        expect(dkim).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/)
        // A 2048-bit RSA SubjectPublicKeyInfo is 294 octets: 392 characters of base64.
        expect(dkim.split("p=")[1]).toHaveLength(392)
        expect(created.records[2]!.value).toMatch(/^v=DMARC1; p=none/)

        const responses = [
          yield* send(HttpClientRequest.get(`/api/v0/domains/${created.id}`).pipe(HttpClientRequest.setHeader("x-api-key", tenant.apiKey))),
          yield* send(HttpClientRequest.get("/api/v0/domains").pipe(HttpClientRequest.setHeader("x-api-key", tenant.apiKey)))
        ]
        for (const response of responses) {
          expect(response.status).toBe(200)
          expect(response.text).not.toMatch(/PRIVATE|dkimPrivateKey/)
        }
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ readonly dkim_private_key: string }>`SELECT dkim_private_key FROM sending_domains WHERE id = ${created.id}`
        expect(stored!.dkim_private_key).toMatch(/^v1\./)
        expect(stored!.dkim_private_key).not.toContain("PRIVATE KEY")

        const listed = yield* api.domains.list({ query: {} })
        expect(listed).toMatchObject({ total: 1, pages: 1, hasNext: false })
        expect(listed.items[0]).toEqual(created)
        const duplicate = yield* Effect.flip(api.domains.create({ payload: { domain: name } }))
        expect(duplicate).toMatchObject({ _tag: "BadRequest", error: `Domain ${name} has been added already` })
      }))

    it.effect("an invalid domain name answers 400 naming it; an internationalised one is stored in its xn-- form", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const invalid = [
          "exa mple.com", "-bad.example", "bad-.example", "a..example", "example", "192.168.1.1", "under_score.example",
          `${"a".repeat(64)}.example`, `${"abcdefghi.".repeat(26)}example`, "https://example.com", "ops@example.com", "",
          "xn--zz.example", "ab--c.example", "*.example.com"
        ]
        for (const domain of invalid) {
          const refused = yield* Effect.flip(api.domains.create({ payload: { domain } }))
          expect(refused).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining(`Invalid domain name "${domain}"`) })
        }
        const unicode = yield* api.domains.create({ payload: { domain: `bücher-${Date.now()}.example` } })
        expect(unicode.domain).toMatch(/^xn--bcher-.+-[a-z0-9]+\.example$/)
        expect((yield* api.domains.list({ query: {} })).total).toBe(1)
      }))

    it.effect("verify reads each record from DNS: missing, mismatch, then verified once all three are right", () =>
      Effect.gen(function*() {
        const dns = yield* Dns
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const created = yield* api.domains.create({ payload: { domain: freshDomain() } })
        const params = { domainId: created.id }
        const [spf, dkim, dmarc] = created.records

        const nothing = yield* api.domains.verify({ params, payload: null })
        expect(nothing.status).toBe("failed")
        expect(nothing.records.map((r) => [r.purpose, r.status, r.found])).toEqual([
          ["spf", "missing", []], ["dkim", "missing", []], ["dmarc", "missing", []]
        ])
        expect(nothing.checkedAt).toBeInstanceOf(Date)

        const otherKey = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrongkey"
        dns.publish(spf!.name, "google-site-verification=abc", "v=spf1 include:_spf.google.com ~all")
        dns.publish(dkim!.name, `v=DKIM1; k=rsa; p=${otherKey}`)
        dns.publish(dmarc!.name, "v=DMARC1; p=bogus")
        const wrong = yield* api.domains.verify({ params, payload: null })
        expect(wrong.status).toBe("failed")
        expect(wrong.records.map((r) => [r.purpose, r.status, r.found])).toEqual([
          ["spf", "mismatch", ["v=spf1 include:_spf.google.com ~all"]],
          ["dkim", "mismatch", [`v=DKIM1; k=rsa; p=${otherKey}`]],
          ["dmarc", "mismatch", ["v=DMARC1; p=bogus"]]
        ])

        // Two SPF records are a permanent error for receivers (RFC 7208 §4.5), even when one is right.
        dns.publish(spf!.name, "v=spf1 mx ~all", "v=spf1 include:_spf.google.com ~all")
        yield* publishAll({ ...created, records: [dkim!, dmarc!] })
        const twoSpf = yield* api.domains.verify({ params, payload: null })
        expect(twoSpf.records.map((r) => r.status)).toEqual(["mismatch", "verified", "verified"])
        expect(twoSpf.status).toBe("failed")

        dns.publish(spf!.name, "v=spf1 mx include:_spf.google.com ~all")
        const verified = yield* api.domains.verify({ params, payload: {} })
        expect(verified.status).toBe("verified")
        expect(verified.records.map((r) => r.status)).toEqual(["verified", "verified", "verified"])
        expect(verified.records[1]!.found).toEqual([dkim!.value])
        expect(verified.verifiedAt).toBeInstanceOf(Date)
        expect(yield* api.domains.get({ params })).toEqual(verified)

        dns.unpublish(dkim!.name)
        const lost = yield* api.domains.verify({ params, payload: null })
        expect(lost).toMatchObject({ status: "failed", verifiedAt: null })
      }))

    it.effect("another company's domain is 404 on get, verify and delete; its name is free for each company", () =>
      Effect.gen(function*() {
        const owner = yield* seedTenant()
        const other = yield* seedTenant("other")
        const name = freshDomain()
        const theirs = yield* (yield* client({ apiKey: owner.apiKey })).domains.create({ payload: { domain: name } })
        const api = yield* client({ apiKey: other.apiKey })
        const params = { domainId: theirs.id }
        for (const attempt of [api.domains.get({ params }), api.domains.verify({ params, payload: null }), api.domains.delete({ params })]) {
          expect(yield* Effect.flip(attempt)).toMatchObject({ _tag: "NotFound", error: `Domain ${theirs.id} not found` })
        }
        expect((yield* api.domains.list({ query: {} })).total).toBe(0)
        const ours = yield* api.domains.create({ payload: { domain: name } })
        expect(ours.dkimSelector).not.toBe(theirs.dkimSelector)
        const response = yield* send(
          HttpClientRequest.post("/api/v0/domains").pipe(
            HttpClientRequest.setHeader("x-api-key", other.apiKey),
            HttpClientRequest.bodyJsonUnsafe({ domain: "x.example", companyId: owner.companyId })
          )
        )
        expectErrorResponse(response, 404)
      }))

    it.effect("a sequence's sender follows the same rule on create and update; null goes back to MAIL_FROM", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const name = freshDomain()
        const steps = [{ type: "email" as const, subject: "Hi {{firstName}}", body: "Say hello.", delayDays: 0 }]
        const refused = yield* Effect.flip(api.sequences.create({ payload: { name: "Intro", steps, fromEmail: `ada@${name}` } }))
        expect(refused).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining(`fromEmail ada@${name} is neither`) })
        const sequence = yield* api.sequences.create({ payload: { name: "Intro", steps, fromName: "Shop", fromEmail: "news@shop.example" } })
        expect(sequence).toMatchObject({ fromName: "Shop", fromEmail: "news@shop.example" })
        const params = { sequenceId: sequence.id }
        expect(yield* Effect.flip(api.sequences.update({ params, payload: { fromEmail: `ada@${name}` } })))
          .toMatchObject({ _tag: "BadRequest" })
        const domain = yield* api.domains.create({ payload: { domain: name } })
        yield* publishAll(domain)
        yield* api.domains.verify({ params: { domainId: domain.id }, payload: null })
        expect(yield* api.sequences.update({ params, payload: { fromEmail: `ada@${name}` } }))
          .toMatchObject({ fromName: "Shop", fromEmail: `ada@${name}` })
        expect(yield* api.sequences.update({ params, payload: { fromName: null, fromEmail: null } }))
          .toMatchObject({ fromName: null, fromEmail: null })
      }))

    it.effect("fromEmail must be on a verified domain or MAIL_FROM; mail from a verified domain is DKIM-signed (mailauth: pass); a domain deleted meanwhile fails the send", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-06-01T08:00:00Z"))
        const dns = yield* Dns
        const sink = yield* Sink
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const name = freshDomain()
        const list = yield* api.lists.create({ payload: { name: "Customers", rows: [{ email: "ada@example.com", firstName: "Ada" }] } })
        const campaign = (fromEmail?: string) =>
          api.campaigns.create({ payload: { name: "Launch", subject: "Hi {{firstName}}", bodyDocument: { html }, listId: list.id, ...(fromEmail ? { fromEmail } : {}) } })

        const refused = yield* Effect.flip(campaign(`news@${name}`))
        expect(refused).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining(`fromEmail news@${name} is neither on a verified sending domain`) })
        const domain = yield* api.domains.create({ payload: { domain: name } })
        expect(yield* Effect.flip(campaign(`news@${name}`))).toMatchObject({ _tag: "BadRequest" })
        const draft = yield* campaign()
        expect(yield* Effect.flip(api.campaigns.update({ params: { campaignId: draft.id }, payload: { fromEmail: `news@${name}` } })))
          .toMatchObject({ _tag: "BadRequest", error: expect.stringContaining("verified sending domain") })

        yield* publishAll(domain)
        expect((yield* api.domains.verify({ params: { domainId: domain.id }, payload: null })).status).toBe("verified")
        // The address's case does not matter.
        const signed = yield* campaign(`News@${name.toUpperCase()}`)
        const before = (yield* sink.received).length
        yield* api.campaigns.send({ params: { campaignId: signed.id }, payload: null })
        const worker = yield* CampaignWorker
        expect(yield* drainSender(worker)).toBe(1)
        const [mail] = (yield* sink.received).slice(before)
        const verdict = yield* Effect.promise(() => dkimVerify(mail!.raw, { resolver: dns.resolve }))
        expect(verdict.results).toHaveLength(1)
        expect(verdict.results[0]).toMatchObject({
          signingDomain: name,
          selector: domain.dkimSelector,
          status: { result: "pass", aligned: name }
        })

        // Mail from MAIL_FROM needs no domain and carries no domain's signature.
        const plain = yield* campaign()
        yield* api.campaigns.send({ params: { campaignId: plain.id }, payload: null })
        expect(yield* drainSender(worker)).toBe(1)
        const [unsigned] = (yield* sink.received).slice(before + 1)
        expect(unsigned!.raw.toString()).not.toMatch(/^DKIM-Signature:/im)

        // Started while the domain was verified; the domain is deleted before the message goes.
        const late = yield* campaign(`news@${name}`)
        yield* api.campaigns.send({ params: { campaignId: late.id }, payload: null })
        yield* api.domains.delete({ params: { domainId: domain.id } })
        expect(yield* drainSender(worker)).toBe(1)
        const recipients = yield* api.campaigns.listRecipients({ params: { campaignId: late.id }, query: {} })
        expect(recipients.items[0]).toMatchObject({ status: "failed", errorMessage: expect.stringContaining(`fromEmail news@${name} is neither on a verified sending domain`) })
        expect((yield* sink.received).length).toBe(before + 2)
        expect(yield* Effect.flip(api.domains.get({ params: { domainId: domain.id } }))).toMatchObject({ _tag: "NotFound" })
      }))
  })
}
