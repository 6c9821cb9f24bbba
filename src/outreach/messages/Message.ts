import { Result } from "effect"
import { DomUtils, parseDocument } from "htmlparser2"
import { renderTemplate } from "./MergeFields.ts"
import { parse, seededRandom, type SpintaxSyntaxError, type Template } from "../../work/content/Spintax.ts"
import { textOf } from "../mail/Message.ts"

/**
 * One outreach e-mail (a campaign's or a sequence step's) for one recipient. The body is prepared once
 * per campaign or draft (`parseTemplates`): the HTML is parsed, every web link's
 * address is replaced by a placeholder for its click-tracking address, an
 * open pixel is appended, an unsubscribe link is added when the body has
 * none, and the plain-text part is derived from the same body. Per recipient (`renderMessage`) only spintax and merge fields are
 * expanded — the recipient's id seeds the spintax choices, so rendering again
 * gives the same message — which keeps sending cheap: no HTML is parsed per
 * recipient. A click token names a link by its position among the body's
 * tracked links; `clickTarget` renders that link's own address for the
 * recipient, so a click can only ever lead to a link of the campaign's body.
 */

export interface MessageTemplates {
  readonly subject: Template
  /** The body with each tracked link's address as `{{__link_N}}` and the pixel as `{{__open}}`. */
  readonly html: Template
  /** The plain-text part, derived from the body's HTML. */
  readonly text: Template
  /** Each tracked link's address as written (it may hold merge fields), in document order. */
  readonly links: ReadonlyArray<Template>
}

export interface TrackingUrls {
  readonly open: string
  readonly click: (link: number) => string
  readonly unsubscribe: string
}

export interface RenderedMessage {
  readonly subject: string
  readonly html: string
  readonly text: string
}

type Recipient = { readonly id: string; readonly fields: Readonly<Record<string, string>> }

/** A link worth tracking: a web address, or one a merge field fills in; never the unsubscribe link. */
const isTracked = (href: string) =>
  /^\s*(https?:\/\/|\{\{)/i.test(href) && !/^\s*\{\{\s*unsubscribeUrl\s*\}\}\s*$/i.test(href)

const linkField = (index: number) => `__link_${index}`
const pixel = `<img src="{{__open}}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`

/** Every outreach e-mail carries an unsubscribe link in its body; this one is added to a body without one. */
const unsubscribeFooter =
  `<p style="font-size:12px;color:#666666">Don't want these e-mails? <a href="{{unsubscribeUrl}}">Unsubscribe</a></p>`

const hasUnsubscribeLink = (html: string) => /\{\{\s*unsubscribe[\s_-]*url\s*(\|[^}]*)?\}\}/i.test(html)

/** `html` with `insert` just before its `</body>`, or at its end. */
const beforeBodyEnd = (html: string, insert: string) => {
  const bodyEnd = html.toLowerCase().lastIndexOf("</body>")
  return bodyEnd === -1 ? html + insert : html.slice(0, bodyEnd) + insert + html.slice(bodyEnd)
}

const located = (what: string) => (error: SpintaxSyntaxError) =>
  `${what}: ${error.message} at line ${error.line}, column ${error.column}`

/** Parses the subject and prepares the body once per campaign; fails naming where spintax or merge syntax is malformed. */
export const parseTemplates = (subject: string, html: string): Result.Result<MessageTemplates, string> =>
  Result.gen(function*() {
    const subjectTemplate = yield* Result.mapError(parse(subject), located("subject"))
    // Checked on the source as written, so that positions point into the author's HTML.
    yield* Result.mapError(parse(html), located("bodyDocument.html"))
    const body = hasUnsubscribeLink(html) ? html : beforeBodyEnd(html, unsubscribeFooter)
    const document = parseDocument(body)
    const anchors = DomUtils.findAll(
      (element) => element.name === "a" && typeof element.attribs.href === "string" && isTracked(element.attribs.href),
      document
    )
    const links: Array<Template> = []
    for (const [index, anchor] of anchors.entries()) {
      links.push(yield* Result.mapError(parse(anchor.attribs.href.trim()), located(`link ${index + 1}`)))
      anchor.attribs.href = `{{${linkField(index)}}}`
    }
    const withPixel = beforeBodyEnd(DomUtils.getOuterHTML(document, { encodeEntities: "utf8" }), pixel)
    return {
      subject: subjectTemplate,
      html: yield* Result.mapError(parse(withPixel), located("bodyDocument.html")),
      text: yield* Result.mapError(parse(textOf(body)), located("bodyDocument.html (as text)")),
      links
    }
  })

/** The merge values of a recipient: its row's fields plus `unsubscribeUrl`. */
const valuesOf = (recipient: Recipient, unsubscribeUrl: string) => ({ ...recipient.fields, unsubscribeUrl })

export const renderMessage = (templates: MessageTemplates, recipient: Recipient, urls: TrackingUrls): RenderedMessage => {
  const values = valuesOf(recipient, urls.unsubscribe)
  const tracking: Record<string, string> = { __open: urls.open }
  for (let index = 0; index < templates.links.length; index++) tracking[linkField(index)] = urls.click(index)
  return {
    subject: renderTemplate(templates.subject, values, { html: false, random: seededRandom(`${recipient.id}:subject`) })
      .replace(/[\r\n]+/g, " "),
    html: renderTemplate(templates.html, { ...values, ...tracking }, { html: true, random: seededRandom(recipient.id) }),
    text: renderTemplate(templates.text, values, { html: false, random: seededRandom(recipient.id) })
  }
}

/** Where click `link` of the recipient's message leads: that link's web address, or undefined when there is none. */
export const clickTarget = (
  templates: MessageTemplates,
  recipient: Recipient,
  unsubscribeUrl: string,
  link: number
): string | undefined => {
  const address = templates.links[link]
  if (address === undefined) return undefined
  const target = renderTemplate(address, valuesOf(recipient, unsubscribeUrl), {
    html: false,
    random: seededRandom(`${recipient.id}:link`)
  }).trim()
  return /^https?:\/\//i.test(target) && URL.canParse(target) ? new URL(target).toString() : undefined
}
