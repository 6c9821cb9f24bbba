import { Result } from "effect"
import { parse, type RandomSource, type SpintaxSyntaxError, type Template, walk } from "../../work/content/Spintax.ts"

/**
 * Personalisation: the one renderer campaigns and sequences call. It expands
 * spintax (one option per group, chosen by `random`) and replaces merge fields
 * in the same pass, so a value is inserted as data and never parsed as
 * spintax or merge syntax itself.
 *
 * - A field is looked up by its exact name, then ignoring case, spaces, `_` and `-`
 *   (`{{first_name}}` finds `firstName`).
 * - A missing field, `null`, `undefined` or empty string renders the fallback
 *   written in the template (`{{firstName | there}}`), else nothing, and the
 *   whitespace it leaves collapses (`Hi {{firstName}} there` → `Hi there`).
 * - Numbers and booleans render with `String(value)`.
 * - With `html: true` values are HTML-escaped (`& < > " '`), which is correct both
 *   in text and in quoted attribute values; the template's own text, fallbacks
 *   included, is the author's markup and is left untouched. With `html: false`
 *   values are inserted as they are.
 */

export type MergeValue = string | number | boolean | null | undefined
export type MergeValues = Readonly<Record<string, MergeValue>>

export interface RenderOptions {
  /** Escape inserted values for HTML. */
  readonly html: boolean
  /** Chooses spintax options; `seededRandom(...)` makes a recipient's variant reproducible. */
  readonly random: RandomSource
}

const htmlEntities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => htmlEntities[char]!)

const normalise = (name: string) => name.replace(/[\s_-]+/g, "").toLowerCase()

/** Finds a field's value by exact name, then by normalised name. */
const lookup = (values: MergeValues) => {
  const byNormalisedName = new Map<string, MergeValue>()
  for (const [key, value] of Object.entries(values)) {
    const normalised = normalise(key)
    if (!byNormalisedName.has(normalised)) byNormalisedName.set(normalised, value)
  }
  return (name: string): string | undefined => {
    const value = Object.hasOwn(values, name) ? values[name] : byNormalisedName.get(normalise(name))
    return value === null || value === undefined || value === "" ? undefined : String(value)
  }
}

/**
 * The text after an empty field, with the whitespace the field leaves
 * collapsed: a space on both sides becomes one, and a space before
 * punctuation goes (`Hi {{name}}, …` → `Hi, …`).
 */
const closeGap = (before: Array<string>, text: string): string => {
  let index = before.length - 1
  while (index >= 0 && before[index] === "") index--
  if (index < 0 || !/[ \t]$/.test(before[index])) return text
  if (/^[ \t]/.test(text)) return text.replace(/^[ \t]+/, "")
  if (/^[,.;:!?]/.test(text)) before[index] = before[index].replace(/[ \t]+$/, "")
  return text
}

/** Renders a parsed template for one recipient. */
export const renderTemplate = (template: Template, values: MergeValues, options: RenderOptions): string => {
  const valueOf = lookup(values)
  const escape = options.html ? escapeHtml : (text: string) => text
  const parts: Array<string> = []
  // After a field that rendered nothing, the text that follows must not leave a double space (`Hi  there`).
  let gap = false
  walk(template, options.random, (node) => {
    if (node._tag === "Text") {
      parts.push(gap ? closeGap(parts, node.text) : node.text)
      gap = false
    } else {
      const value = valueOf(node.name)
      const rendered = value === undefined ? node.fallback ?? "" : escape(value)
      parts.push(rendered)
      gap = gap || rendered === ""
    }
  })
  return parts.join("")
}

/** Parses and renders; fails with the position of malformed spintax or merge syntax. */
export const render = (
  source: string,
  values: MergeValues,
  options: RenderOptions
): Result.Result<string, SpintaxSyntaxError> =>
  Result.map(parse(source), (template) => renderTemplate(template, values, options))
