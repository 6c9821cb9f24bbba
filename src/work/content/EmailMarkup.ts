import { Parser } from "htmlparser2"

/**
 * Reads an e-mail body, plain text or HTML, into what the content tools
 * analyse: the visible text and, separately, the markup's links, images and
 * styling. HTML goes through htmlparser2's streaming tokenizer (linear in
 * the input, no tree, no recursion), so huge or deeply nested markup costs
 * time in proportion to its length and memory in proportion to its depth.
 */

export interface Link {
  readonly href: string
  /** The link's visible text, whitespace collapsed. */
  readonly text: string
  /** Source range `[start, end)` from the link's first to its last piece of visible text (empty when it has none). */
  readonly textRange: readonly [number, number]
  /** Source range of the whole element, `<a …>` to `</a>` (the URL itself in plain text); `undefined` when it is never closed. */
  readonly elementRange: readonly [number, number] | undefined
}

export interface Image {
  readonly src: string
  /** `undefined` when the `alt` attribute is missing (an empty `alt` is a deliberate decorative image). */
  readonly alt: string | undefined
  /** Source offset just after the tag name (`<img|`), where an attribute can be inserted. */
  readonly attributesAt: number
}

export interface EmailMarkup {
  readonly isHtml: boolean
  /** What a reader sees: text outside scripts, styles, the head and hidden elements; blocks on their own lines. */
  readonly text: string
  /** Source ranges `[start, end)` of the visible text, in document order (the whole content for plain text). */
  readonly textRanges: ReadonlyArray<readonly [number, number]>
  readonly links: ReadonlyArray<Link>
  readonly images: ReadonlyArray<Image>
  /** `<font>` elements. */
  readonly fontTags: number
  /** Distinct text colours set in `style` or `<font color>`. */
  readonly colours: ReadonlySet<string>
  /** Elements setting a font size of 24px / 18pt / `<font size>` 5 or more. */
  readonly largeFonts: number
  /** Characters of text hidden from the reader (display:none, visibility:hidden, zero font size or opacity). */
  readonly hiddenCharacters: number
  /** Source ranges `[start, end)` of that hidden text. */
  readonly hiddenRanges: ReadonlyArray<readonly [number, number]>
  readonly elements: number
  /** Where reading stopped because elements nested deeper than `maxHtmlDepth`; `undefined` when it read everything. */
  readonly tooDeepAt: number | undefined
}

/**
 * htmlparser2 keeps its open elements in an array it shifts at the front, so
 * its cost grows with input × depth: reading stops beyond this depth (real
 * e-mails nest a few dozen levels) and the tools answer 400.
 */
export const maxHtmlDepth = 256

/** A cheap, linear sniff: does the content use common HTML elements? */
const htmlElement = /<\/?(?:html|head|body|div|p|br|a|table|tbody|span|img|h[1-6]|ul|ol|li|strong|b|i|em|u|font|td|tr|center|section|style|meta|!doctype)[\s/>]/i

export const looksLikeHtml = (content: string): boolean => htmlElement.test(content)

const invisibleElements = new Set(["script", "style", "head", "title", "noscript", "template", "xml"])
const blockElements = new Set([
  "address", "article", "aside", "blockquote", "br", "center", "dd", "div", "dl", "dt", "footer", "form", "h1", "h2", "h3",
  "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul"
])

const declarations = (style: string): Array<readonly [string, string]> =>
  style.split(";").flatMap((declaration) => {
    const colon = declaration.indexOf(":")
    return colon < 0 ? [] : [[declaration.slice(0, colon).trim().toLowerCase(), declaration.slice(colon + 1).trim().toLowerCase()] as const]
  })

const isLargeFontSize = (value: string): boolean => {
  const size = /^(\d+(?:\.\d+)?)(px|pt|em|rem)?/.exec(value)
  if (size === null) return /^(?:x+-large|larger)/.test(value)
  const amount = Number(size[1])
  switch (size[2]) {
    case "pt":
      return amount >= 18
    case "em":
    case "rem":
      return amount >= 1.5
    default:
      return amount >= 24
  }
}

const isHiddenStyle = (property: string, value: string): boolean =>
  (property === "display" && value.startsWith("none")) ||
  (property === "visibility" && value.startsWith("hidden")) ||
  (property === "font-size" && /^0(?:\.0*)?(?:px|pt|em|rem|%)?\b/.test(value)) ||
  (property === "opacity" && /^0(?:\.0*)?$/.test(value))

interface OpenElement {
  readonly name: string
  readonly nonRendered: boolean
  readonly hidden: boolean
  readonly link: LinkInProgress | undefined
}

interface LinkInProgress {
  readonly href: string
  readonly parts: Array<string>
  textRange: [number, number] | undefined
  readonly openedAt: number
  closedAt: number | undefined
}

const collapse = (text: string) => text.replace(/[ \t\f\v\r\u00a0]+/g, " ").replace(/ ?\n[\s]*/g, "\n").trim()

const plainText = (content: string): EmailMarkup => ({
  isHtml: false,
  text: content,
  textRanges: [[0, content.length]],
  links: [...content.matchAll(/\bhttps?:\/\/[^\s<>"')\]]+/gi)].map((match) => ({
    href: match[0],
    text: match[0],
    textRange: [match.index, match.index + match[0].length] as const,
    elementRange: [match.index, match.index + match[0].length] as const
  })),
  images: [],
  fontTags: 0,
  colours: new Set(),
  largeFonts: 0,
  hiddenCharacters: 0,
  hiddenRanges: [],
  elements: 0,
  tooDeepAt: undefined
})

