import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { deliver, Inbound, inboundTestServer, processAccepted, rawMail, sentCampaign, sharedAddress } from "../../support/InboxTest.ts"
import { backends } from "../../support/TestServer.ts"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"
import nodemailer from "nodemailer"
import { readFileSync } from "node:fs"

/** A delivery status notification of `test/fixtures/dsn/` for `recipient`'s message `messageId`. */
const dsn = (name: string, recipient: string, messageId: string) =>
  Buffer.from(readFileSync(new URL(`../../fixtures/dsn/${name}`, import.meta.url), "utf8")
    .replaceAll("<RECIPIENT>", recipient).replaceAll("<ORIGINAL_MESSAGE_ID>", messageId))

/** `email`'s reply saying `text` to the campaign message they got. */
const replyOf = (messageIds: ReadonlyMap<string, string>, email: string, text: string) =>
  rawMail({ from: email, to: sharedAddress, subject: "Re: Quick question", text, inReplyTo: messageIds.get(email)! })

const start = Date.parse("2026-06-01T08:00:00Z")

for (const backend of backends) {
  it.layer(inboundTestServer(backend.storage), { timeout: 60_000 })(`inbound mail on ${backend.name}`, (it) => {
    it.effect("a reply to a campaign message joins a thread linked to its recipient, is classified, and counts as replied", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, campaign, messageIds } = yield* sentCampaign(["ada@example.com", "bob@example.com"])
        const answered = messageIds.get("ada@example.com")!
        const raw = rawMail({
          from: "Ada <ada@example.com>",
          to: sharedAddress,
          subject: "Re: Quick question",
          text: "Sounds interesting, let's talk next week.\n\n> Would you like a demo?",
          inReplyTo: answered
        })
        const accepted = yield* deliver(sharedAddress, raw)
        expect(accepted).toMatchObject({ accepted: true })
        // The same message again (a retried delivery) is kept once.
        expect(yield* deliver(sharedAddress, raw)).toMatchObject({ accepted: true })

        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.total).toBe(1)
        const recipients = yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })
        const ada = recipients.items.find((item) => item.email === "ada@example.com")!
        expect(threads.items[0]).toMatchObject({
          contactEmail: "ada@example.com",
          subject: "Re: Quick question",
          status: "open",
          unread: true,
          classification: "interested",
          campaignId: campaign.id,
          campaignRecipientId: ada.id,
          messageCount: 1
        })
        const thread = yield* api.inbox.getThread({ params: { threadId: threads.items[0].id }, query: {} })
        expect(thread.messages).toHaveLength(1)
        expect(thread.messages[0]).toMatchObject({ direction: "inbound", from: "ada@example.com", to: [sharedAddress], classification: "interested" })
        expect(thread.messages[0].text).toContain("let's talk")
        expect(recipients.metrics).toMatchObject({ sent: 2, replied: 1, replyRate: 0.5 })
        // The lead follows: replied, then interested as classified, both on its timeline; the thread names it.
        const lead = (yield* api.leads.list({ query: { search: "ada@example.com" } })).items[0]!
        expect(lead.status).toBe("interested")
        expect(thread.leadId).toBe(lead.id)
        const timeline = yield* api.leads.activities({ params: { leadId: lead.id }, query: {} })
        expect(timeline.items.map((activity) => activity.type)).toEqual(expect.arrayContaining(["replied", "status_changed"]))
        expect(ada.repliedDate).toBe(new Date(start).toISOString())
        // One webhook event for the one stored message, written with it.
        const events = yield* SqlClient.SqlClient.use((sql) =>
          sql<{ readonly payload: Record<string, unknown> }>`SELECT payload FROM event_outbox
            WHERE company_id = ${campaign.companyId} AND type = 'inbox.reply_received'`)
        expect(events.map((event) => event.payload)).toEqual([expect.objectContaining({
          threadId: thread.id,
          messageId: thread.messages[0].id,
          from: "ada@example.com",
          classification: "interested",
          campaignId: campaign.id
        })])

        const filtered = yield* api.inbox.listThreads({ query: { classification: "not_interested" } })
        expect(filtered.total).toBe(0)
        const read = yield* api.inbox.updateThread({ params: { threadId: thread.id }, payload: { read: true, status: "archived" } })
        expect(read).toMatchObject({ unread: false, status: "archived" })
        expect((yield* api.inbox.listThreads({ query: { unread: "true" } })).total).toBe(0)
      }))

    it.effect("a reply classified by the offline model's rules costs no credits: no usage event, nothing charged", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, tenant, messageIds } = yield* sentCampaign(["joy@example.com"])
        const before = Option.getOrThrow(yield* settledOrganization(tenant.organizationId)).creditUsage
        expect(yield* deliver(sharedAddress, replyOf(messageIds, "joy@example.com", "No thanks, not interested."))).toMatchObject({ accepted: true })
        expect((yield* api.inbox.listThreads({ query: {} })).items.map((thread) => thread.classification)).toEqual(["not_interested"])
        expect((yield* usageHistory(tenant.organizationId, { featureKey: "campaigns" })).events).toEqual([])
        expect(Option.getOrThrow(yield* settledOrganization(tenant.organizationId)).creditUsage).toBe(before)
      }))

    it.effect("replies arriving together are stored together, each once with its effects once, even when delivered twice at once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const emails = ["kai@example.com", "lea@example.com", "max@example.com", "nia@example.com", "oto@example.com"]
        const { api, campaign, tenant, messageIds } = yield* sentCampaign(emails)
        const replies = emails.map((email) => replyOf(messageIds, email, "Sounds interesting, tell me more."))
        // The first reply three times (a sender retrying while its first attempt is still being stored).
        const outcomes = yield* Effect.all([...replies, replies[0]!, replies[0]!].map((raw) => deliver(sharedAddress, raw)), { concurrency: "unbounded" })
        expect(outcomes.every((outcome) => outcome.accepted)).toBe(true)
        const threads = yield* api.inbox.listThreads({ query: { pageSize: 50 } })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.messageCount, thread.classification]).sort()).toEqual(
          emails.map((email) => [email, 1, "interested"])
        )
        expect(threads.items.every((thread) => thread.leadId !== null)).toBe(true)
        const recipients = yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })
        expect(recipients.metrics).toMatchObject({ sent: 5, replied: 5 })
        const kai = (yield* api.leads.list({ query: { search: "kai@example.com" } })).items[0]!
        const timeline = yield* api.leads.activities({ params: { leadId: kai.id }, query: {} })
        expect(timeline.items.filter((activity) => activity.type === "replied")).toHaveLength(1)
        const events = yield* SqlClient.SqlClient.use((sql) =>
          sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM event_outbox WHERE company_id = ${tenant.companyId} AND type = 'inbox.reply_received'`)
        expect(events[0]!.n).toBe(5)
      }))

    it.effect("a forged In-Reply-To naming another company's message joins nothing of theirs", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const victim = yield* sentCampaign(["carol@example.com"])
        const attacker = yield* sentCampaign(["dave@example.com"])
        const mailbox = yield* attacker.api.inbox.createMailbox({
          payload: {
            email: "sales@attacker.example",
            imap: { host: "imap.attacker.example", port: 993, secure: true, user: "sales", password: "secret-imap" },
            smtp: { host: "smtp.attacker.example", port: 465, secure: true, user: "sales", password: "secret-smtp" }
          }
        })
        const forged = rawMail({
          from: "carol@example.com",
          to: "sales@attacker.example",
          subject: "Re: Quick question",
          text: "Yes, I am interested.",
          inReplyTo: victim.messageIds.get("carol@example.com")!
        })
        expect(yield* deliver("sales@attacker.example", forged)).toMatchObject({ accepted: true })
        const theirs = yield* attacker.api.inbox.listThreads({ query: {} })
        expect(theirs.total).toBe(1)
        expect(theirs.items[0]).toMatchObject({ mailboxId: mailbox.id, campaignRecipientId: null, campaignId: null })
        expect((yield* victim.api.inbox.listThreads({ query: {} })).total).toBe(0)
        const metrics = (yield* victim.api.campaigns.listRecipients({ params: { campaignId: victim.campaign.id }, query: {} })).metrics
        expect(metrics.replied).toBe(0)
        // The victim cannot read the attacker's thread, nor the attacker the victim's ids.
        const other = yield* Effect.flip(victim.api.inbox.getThread({ params: { threadId: theirs.items[0].id }, query: {} }))
        expect(other._tag).toBe("NotFound")
      }))

    it.effect("messages sent over one SMTP connection each go to their own recipients only", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const first = yield* sentCampaign(["hal@example.com"])
        const second = yield* sentCampaign(["ivy@example.com"])
        const mailbox = (owner: typeof first, email: string) =>
          owner.api.inbox.createMailbox({
            payload: {
              email,
              imap: { host: "imap.one.example", port: 993, secure: true, user: "u", password: "secret-imap" },
              smtp: { host: "smtp.one.example", port: 465, secure: true, user: "u", password: "secret-smtp" }
            }
          })
        yield* mailbox(first, "sales@first.example")
        yield* mailbox(second, "sales@second.example")
        const { port } = yield* Inbound
        // One pooled connection: the second message is a second mail transaction of the same SMTP session.
        yield* Effect.promise(async () => {
          const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1 })
          try {
            for (const [to, subject] of [["sales@first.example", "For the first"], ["sales@second.example", "For the second"]] as const) {
              await transport.sendMail({ envelope: { from: "kim@example.net", to: [to] }, raw: rawMail({ from: "kim@example.net", to, subject, text: "Hello." }) })
            }
          } finally {
            transport.close()
          }
        })
        yield* processAccepted
        const subjects = (owner: typeof first) => Effect.map(owner.api.inbox.listThreads({ query: {} }), (page) => page.items.map((thread) => thread.subject))
        expect(yield* subjects(first)).toEqual(["For the first"])
        expect(yield* subjects(second)).toEqual(["For the second"])
      }))

    it.effect("mail to the shared address that answers none of our messages is accepted and dropped; unknown recipients 550", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api } = yield* sentCampaign(["erin@example.com"])
        const stray = rawMail({ from: "erin@example.com", to: sharedAddress, subject: "Hello", text: "Unrelated." })
        expect(yield* deliver(sharedAddress, stray)).toMatchObject({ accepted: true })
        expect((yield* api.inbox.listThreads({ query: {} })).total).toBe(0)
        const refused = yield* deliver("nobody@elsewhere.example", stray)
        expect(refused).toMatchObject({ accepted: false, code: 550 })
        expect(refused.response).toContain("no such recipient")
      }))

    it.effect("mail to any address of a verified sending domain starts a thread of the company that verified it; pending domains 550", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, tenant } = yield* sentCampaign(["gus@example.com"])
        const verified = yield* api.domains.create({ payload: { domain: "acme-verified.example" } })
        yield* api.domains.create({ payload: { domain: "acme-pending.example" } })
        // Verification against DNS has its own tests (test/outreach/domains/): here the record is marked verified.
        yield* SqlClient.SqlClient.use((sql) => sql`UPDATE sending_domains SET status = 'verified' WHERE id = ${verified.id}`)
        const hello = rawMail({ from: "gus@example.com", to: "hello@acme-verified.example", subject: "Pricing", text: "What does it cost?" })
        expect(yield* deliver("Hello@ACME-verified.example", hello)).toMatchObject({ accepted: true })
        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.subject, thread.mailboxId])).toEqual([
          ["gus@example.com", "Pricing", null]
        ])
        expect(tenant.companyId).toBe(threads.items[0]!.companyId)
        const refused = yield* deliver("hello@acme-pending.example", hello)
        expect(refused).toMatchObject({ accepted: false, code: 550 })
      }))

    it.effect("an unsubscribe request suppresses the contact", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, messageIds } = yield* sentCampaign(["fay@example.com"])
        expect(yield* deliver(sharedAddress, replyOf(messageIds, "fay@example.com", "Please remove me from your list."))).toMatchObject({ accepted: true })
        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items[0].classification).toBe("unsubscribe")
        const suppressions = yield* api.lists.listSuppressions({ query: {} })
        expect(suppressions.items.map((item) => [item.email, item.reason])).toEqual([["fay@example.com", "unsubscribed"]])
      }))

    it.effect("a bounce report marks the recipient bounced and a hard bounce suppresses; a delay report does neither", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, campaign, messageIds } = yield* sentCampaign(["gone@example.com", "slow@example.com"])
        const hard = dsn("postfix-user-unknown.eml", "gone@example.com", messageIds.get("gone@example.com")!)
        expect(yield* deliver(sharedAddress, hard, "")).toMatchObject({ accepted: true })
        const delayed = dsn("postfix-delayed.eml", "slow@example.com", messageIds.get("slow@example.com")!)
        expect(yield* deliver(sharedAddress, delayed, "")).toMatchObject({ accepted: true })

        const recipients = yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })
        expect(recipients.metrics).toMatchObject({ bounced: 1, replied: 0 })
        const gone = recipients.items.find((item) => item.email === "gone@example.com")!
        expect(gone.bouncedDate).toBe(new Date(start).toISOString())
        expect(recipients.items.find((item) => item.email === "slow@example.com")!.bouncedDate).toBeNull()
        const suppressions = yield* api.lists.listSuppressions({ query: {} })
        expect(suppressions.items.map((item) => [item.email, item.reason])).toEqual([["gone@example.com", "hard_bounce"]])
        const bounced = yield* api.inbox.listThreads({ query: { classification: "bounce" } })
        expect(bounced.items.map((thread) => [thread.contactEmail, thread.campaignRecipientId])).toEqual([["gone@example.com", gone.id]])
      }))
  })
}
