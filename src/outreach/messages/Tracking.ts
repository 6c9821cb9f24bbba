import { Effect, Option, Result } from "effect"
import type { KeyObject } from "node:crypto"
import { LinkNotFound } from "./Errors.ts"
import { Leads } from "../leads/Leads.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import { currentDate } from "../../platform/Time.ts"
import { escapeHtml } from "./MergeFields.ts"
import { clickTarget, parseTemplates, type TrackingUrls } from "./Message.ts"
import { findMessage, OutreachSenders, type TrackedMessage } from "./Outreach.ts"
import { TrackingSecret } from "./TrackingSecret.ts"
import { signToken, type TrackingLink, verifyToken } from "./TrackingTokens.ts"

/** The smallest transparent GIF: 1×1, one transparent colour. */
export const transparentGif = Uint8Array.from(
  Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64")
)

const publicPath = { open: "o", click: "c", unsubscribe: "u" } as const

/** The public links of one recipient's e-mail under `baseUrl` (PUBLIC_BASE_URL). */
export const trackingUrls = (baseUrl: string, key: KeyObject, recipientId: string): TrackingUrls => {
  const url = (link: TrackingLink) => `${baseUrl}/api/v0/t/${publicPath[link.kind]}/${signToken(key, link)}`
  return {
    open: url({ kind: "open", recipientId }),
    click: (link) => url({ kind: "click", recipientId, link }),
    unsubscribe: url({ kind: "unsubscribe", recipientId })
  }
}

const notFound = new LinkNotFound({})

/** The message with tracking id `id`, from whichever sender made it. */
const messageOf = (id: string) => OutreachSenders.use((senders) => findMessage(senders, id))

/** The message a token of `kind` names; 404 for a forged, tampered or stale token. */
const recipientOf = <K extends TrackingLink["kind"]>(token: string, kind: K) =>
  Effect.gen(function*() {
    const { key } = yield* TrackingSecret
    const link = verifyToken(key, token)
    if (link === undefined || link.kind !== kind) return yield* notFound
    const message = yield* messageOf(link.recipientId)
    if (Option.isNone(message)) return yield* notFound
    return { link, message: message.value }
  })

/** Writes what the recipient did to their lead's timeline. */
const toTimeline = (
  message: TrackedMessage,
  type: "opened" | "clicked" | "unsubscribed",
  at: Date,
  detail: Record<string, unknown> = {}
) =>
  Leads.use((leads) =>
    leads.record([{
      companyId: message.companyId,
      type,
      at,
      contact: { email: message.email },
      campaignId: message.campaignId,
      sequenceId: message.sequenceId,
      detail
    }])
  )

export const open = Effect.fn("Tracking.open")(function*(token: string) {
  const { message } = yield* recipientOf(token, "open")
  const now = yield* currentDate
  yield* message.track("open", now)
  yield* toTimeline(message, "opened", now)
  return transparentGif
})

/** The address click `token` leads to, after counting the click: a link of that recipient's rendering of the body. */
export const click = Effect.fn("Tracking.click")(function*(token: string, baseUrl: string) {
  const { link, message } = yield* recipientOf(token, "click")
  if (link.kind !== "click") return yield* notFound
  const source = yield* message.source
  if (Option.isNone(source)) return yield* notFound
  const templates = parseTemplates(source.value.subject, source.value.html)
  if (Result.isFailure(templates)) return yield* notFound
  const { key } = yield* TrackingSecret
  const target = clickTarget(
    templates.success,
    message,
    trackingUrls(baseUrl, key, message.id).unsubscribe,
    link.link
  )
  if (target === undefined) return yield* notFound
  const now = yield* currentDate
  yield* message.track("click", now, target)
  yield* toTimeline(message, "clicked", now, { url: target })
  return target
})

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<meta name="robots" content="noindex"><title>${title}</title></head>` +
  `<body style="font-family:sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">${body}</body></html>`

/** GET: asks to confirm; changes nothing (mail scanners fetch every link). */
export const unsubscribePage = Effect.fn("Tracking.unsubscribePage")(function*(token: string) {
  const { message: recipient } = yield* recipientOf(token, "unsubscribe")
  return page(
    "Unsubscribe",
    `<h1>Unsubscribe</h1><p>Stop e-mails to <strong>${escapeHtml(recipient.email)}</strong>?</p>` +
      `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
      `<button type="submit">Unsubscribe</button></form>`
  )
})

/** POST (RFC 8058 one-click, or the page's button): the address joins the company's suppression list. */
export const unsubscribe = Effect.fn("Tracking.unsubscribe")(function*(token: string) {
  const { message: recipient } = yield* recipientOf(token, "unsubscribe")
  yield* Suppressions.use((repo) => repo.add(recipient.companyId, recipient.email, "unsubscribed"))
  const now = yield* currentDate
  yield* toTimeline(recipient, "unsubscribed", now)
  const senders = yield* OutreachSenders
  yield* Effect.forEach(senders, (sender) => sender.unsubscribed(recipient.companyId, recipient.email, now), { discard: true })
  return page(
    "Unsubscribed",
    `<h1>Unsubscribed</h1><p><strong>${escapeHtml(recipient.email)}</strong> will receive no further e-mails from this sender.</p>`
  )
})