/** Adds `[start, end)` to the ranges, merging it into the last range when they touch (entities split text events). */
const extendRanges = (ranges: Array<[number, number]>, start: number, end: number) => {
  const last = ranges[ranges.length - 1]
  if (last !== undefined && last[1] === start) last[1] = end
  else ranges.push([start, end])
}

export const readEmail = (content: string): EmailMarkup => {
  if (!looksLikeHtml(content)) return plainText(content)
  const text: Array<string> = []
  const textRanges: Array<[number, number]> = []
  const hiddenRanges: Array<[number, number]> = []
  const links: Array<LinkInProgress> = []
  const openLinks: Array<LinkInProgress> = []
  const images: Array<Image> = []
  const colours = new Set<string>()
  const open: Array<OpenElement> = []
  let nonRenderedDepth = 0
  let hiddenDepth = 0
  let fontTags = 0
  let largeFonts = 0
  let hiddenCharacters = 0
  let elements = 0
  let tooDeepAt: number | undefined
  const parser: Parser = new Parser({
    onopentag(name, attributes) {
      elements += 1
      if (open.length >= maxHtmlDepth && tooDeepAt === undefined) {
        tooDeepAt = parser.startIndex
        parser.pause()
      }
      const nonRendered = invisibleElements.has(name)
      let hidden = "hidden" in attributes
      for (const [property, value] of declarations(attributes.style ?? "")) {
        if (property === "color") colours.add(value.replace(/\s+/g, ""))
        if (property === "font-size" && isLargeFontSize(value)) largeFonts += 1
        if (isHiddenStyle(property, value)) hidden = true
      }
      if (name === "font") {
        fontTags += 1
        if (attributes.color !== undefined) colours.add(attributes.color.toLowerCase())
        if (Number(attributes.size ?? "0") >= 5 || attributes.size?.startsWith("+") === true) largeFonts += 1
      }
      if (name === "img") images.push({ src: attributes.src ?? "", alt: attributes.alt, attributesAt: parser.startIndex + 4 })
      if (blockElements.has(name)) text.push("\n")
      let link: LinkInProgress | undefined
      if (name === "a" && attributes.href !== undefined) {
        link = { href: attributes.href.trim(), parts: [], textRange: undefined, openedAt: parser.startIndex, closedAt: undefined }
        links.push(link)
        openLinks.push(link)
      }
      if (nonRendered) nonRenderedDepth += 1
      if (hidden) hiddenDepth += 1
      open.push({ name, nonRendered, hidden, link })
    },
    onclosetag() {
      const element = open.pop()
      if (element === undefined) return
      if (element.nonRendered) nonRenderedDepth -= 1
      if (element.hidden) hiddenDepth -= 1
      if (element.link !== undefined) {
        openLinks.pop()
        // An implied close (end of input, a parent closing) is no `</a>` in the source.
        if (/^<\/a\s*>$/i.test(content.slice(parser.startIndex, parser.endIndex + 1))) element.link.closedAt = parser.endIndex + 1
      }
      if (blockElements.has(element.name)) text.push("\n")
    },
    ontext(data) {
      if (nonRenderedDepth > 0) return
      if (hiddenDepth > 0) hiddenCharacters += data.trim().length
      else {
        text.push(data)
        const link = openLinks[openLinks.length - 1]
        if (link !== undefined) {
          link.parts.push(data)
          link.textRange = [link.textRange?.[0] ?? parser.startIndex, parser.endIndex + 1]
        }
      }
      extendRanges(hiddenDepth > 0 ? hiddenRanges : textRanges, parser.startIndex, parser.endIndex + 1)
    }
  }, { decodeEntities: true })
  parser.write(content)
  if (tooDeepAt === undefined) parser.end()
  return {
    isHtml: true,
    text: collapse(text.join("")),
    textRanges,
    links: links.map((link) => ({
      href: link.href,
      text: collapse(link.parts.join("")),
      textRange: link.textRange ?? [0, 0],
      elementRange: link.closedAt === undefined ? undefined : [link.openedAt, link.closedAt]
    })),
    images,
    fontTags,
    colours,
    largeFonts,
    hiddenCharacters,
    hiddenRanges,
    elements,
    tooDeepAt
  }
}

/** A URL's host, lowercased and without `www.`; `undefined` when it does not parse. */
export const hostOf = (url: string): string | undefined =>
  URL.canParse(url) ? new URL(url).hostname.toLowerCase().replace(/^www\./, "") : undefined

/** The host an anchor text names when it reads like a URL or a domain ("www.x.com", "https://x.com/y", "x.com"). */
export const namedHost = (text: string): string | undefined => {
  const candidate = text.trim()
  if (candidate.length > 200 || /\s/.test(candidate) || !/\.[a-z]{2,}(?:[/:?#]|$)/i.test(candidate)) return undefined
  return hostOf(/^[a-z][a-z0-9+.-]*:\/\//i.test(candidate) ? candidate : `http://${candidate}`)
}

/** Anchor text naming a site other than the one the link leads to: the host shown, and the real one. */
export const mismatchedHosts = (link: Link): { readonly shown: string; readonly real: string } | undefined => {
  const real = hostOf(link.href)
  const shown = namedHost(link.text)
  return real === undefined || shown === undefined || shown === real || real.endsWith(`.${shown}`) ? undefined : { shown, real }
}
