import { Context, Effect, Layer, Option } from "effect"

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
  /** A delivery status notification reported it failed; `hard`: permanently (the address is suppressed by then). */
  readonly bounced: (hard: boolean, now: Date) => Effect.Effect<void>
}

export interface OutreachSender {
  /** What its tracking ids begin with (`rcp_`): an id is looked up only by the sender that made it. */
  readonly idPrefix: string
  /** The messages of this area among tracking ids `ids`, in one lookup. */
  readonly messages: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<TrackedMessage>>
  /** The contacts answered these messages of this area (not absence notices, not bounces): counted as replied. */
  readonly replied: (ids: ReadonlyArray<string>, now: Date) => Effect.Effect<void>
  /** The contact unsubscribed (it is on the suppression list already): stop mailing it. */
  readonly unsubscribed: (companyId: string, email: string, now: Date) => Effect.Effect<void>
  /** These people wrote back to their companies (to any of their messages, or to their inboxes): stop what stops on a reply. */
  readonly contactsReplied: (contacts: ReadonlyArray<{ readonly companyId: string; readonly email: string }>, now: Date) => Effect.Effect<void>
}

/** Tracking ids grouped by the one sender whose ids begin like them (ids no sender made are left out). */
const bySender = (senders: ReadonlyArray<OutreachSender>, ids: Iterable<string>) => {
  const grouped = new Map<OutreachSender, Array<string>>()
  for (const id of new Set(ids)) {
    const sender = senders.find((candidate) => id.startsWith(candidate.idPrefix))
    if (sender !== undefined) grouped.set(sender, [...(grouped.get(sender) ?? []), id])
  }
  return grouped
}

/** The messages with tracking ids `ids`, by id: each sender asked once, for its own ids only. */
export const findMessages = (senders: ReadonlyArray<OutreachSender>, ids: Iterable<string>): Effect.Effect<ReadonlyMap<string, TrackedMessage>> =>
  Effect.map(
    Effect.forEach(bySender(senders, ids), ([sender, own]) => sender.messages(own)),
    (found) => new Map(found.flat().map((message) => [message.id, message]))
  )

/** The message with tracking id `id`, asked of the one sender whose ids begin like it (one lookup, not one per sender). */
export const findMessage = (senders: ReadonlyArray<OutreachSender>, id: string): Effect.Effect<Option.Option<TrackedMessage>> =>
  Effect.map(findMessages(senders, [id]), (found) => Option.fromNullishOr(found.get(id)))

/** The contacts answered these messages: each sender told once, of its own. */
export const repliedTo = (senders: ReadonlyArray<OutreachSender>, messages: ReadonlyArray<TrackedMessage>, now: Date) =>
  Effect.forEach(bySender(senders, messages.map((message) => message.id)), ([sender, own]) => sender.replied(own, now), { discard: true })

export class OutreachSenders extends Context.Service<OutreachSenders, ReadonlyArray<OutreachSender>>()(
  "outreach/OutreachSenders"
) {
  /** The senders the composition root lists. */
  static readonly listing = <const Senders extends ReadonlyArray<Effect.Effect<OutreachSender, never, unknown>>>(
    ...senders: Senders
  ): Layer.Layer<OutreachSenders, never, Effect.Services<Senders[number]>> =>
    Layer.effect(OutreachSenders, Effect.all(senders as ReadonlyArray<Effect.Effect<OutreachSender, never, Effect.Services<Senders[number]>>>))
}
