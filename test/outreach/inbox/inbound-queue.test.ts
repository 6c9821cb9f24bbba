import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { readInbound } from "../../../src/outreach/inbox/InboundMail.ts"
import { InboundQueue } from "../../../src/outreach/inbox/InboundQueue.ts"
import { InboundQueueRepo } from "../../../src/outreach/inbox/InboundQueueRepo.ts"
import { inboxDefaults } from "../../../src/outreach/inbox/InboxConfig.ts"
import { Ingestion } from "../../../src/outreach/inbox/Ingestion.ts"
import { Inbound, inboundTestServer, processAccepted, rawMail, sentCampaign, sharedAddress, smtpSend } from "../../support/InboxTest.ts"
import { backends } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")

/** Sends `raw` to inbound SMTP for the shared address and answers its SMTP outcome, without processing anything. */
const accept = (raw: Buffer) => Inbound.use(({ port }) => smtpSend(port, { from: "someone@example.net", to: [sharedAddress] }, raw))

const count = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ readonly n: number }>, unknown>) =>
  SqlClient.SqlClient.use((sql) => Effect.map(Effect.orDie(query(sql)), (rows) => rows[0]!.n))

const queued = count((sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM inbound_queue WHERE quarantined_reason IS NULL`)

const replyEvents = (companyId: string) =>
  count((sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM event_outbox WHERE company_id = ${companyId} AND type = 'inbox.reply_received'`)

for (const backend of backends) {
  it.layer(inboundTestServer(backend.storage), { timeout: 60_000 })(`the inbound queue on ${backend.name}`, (it) => {
    it.effect("a message acknowledged, then left by a worker that crashed holding it, is processed once its lease expired, exactly once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, campaign, tenant, messageIds } = yield* sentCampaign(["ada@example.com"])
        const raw = rawMail({ from: "ada@example.com", to: sharedAddress, subject: "Re: Quick question", text: "Tell me more.", inReplyTo: messageIds.get("ada@example.com")! })
        expect(yield* accept(raw)).toMatchObject({ accepted: true })
        // Acknowledged means stored: nothing is processed yet, the raw message waits in the queue.
        expect(yield* queued).toBe(1)
        expect((yield* api.inbox.listThreads({ query: {} })).total).toBe(0)

        // A worker claims it and the process dies before it commits: its lease holds the message meanwhile.
        const repo = yield* InboundQueueRepo
        const now = new Date(start)
        const crashed = yield* repo.claim(now, new Date(start + inboxDefaults.leaseMs), 64)
        expect(crashed.messages).toHaveLength(1)
        yield* processAccepted
        expect((yield* api.inbox.listThreads({ query: {} })).total).toBe(0)

        // After the lease, the next worker (a restarted process) takes it in.
        yield* TestClock.adjust(inboxDefaults.leaseMs + 1_000)
        yield* processAccepted
        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.messageCount, thread.classification])).toEqual([["ada@example.com", 1, "interested"]])
        expect(yield* queued).toBe(0)

        // The crashed worker's late commit changes nothing: its lease is gone, its transaction rolls back.
        const mail = yield* readInbound(raw)
        const late = yield* Effect.flip((yield* Ingestion).storeBatch(
          [{ mail, destinations: crashed.messages[0]!.destinations }],
          repo.settle(crashed.token, [crashed.messages[0]!.id], [])
        ))
        expect(late._tag).toBe("LeaseLost")
        yield* processAccepted
        expect((yield* api.inbox.getThread({ params: { threadId: threads.items[0]!.id }, query: {} })).messages).toHaveLength(1)
        const recipients = yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })
        expect(recipients.metrics).toMatchObject({ sent: 1, replied: 1 })
        expect(yield* replyEvents(tenant.companyId)).toBe(1)
      }))

    it.effect("two workers draining the queue at once never process one message twice", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        // More than a batch, so that both workers claim some (and each what the other does not hold).
        const emails = Array.from({ length: 100 }, (_, index) => `c${index}@example.com`)
        const { api, campaign, tenant, messageIds } = yield* sentCampaign(emails)
        const queue = yield* InboundQueue
        // Accepted as inbound SMTP accepts them (SMTP itself is the other tests' part), group-committed.
        yield* Effect.forEach(emails, (email) =>
          queue.accept(rawMail({ from: email, to: sharedAddress, subject: "Re: Quick question", text: "Sounds good.", inReplyTo: messageIds.get(email)! }), [{}]),
          { concurrency: "unbounded" })
        expect(yield* queued).toBe(emails.length)

        const drain = Effect.gen(function*() {
          while ((yield* queue.processBatch) > 0) yield* Effect.yieldNow
        })
        yield* Effect.all([drain, drain], { concurrency: 2 })
        yield* processAccepted

        expect((yield* api.inbox.listThreads({ query: {} })).total).toBe(emails.length)
        expect(yield* count((sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM inbox_threads
          WHERE company_id = ${tenant.companyId} AND message_count = 1 AND campaign_recipient_id IS NOT NULL`)).toBe(emails.length)
        expect(yield* count((sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM inbox_messages WHERE company_id = ${tenant.companyId}`)).toBe(emails.length)
        expect((yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })).metrics).toMatchObject({ replied: emails.length })
        expect(yield* replyEvents(tenant.companyId)).toBe(emails.length)
        expect(yield* queued).toBe(0)
      }))

    it.effect("processed in one batch, a forged reply naming another company's message and its reply joins nothing of theirs", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const victim = yield* sentCampaign(["gil@example.com"])
        const attacker = yield* sentCampaign(["hex@example.com"])
        yield* attacker.api.inbox.createMailbox({
          payload: {
            email: "sales@forger.example",
            imap: { host: "imap.forger.example", port: 993, secure: true, user: "sales", password: "secret-imap" },
            smtp: { host: "smtp.forger.example", port: 465, secure: true, user: "sales", password: "secret-smtp" }
          }
        })
        const answered = victim.messageIds.get("gil@example.com")!
        const genuine = rawMail({ from: "gil@example.com", to: sharedAddress, subject: "Re: Quick question", text: "Tell me more.", inReplyTo: answered, messageId: "<genuine-1@gil.example>" })
        const forged = rawMail({
          from: "gil@example.com",
          to: "sales@forger.example",
          subject: "Re: Quick question",
          text: "Yes, interested.",
          headers: { "In-Reply-To": "<genuine-1@gil.example>", References: `${answered} <genuine-1@gil.example>` }
        })
        expect(yield* accept(genuine)).toMatchObject({ accepted: true })
        expect(yield* Inbound.use(({ port }) => smtpSend(port, { from: "gil@example.com", to: ["sales@forger.example"] }, forged))).toMatchObject({ accepted: true })
        expect(yield* queued).toBe(2)
        // Both in one claim: threading sees the genuine reply of the batch, but only within its own company.
        expect(yield* (yield* InboundQueue).processBatch).toBe(2)
        const theirs = yield* victim.api.inbox.listThreads({ query: {} })
        expect(theirs.items.map((thread) => [thread.messageCount, thread.campaignId])).toEqual([[1, victim.campaign.id]])
        const forgers = yield* attacker.api.inbox.listThreads({ query: {} })
        expect(forgers.items.map((thread) => [thread.messageCount, thread.campaignRecipientId, thread.campaignId])).toEqual([[1, null, null]])
        expect((yield* victim.api.campaigns.listRecipients({ params: { campaignId: victim.campaign.id }, query: {} })).metrics).toMatchObject({ replied: 1 })
        expect((yield* attacker.api.campaigns.listRecipients({ params: { campaignId: attacker.campaign.id }, query: {} })).metrics).toMatchObject({ replied: 0 })
      }))

    it.effect("processed in one batch, a reply to an earlier message of the batch joins its new thread, and a second copy is kept once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api } = yield* sentCampaign(["ivo@example.com"])
        yield* api.inbox.createMailbox({
          payload: {
            email: "hello@desk.example",
            imap: { host: "imap.desk.example", port: 993, secure: true, user: "hello", password: "secret-imap" },
            smtp: { host: "smtp.desk.example", port: 465, secure: true, user: "hello", password: "secret-smtp" }
          }
        })
        const send = (raw: Buffer) => Inbound.use(({ port }) => smtpSend(port, { from: "zoe@example.org", to: ["hello@desk.example"] }, raw))
        const first = rawMail({ from: "zoe@example.org", to: "hello@desk.example", subject: "A question", text: "Do you ship abroad?", messageId: "<first@zoe.example>" })
        yield* send(first)
        yield* send(rawMail({ from: "zoe@example.org", to: "hello@desk.example", subject: "Also", text: "And to Norway?", inReplyTo: "<first@zoe.example>" }))
        yield* send(first)
        expect(yield* (yield* InboundQueue).processBatch).toBe(3)
        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.messageCount])).toEqual([["zoe@example.org", 2]])
      }))

    it.effect("a message that kept failing is quarantined with why, and holds back none of the others", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, messageIds } = yield* sentCampaign(["eve@example.com", "fay@example.com"])
        for (const email of ["eve@example.com", "fay@example.com"]) {
          yield* accept(rawMail({ from: email, to: sharedAddress, subject: "Re: Quick question", text: "Not interested.", inReplyTo: messageIds.get(email)! }))
        }
        // Eve's message failed as often as a message may: the next claim quarantines it instead of trying again.
        yield* SqlClient.SqlClient.use((sql) => sql`UPDATE inbound_queue SET attempts = 5 WHERE id = (SELECT min(id) FROM inbound_queue)`).pipe(Effect.orDie)
        yield* processAccepted
        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items.map((thread) => thread.contactEmail)).toEqual(["fay@example.com"])
        const held = yield* SqlClient.SqlClient.use((sql) =>
          sql<{ readonly quarantined_reason: string }>`SELECT quarantined_reason FROM inbound_queue`).pipe(Effect.orDie)
        expect(held).toEqual([{ quarantined_reason: "Processing failed 5 times" }])
        // Quarantined messages are kept, never claimed again.
        yield* processAccepted
        expect((yield* api.inbox.listThreads({ query: {} })).total).toBe(1)
      }))

    it.effect("a message queued for a mailbox deleted before it is processed is still taken in, for the mailbox's company", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api } = yield* sentCampaign(["una@example.com"])
        const mailbox = yield* api.inbox.createMailbox({
          payload: {
            email: "team@gone.example",
            imap: { host: "imap.gone.example", port: 993, secure: true, user: "team", password: "secret-imap" },
            smtp: { host: "smtp.gone.example", port: 465, secure: true, user: "team", password: "secret-smtp" }
          }
        })
        expect(yield* Inbound.use(({ port }) => smtpSend(port, { from: "una@example.com", to: ["team@gone.example"] },
          rawMail({ from: "una@example.com", to: "team@gone.example", subject: "Hi", text: "A question for the team." })))).toMatchObject({ accepted: true })
        yield* api.inbox.deleteMailbox({ params: { mailboxId: mailbox.id }, query: {} })
        yield* processAccepted
        const threads = yield* api.inbox.listThreads({ query: {} })
        expect(threads.items.map((thread) => [thread.contactEmail, thread.mailboxId])).toEqual([["una@example.com", null]])
        expect(yield* queued).toBe(0)
      }))
  })
}
