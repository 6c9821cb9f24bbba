import { Context, Effect, Layer, type Option } from "effect"

/**
 * The port campaigns and sequences each implement for the shared outreach
 * routes and the inbox: finding the message a tracking token or a reply's
 * Message-ID names (a campaign recipient, a sequence execution), hearing that
 * a contact unsubscribed, replied, or that a message bounced. The
 * composition root lists the senders; outreach never imports them.
 */

/** A sent message as the area that sent it knows it. */
export interface TrackedMessage {
  readonly id: string
  readonly companyId: string
  readonly email: string
  readonly fields: Readonly<Record<string, string>>
  /** What the message belongs to, for the lead's timeline. */
  readonly campaignId?: string | undefined
  readonly sequenceId?: string | undefined
  /** The subject and body the e-mail was rendered from (its click targets are links of it); none when gone. */
  readonly source: Effect.Effect<Option.Option<{ readonly subject: string; readonly html: string }>>
  /** Counts an open, or a click on `url` (which also counts as an open). */
  readonly track: (event: "open" | "click", now: Date, url?: string) => Effect.Effect<void>
  /** The Message-ID it went out with; null while it was not sent. */
  readonly messageId: string | null
  /** The campaign or sequence that sent it. */
  readonly origin: { readonly campaignId: string } | { readonly sequenceId: string }
  /** The contact answered it (not an absence notice, not a bounce): counted as replied. */
  readonly replied: (now: Date) => Effect.Effect<void>
  /** A delivery status notification reported it failed; `hard`: permanently (the address is suppressed by then). */
  readonly bounced: (hard: boolean, now: Date) => Effect.Effect<void>
}

export interface OutreachSender {
  /** What its tracking ids begin with (`rcp_`): an id is looked up only by the sender that made it. */
  readonly idPrefix: string
  /** The message of this area with tracking id `id`, if any. */
  readonly message: (id: string) => Effect.Effect<Option.Option<TrackedMessage>>
  /** The contact unsubscribed (it is on the suppression list already): stop mailing it. */
  readonly unsubscribed: (companyId: string, email: string, now: Date) => Effect.Effect<void>
  /** A person wrote back to the company (to any of its messages, or to its inbox): stop what stops on a reply. */
  readonly contactReplied: (companyId: string, email: string, now: Date) => Effect.Effect<void>
}

/** The message with tracking id `id`, asked of the one sender whose ids begin like it (one lookup, not one per sender). */
export const findMessage = (senders: ReadonlyArray<OutreachSender>, id: string): Effect.Effect<Option.Option<TrackedMessage>> => {
  const sender = senders.find((candidate) => id.startsWith(candidate.idPrefix))
  return sender === undefined ? Effect.succeedNone : sender.message(id)
}

export class OutreachSenders extends Context.Service<OutreachSenders, ReadonlyArray<OutreachSender>>()(
  "outreach/OutreachSenders"
) {
  /** The senders the composition root lists. */
  static readonly listing = <const Senders extends ReadonlyArray<Effect.Effect<OutreachSender, never, unknown>>>(
    ...senders: Senders
  ): Layer.Layer<OutreachSenders, never, Effect.Services<Senders[number]>> =>
    Layer.effect(OutreachSenders, Effect.all(senders as ReadonlyArray<Effect.Effect<OutreachSender, never, Effect.Services<Senders[number]>>>))
}
