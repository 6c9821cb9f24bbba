import { Effect, Option, Result } from "effect"
import { Suppressions } from "../lists/Suppressions.ts"
import { escapeHtml } from "../content/MergeFields.ts"
import { NotFound } from "../platform/Errors.ts"
import { currentDate } from "../platform/Time.ts"
import { CampaignsRepo } from "./CampaignsRepo.ts"
import { clickTarget, parseTemplates, type TrackingUrls } from "./Message.ts"
import { RecipientsRepo } from "./RecipientsRepo.ts"
import { TrackingSecret } from "./TrackingSecret.ts"
import { signToken, type TrackingLink, verifyToken } from "./TrackingTokens.ts"

/** The smallest transparent GIF: 1×1, one transparent colour. */
export const transparentGif = Uint8Array.from(
  Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64")
)

const publicPath = { open: "o", click: "c", unsubscribe: "u" } as const

/** The public links of one recipient's e-mail under `baseUrl` (PUBLIC_BASE_URL). */
export const trackingUrls = (baseUrl: string, key: Uint8Array, recipientId: string): TrackingUrls => {
  const url = (link: TrackingLink) => `${baseUrl}/api/v0/t/${publicPath[link.kind]}/${signToken(key, link)}`
  return {
    open: url({ kind: "open", recipientId }),
    click: (link) => url({ kind: "click", recipientId, link }),
    unsubscribe: url({ kind: "unsubscribe", recipientId })
  }
}

const notFound = new NotFound({ error: "Link not found" })

/** The recipient a token of `kind` names; 404 for a forged, tampered or stale token. */
const recipientOf = <K extends TrackingLink["kind"]>(token: string, kind: K) =>
  Effect.gen(function*() {
    const { key } = yield* TrackingSecret
    const link = verifyToken(key, token)
    if (link === undefined || link.kind !== kind) return yield* notFound
    const recipient = yield* RecipientsRepo.use((repo) => repo.get(link.recipientId))
    if (Option.isNone(recipient)) return yield* notFound
    return { link, recipient: recipient.value }
  })

export const open = Effect.fn("Tracking.open")(function*(token: string) {
  const { recipient } = yield* recipientOf(token, "open")
  const now = yield* currentDate
  yield* RecipientsRepo.use((repo) => repo.track(recipient.id, "open", now))
  return transparentGif
})

/** The address click `token` leads to, after counting the click: a link of that recipient's rendering of the body. */
export const click = Effect.fn("Tracking.click")(function*(token: string, baseUrl: string) {
  const { link, recipient } = yield* recipientOf(token, "click")
  if (link.kind !== "click") return yield* notFound
  const campaign = yield* Effect.flatMap(
    CampaignsRepo.use((repo) => repo.get(recipient.companyId, recipient.campaignId)),
    (found) => Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(notFound)
  )
  const templates = parseTemplates(campaign.subject, campaign.bodyDocument.html)
  if (Result.isFailure(templates)) return yield* notFound
  const { key } = yield* TrackingSecret
  const target = clickTarget(
    templates.success,
    recipient,
    trackingUrls(baseUrl, key, recipient.id).unsubscribe,
    link.link
  )
  if (target === undefined) return yield* notFound
  const now = yield* currentDate
  yield* RecipientsRepo.use((repo) => repo.track(recipient.id, "click", now))
  return target
})

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<meta name="robots" content="noindex"><title>${title}</title></head>` +
  `<body style="font-family:sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">${body}</body></html>`

/** GET: asks to confirm; changes nothing (mail scanners fetch every link). */
export const unsubscribePage = Effect.fn("Tracking.unsubscribePage")(function*(token: string) {
  const { recipient } = yield* recipientOf(token, "unsubscribe")
  return page(
    "Unsubscribe",
    `<h1>Unsubscribe</h1><p>Stop e-mails to <strong>${escapeHtml(recipient.email)}</strong>?</p>` +
      `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
      `<button type="submit">Unsubscribe</button></form>`
  )
})

/** POST (RFC 8058 one-click, or the page's button): the address joins the company's suppression list. */
export const unsubscribe = Effect.fn("Tracking.unsubscribe")(function*(token: string) {
  const { recipient } = yield* recipientOf(token, "unsubscribe")
  yield* Suppressions.use((repo) => repo.add(recipient.companyId, recipient.email, "unsubscribed"))
  return page(
    "Unsubscribed",
    `<h1>Unsubscribed</h1><p><strong>${escapeHtml(recipient.email)}</strong> will receive no further e-mails from this sender.</p>`
  )
})
