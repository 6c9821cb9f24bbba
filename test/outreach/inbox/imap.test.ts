import { expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { ImapPoller } from "../../../src/outreach/inbox/ImapPoller.ts"
import { InboundQueue } from "../../../src/outreach/inbox/InboundQueue.ts"
import { SecretBox } from "../../../src/platform/Secrets.ts"
import { type Dovecot, dovecot } from "../../support/Dovecot.ts"
import { inboxTestServer, processAccepted, rawMail, sentCampaign } from "../../support/InboxTest.ts"
import { smtpServer } from "../../support/SmtpServer.ts"
import { backends } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")
const users = [
  { user: "sales", password: "imap-pass-1" },
  { user: "support", password: "imap-pass-2" },
  { user: "idle", password: "imap-pass-3" },
  { user: "crash", password: "imap-pass-4" }
]

class Imap extends Context.Service<Imap, Dovecot>()("test/Imap") {}

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.gen(function*() {
    const sink = yield* smtpServer()
    const imap = yield* dovecot(users)
    return ImapPoller.layer.pipe(
      Layer.provideMerge(SecretBox.layer),
      Layer.provideMerge(inboxTestServer(storage, sink.url, { outbound: { allowedHosts: ["127.0.0.1"] } })),
      Layer.provideMerge(Layer.succeed(Imap, imap))
    )
  }))

const mailboxFor = (user: string, password: string, host = "127.0.0.1") =>
  Effect.gen(function*() {
    const { port } = yield* Imap
    return {
      email: `${user}@shop.example`,
      imap: { host, port, secure: false, user, password },
      smtp: { host, port: 2525, secure: false, user, password }
    }
  })

