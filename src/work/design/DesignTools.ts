import { Effect, Ref, Result, Schema } from "effect"
import { type AgentTool, agentTool, type ToolSuccess } from "../../models/llm/Agent.ts"
import * as HtmlEdits from "./HtmlEdits.ts"

/**
 * The design chat's tools, declared once with Effect Schemas (the model
 * sees the JSON Schemas derived from them). Each edit works on the chat's
 * current HTML; a successful one is saved through `DesignTarget.saveHtml`
 * and followed by the target's `files_changed` event.
 */

/** What the chat edits: a campaign, a template or a canvas, saved through their own services. */
export interface DesignTarget<Saved> {
  /** Saves the HTML as the new body; answers the event announcing it (a failure is the tool's error). */
  readonly saveHtml: (html: string) => Effect.Effect<Saved, string>
  /** An e-mail's subject: given, the chat also has the e-mail tools (`set_subject`, `set_preheader`). */
  readonly setSubject?: ((subject: string) => Effect.Effect<void, string>) | undefined
  /** The most characters a body may have. */
  readonly maxHtmlChars: number
}

/** The most HTML one read answers: more would cost more tokens than any edit needs. */
const maxReadChars = 100_000

const Selector = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1_000)).annotate({
  description: "A CSS selector (e.g. `h1`, `table.header td`, `a[href*=\"pricing\"]`); the edit applies to every element it matches"
})
const htmlOf = (description: string) => Schema.String.check(Schema.isMaxLength(200_000)).annotate({ description })
const EmailHtml = htmlOf("Well-formed, e-mail-safe HTML (tables, inline styles); every element closed")
const PageHtml = htmlOf("Well-formed HTML; every element closed")

const AttributeName = Schema.String.check(Schema.isPattern(/^[a-zA-Z_:][-a-zA-Z0-9_:.]{0,99}$/)).pipe(
  Schema.check(Schema.makeFilter((name: string) => !/^on/i.test(name) || "event-handler attributes (on…) are refused"))
).annotate({ description: "An HTML attribute name; event handlers (on…) are refused" })

export const designTools = <Saved>(target: DesignTarget<Saved>, html: Ref.Ref<string>): ReadonlyArray<AgentTool<Saved, never>> => {
  const setSubject = target.setSubject
  const Html = setSubject === undefined ? PageHtml : EmailHtml
  const document = setSubject === undefined ? "page" : "e-mail"
  /** Applies an edit to the current HTML and saves it; the model reads how many elements matched. */
  const saveEdit = (edit: (current: string) => Result.Result<{ readonly html: string; readonly matched: number }, string>) =>
    Effect.gen(function*() {
      const edited = edit(yield* Ref.get(html))
      if (Result.isFailure(edited)) return yield* Effect.fail(edited.failure)
      if (edited.success.html.length > target.maxHtmlChars) {
        return yield* Effect.fail(`The result would be ${edited.success.html.length} characters; the most a body may have is ${target.maxHtmlChars}`)
      }
      const saved = yield* target.saveHtml(edited.success.html)
      yield* Ref.set(html, edited.success.html)
      const success: ToolSuccess<Saved> = { result: { ok: true, matched: edited.success.matched }, events: [saved] }
      return success
    })

  const emailTools = setSubject === undefined ? [] : [
    agentTool(
      "set_subject",
      "Sets the e-mail's subject line.",
      Schema.Struct({ subject: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(998)) }),
      (input) => Effect.as(setSubject(input.subject), { result: { ok: true, subject: input.subject } })
    ),
    agentTool(
      "set_preheader",
      "Sets the preheader: the preview text inboxes show after the subject (kept in a hidden element at the start of the body).",
      Schema.Struct({ preheader: Schema.String.check(Schema.isMaxLength(500)) }),
      (input) => saveEdit((current) => HtmlEdits.setPreheader(current, input.preheader))
    )
  ]

  return [
    agentTool(
      "read_document",
      `Reads the ${document}'s current HTML, or only the elements a CSS selector matches (their outer HTML).`,
      Schema.Struct({ selector: Schema.optional(Selector) }),
      ({ selector }) =>
        Effect.flatMap(Ref.get(html), (current) =>
          Result.match(HtmlEdits.read(current, selector), {
            onFailure: Effect.fail,
            onSuccess: (found): Effect.Effect<ToolSuccess<Saved>> =>
              Effect.succeed({
                result: found.length <= maxReadChars
                  ? { html: found }
                  : { html: found.slice(0, maxReadChars), truncated: `${found.length} characters; read a narrower selector for the rest` }
              })
          }))
    ),
    agentTool(
      "replace_html",
      "Replaces each matched element (the element itself, not only its content) with new HTML.",
      Schema.Struct({ selector: Selector, html: Html }),
      (input) => saveEdit((current) => HtmlEdits.replaceHtml(current, input.selector, input.html))
    ),
    agentTool(
      "set_text",
      "Sets the text of each matched element, replacing its content (plain text; merge fields and spintax are kept as written).",
      Schema.Struct({ selector: Selector, text: Schema.String.check(Schema.isMaxLength(20_000)) }),
      (input) => saveEdit((current) => HtmlEdits.setText(current, input.selector, input.text))
    ),
    agentTool(
      "set_attribute",
      "Sets an attribute (href, src, alt, style, width…) on each matched element.",
      Schema.Struct({ selector: Selector, name: AttributeName, value: Schema.String.check(Schema.isMaxLength(20_000)) }),
      (input) => saveEdit((current) => HtmlEdits.setAttribute(current, input.selector, input.name, input.value))
    ),
    agentTool(
      "remove_attribute",
      "Removes an attribute from each matched element.",
      Schema.Struct({ selector: Selector, name: AttributeName }),
      (input) => saveEdit((current) => HtmlEdits.removeAttribute(current, input.selector, input.name))
    ),
    agentTool(
      "insert_html",
      "Inserts HTML before or after each matched element, or inside it at its start or end.",
      Schema.Struct({ selector: Selector, position: Schema.Literals(["before", "after", "start", "end"]), html: Html }),
      (input) => saveEdit((current) => HtmlEdits.insertHtml(current, input.selector, input.position, input.html))
    ),
    agentTool(
      "remove_element",
      "Removes each matched element with its content.",
      Schema.Struct({ selector: Selector }),
      (input) => saveEdit((current) => HtmlEdits.removeElement(current, input.selector))
    ),
    ...emailTools
  ]
}
