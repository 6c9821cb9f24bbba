import { Result } from "effect"
import type { SpamAnalysis, SpintaxResult } from "./Api.ts"
import { maxHtmlDepth, readEmail } from "./EmailMarkup.ts"
import { analyse } from "./SpamRules.ts"
import { improveContent, improveSubject } from "./SpamRewrite.ts"
import { parse } from "./Spintax.ts"
import { type Converted, convert, type Variation, variantsOf } from "./SpintaxConverter.ts"

/**
 * The content tools' CPU work: reading, analysing and rewriting up to 500 KB
 * of e-mail takes a few hundred milliseconds, so it runs on the content
 * worker threads (`ContentPool`), never on the request thread. Each job takes
 * and returns plain data; a `{ error }` reply is a 400 for the caller.
 */

interface Email {
  readonly content: string
  readonly subject: string | undefined
}

/** A reason the content cannot be read, for a 400; `undefined` when it can. */
const unreadable = (content: string) => {
  const stoppedAt = readEmail(content).tooDeepAt
  return stoppedAt === undefined
    ? undefined
    : `content: HTML elements nest deeper than ${maxHtmlDepth} levels (at character ${stoppedAt + 1})`
}

/** A reason a field's existing spintax or merge syntax is malformed, naming the position; `undefined` when well formed. */
const malformed = (field: string, text: string) =>
  Result.match(parse(text), { onSuccess: () => undefined, onFailure: (error) => `Malformed spintax in ${field}: ${error.message}` })

/** The rules' analysis, and what SpamAssassin needs to read the same e-mail (its visible text as the plain-text part). */
const checkSpam = (email: Email):
  | { readonly error: string }
  | { readonly analysis: typeof SpamAnalysis.Type; readonly isHtml: boolean; readonly text: string } =>
{
  const error = unreadable(email.content)
  if (error !== undefined) return { error }
  const markup = readEmail(email.content)
  return { analysis: analyse(email.content, email.subject), isHtml: markup.isHtml, text: markup.text }
}

/** The rules' rewrite: risky links, trigger phrases and shouting out, an unsubscribe line in (`SpamRewrite`). */
const rewrite = (email: Email) => {
  const content = improveContent(email.content)
  return { subject: email.subject === undefined ? undefined : improveSubject(email.subject, content), content }
}

/** Why the spintax converter cannot take this e-mail, for a 400; `undefined` when it can. */
const checkSpintax = (email: Email) =>
  unreadable(email.content) ?? malformed("content", email.content) ??
    (email.subject === undefined ? undefined : malformed("subject", email.subject))

const describe = (applied: ReadonlyArray<Variation>) => {
  const phrases = applied.filter((variation) => variation.kind !== "word")
  const words = applied.filter((variation) => variation.kind === "word")
  const quoted = (variations: ReadonlyArray<Variation>) =>
    variations.slice(0, 6).map((variation) => `“${variation.phrase}”`).join(", ") + (variations.length > 6 ? "…" : "")
  return [
    phrases.length > 0 ? `${phrases.length} phrase${phrases.length === 1 ? "" : "s"} (${quoted(phrases)})` : undefined,
    words.length > 0 ? `${words.length} word${words.length === 1 ? "" : "s"} (${quoted(words)})` : undefined
  ].filter((part) => part !== undefined).join(" and ") || "nothing"
}

/** A variant count as a reader takes it: exact up to a quadrillion (products of many groups overflow to Infinity). */
const countOf = (variants: number) => (variants > 1e15 ? "more than a quadrillion" : String(variants))

const explanationOf = (body: Converted, subject: Converted | undefined) => {
  const bodyVariants = variantsOf(body.text)
  const modelUsed = [...body.applied, ...(subject?.applied ?? [])].some((variation) => variation.kind === "model")
  return [
    `Varied ${describe(body.applied)} in the content${subject === undefined ? "" : `, ${describe(subject.applied)} in the subject`}.`,
    `The content now has ${countOf(bodyVariants)} distinct variant${bodyVariants === 1 ? "" : "s"}` +
    (subject === undefined ? "." : `, the subject ${countOf(variantsOf(subject.text))}.`),
    modelUsed ? "Variations were proposed by a model and checked before use." : "Variations come from a curated list of e-mail phrases and WordNet synonyms.",
    "Merge fields, links, e-mail addresses, numbers, prices, HTML markup and existing spintax were left unchanged."
  ].join(" ")
}

/** The e-mail with spintax added, from the curated phrases and synonyms plus a model's checked proposals. */
const spintaxOf = (input: Email & { readonly aggressive: boolean; readonly proposed: ReadonlyArray<Variation> }): typeof SpintaxResult.Type => {
  const options = { aggressive: input.aggressive, proposed: input.proposed }
  const body = convert(input.content, options)
  const subject = input.subject === undefined ? undefined : convert(input.subject, options)
  return { content: body.text, subject: subject?.text ?? "", explanation: explanationOf(body, subject) }
}

const jobs = { checkSpam, rewrite, checkSpintax, spintaxOf }

export type ContentJobs = typeof jobs
export type ContentTool = keyof ContentJobs
export type ContentJob = { readonly [Tool in ContentTool]: { readonly tool: Tool; readonly input: Parameters<ContentJobs[Tool]>[0] } }[ContentTool]

/** Runs one job (on a content worker thread). */
export const runContentJob = (job: ContentJob): ReturnType<ContentJobs[ContentTool]> =>
  (jobs[job.tool] as (input: ContentJob["input"]) => ReturnType<ContentJobs[ContentTool]>)(job.input)
