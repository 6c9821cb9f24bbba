import { Result } from "effect"
import { DomUtils, parseDocument } from "htmlparser2"
import { renderTemplate } from "../content/MergeFields.ts"
import { parse, seededRandom, type SpintaxSyntaxError, type Template } from "../content/Spintax.ts"

/**
 * One campaign e-mail for one recipient: spintax and merge fields expanded
 * (the recipient's id seeds the spintax choices, so rendering again gives the
 * same message), every web link rewritten to its click-tracking address, and
 * an open pixel appended. Clicks re-render the same way to find their link,
 * so a click can only ever lead to a link of that campaign's body.
 */

export interface CampaignTemplates {
  readonly subject: Template
  readonly html: Template
}

/** Parses the subject and body once per campaign; fails naming where the spintax or merge syntax is malformed. */
export const parseTemplates = (subject: string, html: string): Result.Result<CampaignTemplates, string> => {
  const located = (what: string) => (error: SpintaxSyntaxError) =>
    `${what}: ${error.message} at line ${error.line}, column ${error.column}`
  return Result.flatMap(
    Result.mapError(parse(subject), located("subject")),
    (subjectTemplate) =>
      Result.map(Result.mapError(parse(html), located("bodyDocument.html")), (htmlTemplate) => ({
        subject: subjectTemplate,
        html: htmlTemplate
      }))
  )
}

export interface TrackingUrls {
  readonly open: string
  readonly click: (link: number) => string
  readonly unsubscribe: string
}

export interface RenderedMessage {
  readonly subject: string
  readonly html: string
}

const isTracked = (href: string) => /^https?:\/\//i.test(href.trim())

/** The web links of an HTML document in document order: what click tokens number. */
const trackedAnchors = (html: string) => {
  const document = parseDocument(html)
  const anchors = DomUtils.findAll(
    (element) => element.name === "a" && typeof element.attribs.href === "string" && isTracked(element.attribs.href),
    document
  )
  return { document, anchors }
}

/** The merge values of a recipient: its row's fields plus `unsubscribeUrl`. */
const valuesOf = (fields: Readonly<Record<string, string>>, unsubscribeUrl: string) => ({ ...fields, unsubscribeUrl })

/** The body as the recipient's expansion, before any tracking is added. */
const expandedHtml = (
  templates: CampaignTemplates,
  recipientId: string,
  fields: Readonly<Record<string, string>>,
  unsubscribeUrl: string
) => renderTemplate(templates.html, valuesOf(fields, unsubscribeUrl), { html: true, random: seededRandom(recipientId) })

export const renderMessage = (
  templates: CampaignTemplates,
  recipient: { readonly id: string; readonly fields: Readonly<Record<string, string>> },
  urls: TrackingUrls
): RenderedMessage => {
  const subject = renderTemplate(templates.subject, valuesOf(recipient.fields, urls.unsubscribe), {
    html: false,
    random: seededRandom(`${recipient.id}:subject`)
  }).replace(/[\r\n]+/g, " ")
  const { document, anchors } = trackedAnchors(expandedHtml(templates, recipient.id, recipient.fields, urls.unsubscribe))
  anchors.forEach((anchor, index) => {
    if (anchor.attribs.href.trim() !== urls.unsubscribe) anchor.attribs.href = urls.click(index)
  })
  const pixel = `<img src="${urls.open}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`
  const html = DomUtils.getOuterHTML(document, { encodeEntities: "utf8" })
  const bodyEnd = html.toLowerCase().lastIndexOf("</body>")
  return {
    subject,
    html: bodyEnd === -1 ? html + pixel : html.slice(0, bodyEnd) + pixel + html.slice(bodyEnd)
  }
}

/** Where click `link` of the recipient's message leads: the link's own address, or undefined when there is no such link. */
export const clickTarget = (
  templates: CampaignTemplates,
  recipient: { readonly id: string; readonly fields: Readonly<Record<string, string>> },
  unsubscribeUrl: string,
  link: number
): string | undefined => {
  const { anchors } = trackedAnchors(expandedHtml(templates, recipient.id, recipient.fields, unsubscribeUrl))
  return anchors[link]?.attribs.href.trim()
}