/** Stored in the inbound queue, not yet processed or quarantined. */
const queued = SqlClient.SqlClient.use((sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM inbound_queue WHERE quarantined_reason IS NULL`)
  .pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie)

/** Real time passes (the service runs on TestClock): for the IMAP server's IDLE notice to arrive. */
const waitFor = <A, E, R>(check: Effect.Effect<A, E, R>, done: (value: A) => boolean) =>
  Effect.gen(function*() {
    for (let tries = 0; tries < 100; tries++) {
      const value = yield* check
      if (done(value)) return value
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
    }
    return yield* check
  })

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 90_000 })(`IMAP poller against Dovecot on ${backend.name}`, (it) => {
    it.effect("hands each message to the inbound queue, taken in once across polls, restarts and a lost UID; the mailbox shows ok; replies link to the campaign", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const imap = yield* Imap
        const { api, campaign, messageIds } = yield* sentCampaign(["ada@example.com"])
        const mailbox = yield* api.inbox.createMailbox({ payload: yield* mailboxFor("sales", "imap-pass-1") })
        yield* imap.deliver("sales", rawMail({
          from: "ada@example.com",
          to: "sales@shop.example",
          subject: "Re: Quick question",
          text: "Tell me more, please.",
          inReplyTo: messageIds.get("ada@example.com")!
        }))
        yield* imap.deliver("sales", rawMail({ from: "zed@example.com", to: "sales@shop.example", subject: "Hello", text: "A new conversation." }))
        const poller = yield* ImapPoller
        expect(yield* poller.syncOnce).toBeGreaterThanOrEqual(1)
        // Fetched means stored raw in the queue; its worker threads and classifies.
        expect(yield* queued).toBe(2)
        expect((yield* api.inbox.listThreads({ query: { mailboxId: mailbox.id } })).total).toBe(0)
        yield* processAccepted
        const first = yield* api.inbox.listThreads({ query: { mailboxId: mailbox.id } })
        expect(first.total).toBe(2)
        const reply = first.items.find((thread) => thread.contactEmail === "ada@example.com")!
        expect(reply).toMatchObject({ campaignId: campaign.id, classification: "interested", mailboxId: mailbox.id })
        expect(yield* api.inbox.getMailbox({ params: { mailboxId: mailbox.id }, query: {} })).toMatchObject({ status: "ok", lastError: null })

        yield* imap.deliver("sales", rawMail({ from: "zed@example.com", to: "sales@shop.example", subject: "Re: Hello", text: "And more." }))
        yield* poller.syncOnce
        // Another process (a fresh poller over the same database) finds nothing new.
        yield* Effect.provide(ImapPoller.use((other) => other.syncOnce), ImapPoller.layer, { local: true })
        expect(yield* queued).toBe(1)
        // The recorded UID lost (as when the folder is rebuilt): every message fetched and queued again, kept once.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE mailboxes SET last_uid = 0 WHERE id = ${mailbox.id}`
        yield* poller.syncOnce
        expect(yield* queued).toBe(4)
        yield* processAccepted
        expect(yield* queued).toBe(0)
        const threads = yield* api.inbox.listThreads({ query: { mailboxId: mailbox.id } })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.messageCount]).toSorted()).toEqual([["ada@example.com", 1], ["zed@example.com", 2]])
        const metrics = (yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })).metrics
        expect(metrics.replied).toBe(1)
      }))

    it.effect("a wrong password or a host resolving inside the network shows as error with the reason, never the password", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api } = yield* sentCampaign(["bo@example.com"])
        const wrong = yield* api.inbox.createMailbox({ payload: yield* mailboxFor("support", "not-the-password") })
        const internal = yield* api.inbox.createMailbox({ payload: { ...yield* mailboxFor("support", "imap-pass-2", "localhost"), email: "other@shop.example" } })
        yield* (yield* ImapPoller).syncOnce
        const failed = yield* api.inbox.getMailbox({ params: { mailboxId: wrong.id }, query: {} })
        expect(failed).toMatchObject({ status: "error", lastError: expect.stringMatching(/Authentication failed/) })
        expect(failed.lastError).not.toContain("not-the-password")
        const refused = yield* api.inbox.getMailbox({ params: { mailboxId: internal.id }, query: {} })
        expect(refused).toMatchObject({ status: "error", lastError: expect.stringMatching(/localhost resolves to an internal address/) })
      }))

    it.effect("a session waits with IDLE and queues new mail as the server announces it; the queue's worker, woken by it, takes it in", () =>
      Effect.scoped(Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const imap = yield* Imap
        const { api } = yield* sentCampaign(["cy@example.com"])
        const mailbox = yield* api.inbox.createMailbox({ payload: yield* mailboxFor("idle", "imap-pass-3") })
        // The worker as a server runs it: on TestClock its INBOX_POLL_MS never passes, so only the poller's wake moves it.
        yield* Layer.build(InboundQueue.worker)
        yield* (yield* ImapPoller).claimSessions
        yield* waitFor(api.inbox.getMailbox({ params: { mailboxId: mailbox.id }, query: {} }), (box) => box.status === "ok")
        yield* imap.deliver("idle", rawMail({ from: "cy@example.com", to: "idle@shop.example", subject: "Ping", text: "Are you there?" }))
        const threads = yield* waitFor(api.inbox.listThreads({ query: { mailboxId: mailbox.id } }), (page) => page.total === 1)
        expect(threads.items.map((thread) => thread.contactEmail)).toEqual(["cy@example.com"])
      })))

    it.effect("a poller that dies after storing a message in the queue and before recording its UID: the worker takes it in exactly once, in the mailbox's company only", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const imap = yield* Imap
        const other = yield* sentCampaign(["dee@example.com"])
        const { api, campaign, tenant, messageIds } = yield* sentCampaign(["dee@example.com"])
        const mailbox = yield* api.inbox.createMailbox({ payload: yield* mailboxFor("crash", "imap-pass-4") })
        // It answers this company's message, and names the other company's too.
        yield* imap.deliver("crash", rawMail({
          from: "dee@example.com",
          to: "crash@shop.example",
          subject: "Re: Quick question",
          text: "Tell me more, please.",
          headers: {
            "In-Reply-To": messageIds.get("dee@example.com")!,
            References: `${other.messageIds.get("dee@example.com")!} ${messageIds.get("dee@example.com")!}`
          }
        }))
        const sql = yield* SqlClient.SqlClient
        const lastUid = sql<{ readonly last_uid: number }>`SELECT last_uid FROM mailboxes WHERE id = ${mailbox.id}`.pipe(Effect.map((rows) => Number(rows[0]!.last_uid)))
        // The process dies at the checkpoint: after the message's INSERT into the queue, at the mailbox's UID update.
        yield* sql`CREATE FUNCTION die_at_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the process died'; END $$`
        yield* sql`CREATE TRIGGER die_at_checkpoint BEFORE UPDATE OF last_uid ON mailboxes FOR EACH ROW WHEN (NEW.last_uid > OLD.last_uid) EXECUTE FUNCTION die_at_checkpoint()`
        const poller = yield* ImapPoller
        expect(Exit.isFailure(yield* Effect.exit(poller.syncOnce))).toBe(true)
        // The INSERT went with its transaction: nothing queued, the UID not recorded.
        expect(yield* queued).toBe(0)
        expect(yield* lastUid).toBe(0)
        yield* sql`DROP TRIGGER die_at_checkpoint ON mailboxes`
        yield* sql`DROP FUNCTION die_at_checkpoint`

        // The restarted poller fetches it again: queued once, with its UID.
        yield* TestClock.adjust(120_000)
        yield* poller.syncOnce
        expect(yield* queued).toBe(1)
        expect(yield* lastUid).toBeGreaterThan(0)
        yield* poller.syncOnce
        expect(yield* queued).toBe(1)
        yield* processAccepted
        expect(yield* queued).toBe(0)

        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.messageCount, thread.campaignId, thread.mailboxId]))
          .toEqual([["dee@example.com", 1, campaign.id, mailbox.id]])
        expect((yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })).metrics).toMatchObject({ replied: 1 })
        const events = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM event_outbox WHERE company_id = ${tenant.companyId} AND type = 'inbox.reply_received'`
        expect(events[0]!.n).toBe(1)
        // The other company, whose message it also names, sees nothing of it.
        expect((yield* other.api.inbox.listThreads({ query: {} })).total).toBe(0)
        expect((yield* other.api.campaigns.listRecipients({ params: { campaignId: other.campaign.id }, query: {} })).metrics).toMatchObject({ replied: 0 })
      }))

    it.effect("a message mailparser cannot read is quarantined by the queue with why, its UID recorded, and holds back none of the others", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const imap = yield* Imap
        const { api } = yield* sentCampaign(["eli@example.com"])
        const mailbox = yield* api.inbox.createMailbox({ payload: { ...yield* mailboxFor("support", "imap-pass-2"), email: "desk@shop.example" } })
        const unreadable = yield* imap.deliver("support", Buffer.from("\r\n\r\nno header at all\r\n"))
        yield* imap.deliver("support", rawMail({ from: "eli@example.com", to: "desk@shop.example", subject: "Hello", text: "Still there?" }))
        yield* (yield* ImapPoller).syncOnce
        yield* processAccepted
        const threads = yield* api.inbox.listThreads({ query: { mailboxId: mailbox.id } })
        expect(threads.items.map((thread) => thread.contactEmail)).toEqual(["eli@example.com"])
        const sql = yield* SqlClient.SqlClient
        const held = yield* sql<{ readonly quarantined_reason: string }>`SELECT quarantined_reason FROM inbound_queue
          WHERE destinations @> ${JSON.stringify([{ companies: [{ mailboxId: mailbox.id }] }])}::jsonb`
        expect(held).toEqual([{ quarantined_reason: "Malformed message: no headers" }])
        const [box] = yield* sql<{ readonly last_uid: number }>`SELECT last_uid FROM mailboxes WHERE id = ${mailbox.id}`
        expect(Number(box!.last_uid)).toBeGreaterThan(unreadable)
      }))
  })
}
