import { Context, Effect, Layer, type Option } from "effect"

/**
 * The port campaigns and sequences each implement for the shared outreach
 * routes: finding the message a tracking token names (a campaign recipient,
 * a sequence execution) and hearing that a contact unsubscribed. The
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
}

export interface OutreachSender {
  /** The message of this area with tracking id `id`, if any. */
  readonly message: (id: string) => Effect.Effect<Option.Option<TrackedMessage>>
  /** The contact unsubscribed (it is on the suppression list already): stop mailing it. */
  readonly unsubscribed: (companyId: string, email: string, now: Date) => Effect.Effect<void>
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
