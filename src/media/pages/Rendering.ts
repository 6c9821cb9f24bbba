import { createHash } from "node:crypto"
import sanitizeHtml from "sanitize-html"
import type { Served } from "./PagesRepo.ts"

/**
 * What a published landing page serves: its body sanitised by `sanitize-html`
 * (an allow-list: no scripts, no event handlers, no `javascript:` or other
 * unlisted URL schemes, no frames or embeds), wrapped in a document with the
 * page's CSS and the brand kit's CSS variables, every form pointed at the
 * page's submit address with the honeypot field added. Made when the page is
 * saved, never per request. Decisions in docs/landing-pages.md.
 */

/** The honeypot: hidden from people, filled in by form-filling bots; a submission with it is dropped. */
export const honeypotField = "_hp"

const honeypot =
  `<input type="text" name="${honeypotField}" value="" tabindex="-1" autocomplete="off" aria-hidden="true" style="position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden">`

const formTags = ["form", "input", "textarea", "select", "option", "optgroup", "label", "button", "fieldset", "legend"]

const everywhere = ["class", "id", "style", "title", "lang", "dir", "role", "aria-*", "data-*"]

const sanitizeOptions = (submitPath: string): sanitizeHtml.IOptions => ({
  allowedTags: [...sanitizeHtml.defaults.allowedTags, "img", "picture", "source", "center", "font", ...formTags],
  allowedAttributes: {
    "*": everywhere,
    a: ["href", "name", "target", "rel"],
    img: ["src", "srcset", "sizes", "alt", "width", "height", "loading"],
    source: ["srcset", "sizes", "media", "type"],
    td: ["colspan", "rowspan", "align", "valign", "width", "bgcolor"],
    th: ["colspan", "rowspan", "align", "valign", "width", "bgcolor"],
    table: ["align", "width", "border", "cellpadding", "cellspacing", "bgcolor"],
    font: ["color", "face", "size"],
    form: ["action", "method"],
    input: ["name", "type", "value", "placeholder", "required", "checked", "min", "max", "maxlength", "pattern", "autocomplete"],
    textarea: ["name", "placeholder", "required", "rows", "cols", "maxlength"],
    select: ["name", "required", "multiple"],
    option: ["value", "selected"],
    label: ["for"],
    button: ["type", "name", "value"]
  },
  allowedSchemes: ["http", "https", "mailto", "tel"],
  allowedSchemesByTag: { img: ["http", "https", "data"], source: ["http", "https", "data"] },
  allowProtocolRelative: false,
  // The text of these is dropped with them (a full document's <title>, a <script>'s code).
  nonTextTags: ["script", "style", "textarea", "option", "noscript", "title", "head"],
  transformTags: {
    // Every form posts to the page's own submit address: a page cannot send its visitors' data elsewhere.
    form: (_tagName, _attribs) => ({ tagName: "form", attribs: { action: submitPath, method: "post" } }),
    // Links that open a new window must not hand it this page (reverse tabnabbing).
    a: (tagName, attribs) =>
      ({ tagName, attribs: attribs.target === undefined ? attribs : { ...attribs, rel: "noopener noreferrer" } })
  }
})

const escapeText = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** CSS cannot leave its <style> element: a `<` is only meaningful in CSS strings, where `\3c ` means the same. */
const containedCss = (css: string) => css.replace(/</g, "\\3c ")

export interface PageParts {
  readonly title: string
  readonly html: string
  readonly css: string
  /** The brand kit's variables (`:root{--brand-…}`), or "". */
  readonly brandCss: string
  /** The path forms post to: `/p/{companySlug}/{slug}/submit`. */
  readonly submitPath: string
}

/** The document the public URL answers, and its strong ETag. */
export const render = (parts: PageParts): Served => {
  const body = sanitizeHtml(parts.html, sanitizeOptions(parts.submitPath)).replaceAll("</form>", `${honeypot}</form>`)
  const css = containedCss(`${parts.brandCss}\n${parts.css}`.trim())
  const servedHtml = `<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${
    escapeText(parts.title)
  }</title>${css === "" ? "" : `<style>${css}</style>`}</head>
<body>${body}</body></html>
`
  return { servedHtml, servedEtag: `"${createHash("sha256").update(servedHtml).digest("base64url").slice(0, 32)}"` }
}

/**
 * The page's Content-Security-Policy: no script at all, nothing framed or
 * embedded, forms only to the page itself (and the thank-you page it
 * redirects to, which browsers also check), images, styles and fonts from
 * the web or inline.
 */
export const contentSecurityPolicy = (thankYouUrl: string | null) =>
  [
    "default-src 'none'",
    "script-src 'none'",
    "object-src 'none'",
    "frame-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    `form-action 'self'${thankYouUrl === null ? "" : ` ${new URL(thankYouUrl).origin}`}`,
    "img-src 'self' https: data:",
    "style-src 'self' 'unsafe-inline' https:",
    "font-src 'self' https: data:"
  ].join("; ")
