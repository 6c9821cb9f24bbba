import { selectAll } from "css-select"
import { type AnyNode, type Document, type Element, Text } from "domhandler"
import { DomUtils, parseDocument, Parser } from "htmlparser2"
import { Result } from "effect"

/**
 * The design chat's edits of an e-mail's HTML: parsed with htmlparser2 (the
 * parser the content tools and the campaign messages use), elements found
 * with css-select, the result serialised from the tree — so an edit either
 * applies to every element its selector matches or fails with a message the
 * model reads and can act on; it never leaves a broken document.
 */

export type EditFailure = string

/** Where `insert` puts new HTML, relative to each matched element. */
export type InsertPosition = "before" | "after" | "start" | "end"

const parse = (html: string): Document => parseDocument(html, { decodeEntities: false })

const render = (nodes: AnyNode | ArrayLike<AnyNode>) => DomUtils.getOuterHTML(nodes, { decodeEntities: false, encodeEntities: false })

/** The elements `selector` matches; a selector that does not parse or matches nothing is a failure naming it. */
const matching = (document: Document, selector: string): Result.Result<ReadonlyArray<Element>, EditFailure> => {
  const found = Result.try({
    try: () => selectAll<AnyNode, Element>(selector, document),
    catch: (error) => `Invalid CSS selector "${selector}": ${error instanceof Error ? error.message : String(error)}`
  })
  return Result.flatMap(found, (elements) =>
    elements.length === 0
      ? Result.fail(`No element matches "${selector}"; read the document to find the right selector`)
      : Result.succeed(elements))
}

/** HTML void elements: they have no end tag. */
const voidElements = new Set([
  "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"
])

/**
 * A fragment the model writes must be well-formed: every element it opens
 * (void elements aside) is closed by its own end tag. The parser reports the
 * elements it had to close itself (implied end tags).
 */
const checkWellFormed = (html: string): Result.Result<string, EditFailure> => {
  const unclosed: Array<string> = []
  const parser = new Parser({
    onclosetag: (name, isImplied) => {
      if (isImplied && !voidElements.has(name)) unclosed.push(`<${name}>`)
    }
  }, { decodeEntities: false, recognizeSelfClosing: true })
  parser.end(html)
  return unclosed.length > 0
    ? Result.fail(`The HTML is not well-formed: ${unclosed.slice(0, 3).join(", ")} not closed`)
    : Result.succeed(html)
}

/** Applies `change` to every element `selector` matches; answers the new HTML and how many matched. */
const edit = (html: string, selector: string, change: (element: Element) => void) =>
  Result.map(
    Result.flatMap(Result.succeed(parse(html)), (document) =>
      Result.map(matching(document, selector), (elements) => ({ document, elements }))),
    ({ document, elements }) => {
      elements.forEach(change)
      return { html: render(document), matched: elements.length }
    }
  )

/** Parsed nodes of a checked fragment, fresh for each place they go. */
const fragment = (html: string) => () => [...parse(html).children]

/** The outer HTML of what `selector` matches, or the whole document. */
export const read = (html: string, selector: string | undefined) =>
  selector === undefined
    ? Result.succeed(html)
    : Result.map(matching(parse(html), selector), (elements) => elements.map((element) => render(element)).join("\n"))

export const replaceHtml = (html: string, selector: string, replacement: string) =>
  Result.flatMap(checkWellFormed(replacement), (checked) => {
    const nodes = fragment(checked)
    return edit(html, selector, (element) => {
      for (const node of nodes()) DomUtils.prepend(element, node)
      DomUtils.removeElement(element)
    })
  })

export const setText = (html: string, selector: string, text: string) =>
  edit(html, selector, (element) => {
    for (const child of [...element.children]) DomUtils.removeElement(child)
    DomUtils.appendChild(element, new Text(escapeText(text)))
  })

export const setAttribute = (html: string, selector: string, name: string, value: string) =>
  edit(html, selector, (element) => {
    element.attribs[name] = escapeAttribute(value)
  })

export const removeAttribute = (html: string, selector: string, name: string) =>
  edit(html, selector, (element) => {
    delete element.attribs[name]
  })

export const insertHtml = (html: string, selector: string, position: InsertPosition, inserted: string) =>
  Result.flatMap(checkWellFormed(inserted), (checked) => {
    const nodes = fragment(checked)
    return edit(html, selector, (element) => {
      const fresh = nodes()
      switch (position) {
        case "before":
          for (const node of fresh) DomUtils.prepend(element, node)
          break
        case "after":
          for (const node of fresh.reverse()) DomUtils.append(element, node)
          break
        case "start":
          for (const node of fresh.reverse()) DomUtils.prependChild(element, node)
          break
        case "end":
          for (const node of fresh) DomUtils.appendChild(element, node)
      }
    })
  })

export const removeElement = (html: string, selector: string) => edit(html, selector, DomUtils.removeElement)

/** The marker of the hidden preheader element the chat keeps at the start of the body. */
export const preheaderSelector = "[data-preheader]"

const preheaderHtml = (text: string) =>
  `<div data-preheader style="display:none;max-height:0;overflow:hidden;mso-hide:all">${escapeText(text)}</div>`

/**
 * Sets the preheader (the preview text inboxes show after the subject): the
 * text of the hidden `[data-preheader]` element, created at the start of the
 * body (or of the document) when there is none.
 */
export const setPreheader = (html: string, text: string) => {
  const document = parse(html)
  if (selectAll<AnyNode, Element>(preheaderSelector, document).length > 0) return setText(html, preheaderSelector, text)
  const body = selectAll<AnyNode, Element>("body", document)[0]
  const nodes = fragment(preheaderHtml(text))()
  for (const node of nodes.reverse()) {
    if (body === undefined) DomUtils.prependChild(document, node)
    else DomUtils.prependChild(body, node)
  }
  return Result.succeed({ html: render(document), matched: 1 })
}

const escapeText = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

const escapeAttribute = (value: string) => value.replaceAll("&", "&amp;").replaceAll("\"", "&quot;")
