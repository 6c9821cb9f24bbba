import { Result } from "effect"
import { parse, type RandomSource, type SpintaxSyntaxError, type Template, walk } from "../content/Spintax.ts"

/**
 * Personalisation: the one renderer campaigns and sequences call. It expands
 * spintax (one option per group, chosen by `random`) and replaces merge fields
 * in the same pass, so a value is inserted as data and never parsed as
 * spintax or merge syntax itself.
 *
 * - A field is looked up by its exact name, then ignoring case, spaces, `_` and `-`
 *   (`{{first_name}}` finds `firstName`).
 * - A missing field, `null`, `undefined` or empty string renders the fallback
 *   written in the template (`{{firstName | there}}`), else nothing.
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

/** Renders a parsed template for one recipient. */
export const renderTemplate = (template: Template, values: MergeValues, options: RenderOptions): string => {
  const valueOf = lookup(values)
  const escape = options.html ? escapeHtml : (text: string) => text
  const parts: Array<string> = []
  walk(template, options.random, (node) => {
    if (node._tag === "Text") parts.push(node.text)
    else {
      const value = valueOf(node.name)
      parts.push(value === undefined ? node.fallback ?? "" : escape(value))
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
