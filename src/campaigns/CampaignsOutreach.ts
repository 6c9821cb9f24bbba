import { Effect, Option } from "effect"
import type { OutreachSender, TrackedMessage } from "../outreach/Outreach.ts"
import { CampaignsRepo } from "./CampaignsRepo.ts"
import { RecipientsRepo } from "./RecipientsRepo.ts"

/** Campaigns as an outreach sender: a tracking id is a recipient's; opens and clicks are counted on it. */
export const campaignsSender = Effect.gen(function*() {
  const campaigns = yield* CampaignsRepo
  const recipients = yield* RecipientsRepo
  return {
    message: (id) =>
      Effect.map(recipients.get(id), Option.map((recipient): TrackedMessage => ({
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
        track: (event, now) => recipients.track(id, event, now),
        messageId: recipient.messageId,
        origin: { campaignId: recipient.campaignId },
        replied: (now) => recipients.mark(id, "replied", now),
        bounced: (_hard, now) => recipients.mark(id, "bounced", now)
      }))),
    // Suppressed addresses are skipped when a campaign starts; the list is checked there.
    unsubscribed: () => Effect.void
  } satisfies OutreachSender
})
