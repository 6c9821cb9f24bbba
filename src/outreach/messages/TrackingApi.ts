import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, NotFound } from "../../platform/Errors.ts"

/**
 * The public links of campaign e-mails: the only routes of the API that take
 * no credential. Each carries a signed token (docs/campaigns.md) naming the
 * recipient; a forged, tampered or unknown token answers 404.
 */

const token = { token: Schema.String }

const Gif = Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "image/gif" }))
const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))

/** RFC 8058 one-click: mail clients POST `List-Unsubscribe=One-Click`; the confirmation page's button posts the same. */
export const OneClickBody = Schema.Struct({ "List-Unsubscribe": Schema.optional(Schema.Literal("One-Click")) }).pipe(
  HttpApiSchema.asFormUrlEncoded()
)

const publicNote = "Public: no API key; the signed token in the path is the only credential. Forged or tampered token → 404."

export class TrackingApi extends HttpApiGroup.make("tracking")
  .annotateMerge(OpenApi.annotations({
    description: "Tracking links: the open pixel, click redirects and unsubscribe pages that e-mails link to; public, authorised by signed tokens instead of an API key.",
    override: { "x-displayName": "Tracking links (public)" }
  })).add(
  HttpApiEndpoint.get("open", "/t/o/:token", { params: token, success: Gif, error: [NotFound] }).pipe(described({
    summary: "Open pixel",
    does: `Records an open of the recipient's e-mail and answers a 1×1 transparent GIF. ${publicNote}`,
    who: "public"
  })),
  HttpApiEndpoint.get("click", "/t/c/:token", { params: token, success: HttpApiSchema.Empty(302), error: [NotFound] })
    .pipe(described({
    summary: "Click redirect",
    does: `Records a click and redirects (302) to the link the token names, which is always a link of that campaign's body as the recipient received it: never an open redirect. ${publicNote}`,
    who: "public"
  })),
  HttpApiEndpoint.get("unsubscribePage", "/t/u/:token", { params: token, success: Html, error: [NotFound] }).pipe(
    described({
    summary: "Unsubscribe confirmation page",
    does: `A small HTML page asking to confirm; it changes nothing itself (link scanners fetch links). ${publicNote}`,
    who: "public"
  })
  ),
  HttpApiEndpoint.post("unsubscribe", "/t/u/:token", {
    params: token,
    payload: OneClickBody,
    success: Html,
    error: [BadRequest, NotFound]
  }).pipe(described({
    summary: "Unsubscribe (RFC 8058 one-click)",
    does: `Adds the recipient's address to its company's suppression list: no campaign of that company mails it again. ${publicNote}`,
    who: "public"
  }))
).prefix("/api/v0") {}
