import { Effect, Option, Result, Schema } from "effect"
import { requireCompany } from "../auth/Authentication.ts"
import { Authorized } from "../auth/Policy.ts"
import { BadRequest } from "../platform/Errors.ts"
import type { SpamAnalysis, SpamCheckRequest, SpintaxRequest, SpintaxResult } from "./Api.ts"
import { askContentModel, decodeModelJson } from "./ContentModel.ts"
import { maxHtmlDepth, readEmail } from "./EmailMarkup.ts"
import { parse } from "./Spintax.ts"
import { type Converted, convert, maxAlternatives, type Variation, variantsOf } from "./SpintaxConverter.ts"
import { analyse } from "./SpamRules.ts"
import { improveContent, improveSubject } from "./SpamRewrite.ts"

/** Below this overall score the answer carries an improved subject and body. */
export const improveBelow = 70

const Rewrite = Schema.Struct({ subject: Schema.optional(Schema.String), content: Schema.String })

const rewriteSystem =
  "You improve the deliverability of e-mails. Rewrite the e-mail so that it keeps its meaning, language, " +
  "merge fields ({{name}}), spintax ({{RANDOM | a | b}}), links and HTML structure, but fixes every issue listed. " +
  "Answer with only a JSON object {\"subject\": \"…\", \"content\": \"…\"}."

const rewritePrompt = (input: typeof SpamCheckRequest.Type, analysis: ReturnType<typeof analyse>) =>
  [
    `Issues found (score ${analysis.overallScore}/100):`,
    ...analysis.metrics.flatMap((metric) => metric.issues.map((issue) => `- ${metric.name}: ${issue}`)),
    "",
    `Subject: ${input.subject ?? ""}`,
    "Content:",
    input.content
  ].join("\n")

/** The better of the model's rewrite (when there is a model) and the rules' rewrite, by the same analysis. */
const improve = (input: typeof SpamCheckRequest.Type, analysis: ReturnType<typeof analyse>) =>
  Effect.gen(function*() {
    const rules = { subject: improveSubject(input.subject ?? ""), content: improveContent(input.content) }
    const rulesScore = analyse(rules.content, input.subject === undefined ? undefined : rules.subject).overallScore
    const answer = yield* askContentModel(rewriteSystem, rewritePrompt(input, analysis), 8_000)
    const model = Option.flatMap(answer, (text) => decodeModelJson(Rewrite, text))
    if (Option.isSome(model) && model.value.content.trim().length > 0) {
      const subject = model.value.subject ?? rules.subject
      if (analyse(model.value.content, input.subject === undefined ? undefined : subject).overallScore > rulesScore) {
        return { subject, content: model.value.content }
      }
    }
    return rules
  })

/** 400 when HTML nests deeper than the reader follows (hostile markup; see `maxHtmlDepth`). */
const requireReadable = (content: string) => {
  const stoppedAt = readEmail(content).tooDeepAt
  return stoppedAt === undefined
    ? Effect.void
    : Effect.fail(new BadRequest({ error: `content: HTML elements nest deeper than ${maxHtmlDepth} levels (at character ${stoppedAt + 1})` }))
}

export const spamCheck = Effect.fn("Content.spamCheck")(function*(input: typeof SpamCheckRequest.Type) {
  yield* Authorized("content:use")
  yield* requireCompany(input.companyId)
  yield* requireReadable(input.content)
  const analysis = analyse(input.content, input.subject)
  if (analysis.overallScore >= improveBelow) return analysis satisfies typeof SpamAnalysis.Type
  const improved = yield* improve(input, analysis)
  return {
    ...analysis,
    ...(input.subject === undefined ? {} : { improvedSubject: improved.subject }),
    improvedContent: improved.content
  } satisfies typeof SpamAnalysis.Type
})

/** 400 naming the field and the position when existing spintax or merge syntax is malformed. */
const requireWellFormed = (field: string, text: string) =>
  Result.match(parse(text), {
    onSuccess: () => Effect.void,
    onFailure: (error) => Effect.fail(new BadRequest({ error: `Malformed spintax in ${field}: ${error.message}` }))
  })

const Proposals = Schema.Struct({
  variations: Schema.Array(Schema.Struct({ phrase: Schema.String, alternatives: Schema.Array(Schema.String) }))
})

/** Letters, spaces and light punctuation only: no braces, pipes, digits, markup, URLs or addresses. */
const plainWording = /^[\p{L}\p{M}][\p{L}\p{M}' ,.-]{0,79}$/u
const maxProposals = 50

/** A model's proposals, kept only where phrase and alternatives are plain wording that differs. */
export const validProposals = (proposals: typeof Proposals.Type): ReadonlyArray<Variation> =>
  proposals.variations.slice(0, maxProposals).flatMap(({ phrase, alternatives }) => {
    const original = phrase.trim()
    const kept = [...new Set(alternatives.map((alternative) => alternative.trim()))].filter((alternative) =>
      plainWording.test(alternative) && alternative.toLowerCase() !== original.toLowerCase()
    ).slice(0, maxAlternatives)
    return plainWording.test(original) && kept.length > 0 ? [{ phrase: original.toLowerCase(), alternatives: kept, kind: "model" }] : []
  })

const proposeSystem =
  "You write spintax for cold e-mails. Propose interchangeable wordings for greetings, openers, calls to action, " +
  "sign-offs and other phrases of the e-mail, each alternative keeping the meaning and grammar in context. Never " +
  "touch merge fields, links, e-mail addresses, numbers or prices. Answer with only a JSON object " +
  "{\"variations\": [{\"phrase\": \"exact phrase from the e-mail\", \"alternatives\": [\"…\", \"…\"]}]}."

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

const explanationOf = (body: Converted, subject: Converted | undefined, modelUsed: boolean) => {
  const bodyVariants = variantsOf(body.text)
  return [
    `Varied ${describe(body.applied)} in the content${subject === undefined ? "" : `, ${describe(subject.applied)} in the subject`}.`,
    `The content now has ${countOf(bodyVariants)} distinct variant${bodyVariants === 1 ? "" : "s"}` +
    (subject === undefined ? "." : `, the subject ${countOf(variantsOf(subject.text))}.`),
    modelUsed ? "Variations were proposed by a model and checked before use." : "Variations come from a curated list of e-mail phrases and WordNet synonyms.",
    "Merge fields, links, e-mail addresses, numbers, prices, HTML markup and existing spintax were left unchanged."
  ].join(" ")
}

export const spintax = Effect.fn("Content.spintax")(function*(input: typeof SpintaxRequest.Type) {
  yield* Authorized("content:use")
  yield* requireCompany(input.companyId)
  yield* requireReadable(input.content)
  yield* requireWellFormed("content", input.content)
  if (input.subject !== undefined) yield* requireWellFormed("subject", input.subject)
  const answer = yield* askContentModel(proposeSystem, `Subject: ${input.subject ?? ""}\n\n${input.content}`, 2_000)
  const proposed = Option.match(Option.flatMap(answer, (text) => decodeModelJson(Proposals, text)), {
    onNone: () => [],
    onSome: validProposals
  })
  const options = { aggressive: input.aggressive ?? false, proposed }
  const body = convert(input.content, options)
  const subject = input.subject === undefined ? undefined : convert(input.subject, options)
  return {
    content: body.text,
    subject: subject?.text ?? "",
    explanation: explanationOf(body, subject, [...body.applied, ...(subject?.applied ?? [])].some((variation) => variation.kind === "model"))
  } satisfies typeof SpintaxResult.Type
})
