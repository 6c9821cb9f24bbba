import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { deliver, Inbound, inboundTestServer, rawMail, sentCampaign, sharedAddress } from "../../support/InboxTest.ts"
import { parseMail } from "../../support/SmtpServer.ts"
import { backends } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")
const replyDomain = "reply.shop.example"

/** The Reply-To the sink received on the message to `email`. */
const replyToOf = (email: string) =>
  Effect.gen(function*() {
    const { sink } = yield* Inbound
    const mail = (yield* sink.received).findLast((received) => received.to[0] === email)!
    const parsed = yield* parseMail(mail)
    return parsed.replyTo!.value[0]!.address!
  })

for (const backend of backends) {
  it.layer(inboundTestServer(backend.storage, { outreach: { replyDomain: Option.some(replyDomain) } }, { replyDomain: Option.some(replyDomain) }), { timeout: 60_000 })(
    `reply addresses on ${backend.name}`,
    (it) => {
      it.effect("outreach mail carries an issued Reply-To; a reply to it without threading headers joins its recipient", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(start)
          const { api, campaign } = yield* sentCampaign(["ada@example.com", "bob@example.com"])
          const recipients = yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })
          const ada = recipients.items.find((item) => item.email === "ada@example.com")!
          const address = yield* replyToOf("ada@example.com")
          expect(address).toMatch(new RegExp(`^r\\+${ada.id}\\.[0-9a-f]{20}@${replyDomain.replaceAll(".", "\\.")}$`))
          expect(yield* replyToOf("bob@example.com")).not.toBe(address)

          // Her client dropped In-Reply-To and References and changed the subject; an MTA upper-cased the address.
          const reply = rawMail({ from: "ada@example.com", to: address, subject: "Demo", text: "Yes, tell me more." })
          expect(yield* deliver(address.toUpperCase(), reply)).toMatchObject({ accepted: true })
          const threads = yield* api.inbox.listThreads({ query: {} })
          expect(threads.items.map((thread) => [thread.contactEmail, thread.campaignRecipientId, thread.classification])).toEqual([
            ["ada@example.com", ada.id, "interested"]
          ])
          const after = yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })
          expect(after.metrics).toMatchObject({ sent: 2, replied: 1 })
        }))

      it.effect("a reply sent from the inbox through MAIL_FROM carries an address naming its thread; the contact's answer to it joins that thread", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(start)
          const { api, messageIds } = yield* sentCampaign(["erin@example.com"])
          const first = rawMail({ from: "erin@example.com", to: sharedAddress, subject: "Re: Quick question", text: "What does it cost?", inReplyTo: messageIds.get("erin@example.com")! })
          expect(yield* deliver(sharedAddress, first)).toMatchObject({ accepted: true })
          const [thread] = (yield* api.inbox.listThreads({ query: {} })).items
          yield* api.inbox.reply({ params: { threadId: thread!.id }, payload: { text: "Ten euros a month." } })
          const address = yield* replyToOf("erin@example.com")
          expect(address).toMatch(new RegExp(`^r\\+${thread!.id}\\.[0-9a-f]{20}@${replyDomain.replaceAll(".", "\\.")}$`))

          // Her client dropped the threading headers and she changed the subject.
          const answer = rawMail({ from: "erin@example.com", to: address, subject: "Deal", text: "Deal, I am interested." })
          expect(yield* deliver(address, answer)).toMatchObject({ accepted: true })
          const after = yield* api.inbox.getThread({ params: { threadId: thread!.id }, query: {} })
          expect(after.messages.map((message) => [message.direction, message.text.trim()])).toEqual([
            ["inbound", "What does it cost?"],
            ["outbound", "Ten euros a month."],
            ["inbound", "Deal, I am interested."]
          ])

          // The thread's id under another company's mac is refused.
          const other = yield* sentCampaign(["finn@example.com"])
          yield* deliver(sharedAddress, rawMail({ from: "finn@example.com", to: sharedAddress, subject: "Re: Quick question", text: "Tell me more.", inReplyTo: other.messageIds.get("finn@example.com")! }))
          const [otherThread] = (yield* other.api.inbox.listThreads({ query: {} })).items
          yield* other.api.inbox.reply({ params: { threadId: otherThread!.id }, payload: { text: "Sure." } })
          const [, otherMac] = /\.([0-9a-f]{20})@/.exec(yield* replyToOf("finn@example.com"))!
          const forged = `r+${thread!.id}.${otherMac}@${replyDomain}`
          expect(yield* deliver(forged, rawMail({ from: "mallory@example.net", to: forged, subject: "Re: Quick question", text: "Hi" }))).toMatchObject({ accepted: false, code: 550 })
        }))

      it.effect("forged, altered or unknown reply addresses are refused at RCPT TO with 550; another company's message stays untouched", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(start)
          const victim = yield* sentCampaign(["carl@example.com"])
          const attacker = yield* sentCampaign(["dora@example.com"])
          const victimRecipient = (yield* victim.api.campaigns.listRecipients({ params: { campaignId: victim.campaign.id }, query: {} })).items[0]!
          const own = yield* replyToOf("dora@example.com")
          const [, mac] = /^r\+[a-z]+_[0-9a-f]+\.([0-9a-f]+)@/.exec(own)!
          const forged = [
            // The attacker's own valid mac on the victim's recipient id.
            `r+${victimRecipient.id}.${mac}@${replyDomain}`,
            // A mac altered by one character.
            own.replace(/\.([0-9a-f])/, (_, c: string) => `.${c === "0" ? "1" : "0"}`),
            `r+${victimRecipient.id}.${"0".repeat(20)}@${replyDomain}`,
            `sales@${replyDomain}`,
            `r+rcp_${"0".repeat(32)}.${"0".repeat(20)}@${replyDomain}`
          ]
          for (const address of forged) {
            const refused = yield* deliver(address, rawMail({ from: "mallory@example.net", to: address, subject: "Re: Quick question", text: "Yes, tell me more." }))
            expect(refused).toMatchObject({ accepted: false, code: 550 })
          }
          // A valid address with an In-Reply-To forged to name the victim's message joins only the attacker's.
          const crossing = rawMail({
            from: "dora@example.com",
            to: own,
            subject: "Re: Quick question",
            text: "Not interested, thanks.",
            inReplyTo: victim.messageIds.get("carl@example.com")!
          })
          expect(yield* deliver(own, crossing)).toMatchObject({ accepted: true })
          expect((yield* victim.api.inbox.listThreads({ query: {} })).total).toBe(0)
          const victimAfter = yield* victim.api.campaigns.listRecipients({ params: { campaignId: victim.campaign.id }, query: {} })
          expect(victimAfter.metrics).toMatchObject({ replied: 0 })
          const attackerThreads = yield* attacker.api.inbox.listThreads({ query: {} })
          expect(attackerThreads.items.map((thread) => [thread.contactEmail, thread.campaignId])).toEqual([["dora@example.com", attacker.campaign.id]])
        }))
    }
  )
}
