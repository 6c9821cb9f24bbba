import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { outboxOn } from "../../storage/Outbox.ts"
import type { OutreachSender, TrackedMessage } from "../messages/Outreach.ts"
import { CampaignsRepo } from "./CampaignsRepo.ts"
import { RecipientsRepo } from "./RecipientsRepo.ts"

/** Campaigns as an outreach sender: a tracking id is a recipient's; opens and clicks are counted on it. */
export const campaignsSender = Effect.gen(function*() {
  const campaigns = yield* CampaignsRepo
  const recipients = yield* RecipientsRepo
  const sql = yield* SqlClient.SqlClient
  const outbox = outboxOn(sql)
  return {
    idPrefix: "rcp_",
    messages: (ids) =>
      Effect.map(recipients.getAll(ids), (found) => found.map((recipient): TrackedMessage => ({
        id: recipient.id,
        companyId: recipient.companyId,
        email: recipient.email,
        fields: recipient.fields,
        campaignId: recipient.campaignId,
        // The body cannot change once sending started: it is the one the recipient got.
        source: Effect.map(
          campaigns.get(recipient.companyId, recipient.campaignId),
          Option.map((campaign) => ({ subject: campaign.subject, html: campaign.bodyDocument.html }))
        ),
        // The event commits with the count it reports.
        track: (event, now, url) =>
          sql.withTransaction(Effect.andThen(
            recipients.track(recipient.id, event, now),
            outbox.emit(recipient.companyId, event === "open" ? "recipient.opened" : "recipient.clicked", {
              campaignId: recipient.campaignId,
              recipientId: recipient.id,
              email: recipient.email,
              ...(url === undefined ? {} : { url }),
              at: now.toISOString()
            })
          )).pipe(Effect.orDie),
        messageId: recipient.messageId,
        origin: { campaignId: recipient.campaignId },
        bounced: (_hard, now) => recipients.mark([recipient.id], "bounced", now)
      }))),
    replied: (ids, now) => recipients.mark(ids, "replied", now),
    // Suppressed addresses are skipped when a campaign starts; the list is checked there.
    unsubscribed: () => Effect.void,
    // A campaign goes out once: a reply has nothing of it left to stop (the recipient counts as replied above).
    contactsReplied: () => Effect.void
  } satisfies OutreachSender
})
