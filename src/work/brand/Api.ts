import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { NonEmpty, Text } from "../../platform/Schemas.ts"

/** `#RGB` or `#RRGGBB`: nothing else reaches a CSS variable or a prompt. */
export const Color = Schema.String.check(
  Schema.isPattern(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, { message: "must be a colour as #RGB or #RRGGBB" })
)

const familyName = String.raw`(?:"[^"\\;{}<>]{1,100}"|'[^'\\;{}<>]{1,100}'|[\p{L}\p{N} _.-]{1,100})`

/**
 * A CSS font-family list (`"Open Sans", Arial, sans-serif`): names bare or
 * quoted, comma-separated, without the characters that could end the
 * declaration it is written into.
 */
export const FontFamily = Schema.String.check(
  Schema.isPattern(new RegExp(String.raw`^\s*${familyName}(?:\s*,\s*${familyName})*\s*$`, "u"), {
    message: "must be a CSS font-family list such as \"Open Sans\", Arial, sans-serif"
  }),
  Schema.isMaxLength(300)
)

const HttpUrl = Schema.String.check(
  Schema.makeFilter((value: string) =>
    (URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)) || "must be an http or https URL"),
  Schema.isMaxLength(2_000)
)

export const BrandColors = Schema.Struct({
  primary: Schema.optional(Color),
  secondary: Schema.optional(Color),
  accent: Schema.optional(Color),
  background: Schema.optional(Color),
  text: Schema.optional(Color)
}).annotate({ identifier: "BrandColors" })

export const BrandFonts = Schema.Struct({
  heading: Schema.optional(FontFamily),
  body: Schema.optional(FontFamily)
}).annotate({ identifier: "BrandFonts" })

const Rules = Schema.Array(NonEmpty).check(Schema.isMaxLength(30))

export const BrandVoice = Schema.Struct({
  tone: Schema.optional(Text(500)),
  audience: Schema.optional(Text(1_000)),
  dos: Schema.optional(Rules),
  donts: Schema.optional(Rules)
}).annotate({ identifier: "BrandVoice" })

/** `website` and any social network by name (`linkedin`, `x`, …), each an http(s) URL. */
export const BrandLinks = Schema.Record(
  Schema.String.check(Schema.isPattern(/^[A-Za-z][A-Za-z0-9_-]{0,39}$/, { message: "must be a short name such as website or linkedin" })),
  HttpUrl
).check(Schema.makeFilter((links) => Object.keys(links).length <= 20 || "must have at most 20 links"))
  .annotate({ identifier: "BrandLinks" })

const kitFields = {
  name: Schema.optional(NonEmpty),
  /** A file of the company (an upload), shown by its public URL. */
  logoFileId: Schema.optional(Schema.String.check(Schema.isMaxLength(100))),
  colors: Schema.optional(BrandColors),
  fonts: Schema.optional(BrandFonts),
  voice: Schema.optional(BrandVoice),
  links: Schema.optional(BrandLinks)
}

/** The whole kit: PUT replaces it; an absent field is empty afterwards. */
export const BrandKitInput = Schema.Struct({ companyId: Schema.optional(Schema.String), ...kitFields }).annotate({
  identifier: "BrandKitInput",
  examples: [{
    name: "Acme Coffee",
    colors: { primary: "#6F4E37", accent: "#F2A541", background: "#FFFFFF", text: "#222" },
    fonts: { heading: "\"Playfair Display\", serif", body: "Inter, sans-serif" },
    voice: { tone: "warm and direct", audience: "café owners", dos: ["short sentences"], donts: ["jargon"] },
    links: { website: "https://acme.example", instagram: "https://instagram.com/acme" }
  }]
})

export const BrandKit = Schema.Struct({
  companyId: Schema.String,
  name: Schema.NullOr(Schema.String),
  logoFileId: Schema.NullOr(Schema.String),
  /** The logo's public URL, while `logoFileId` names a file. */
  logoUrl: Schema.NullOr(Schema.String),
  colors: BrandColors,
  fonts: BrandFonts,
  voice: BrandVoice,
  links: Schema.Record(Schema.String, Schema.String),
  /** Epoch milliseconds of the last PUT; null before the first. */
  updated: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "BrandKit" })

const companyQuery = { companyId: Schema.optional(Schema.String) }

export class BrandKitApi extends HttpApiGroup.make("brandKit")
  .annotateMerge(OpenApi.annotations({
    description: "The company's brand kit: name, logo, colours, fonts, voice and links, given to every model prompt that writes for the company.",
    override: { "x-displayName": "Brand kit" }
  })).add(
  HttpApiEndpoint.get("get", "/brand-kit", { query: companyQuery, success: BrandKit, error: [BadRequest, Forbidden, NotFound] })
    .pipe(described({
      summary: "Get the brand kit",
      does: "The company's brand kit; before the first PUT every field is empty.",
      who: "brandKit:read",
      errors: { 404: "for another company" }
    })),
  HttpApiEndpoint.put("put", "/brand-kit", { payload: BrandKitInput, success: BrandKit, error: [BadRequest, Forbidden, NotFound] })
    .pipe(described({
      summary: "Set the brand kit",
      does: "Replaces the company's brand kit (fields left out become empty). Colours are #RGB or #RRGGBB; fonts " +
        "CSS font-family lists; links http(s) URLs by name; `logoFileId` an uploaded file of the company. The " +
        "content engine, the design chats and other writing features tell the model about it and offer the " +
        "colours and fonts as CSS variables (`--brand-primary`, `--brand-font-heading`, …).",
      who: "brandKit:write",
      errors: { 400: "naming the field: a colour, font or link not in its form, a logoFileId that is not a file of the company", 404: "for another company" }
    }))
).middleware(Authentication).prefix("/api/v0") {}
