import { Effect, Option, Schema } from "effect"
import { ContentRefused } from "./Errors.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import type { SpamAnalysis, SpamCheckRequest, SpintaxRequest } from "./Api.ts"
import { askContentModel, decodeModelJson } from "./ContentModel.ts"
import { ContentPool } from "./ContentPool.ts"
import { SpamAssassin } from "./SpamAssassin.ts"
import { hasSubject, withSpamAssassin } from "./SpamScore.ts"
import { maxAlternatives, type Variation } from "./SpintaxConverter.ts"

const Rewrite = Schema.Struct({ subject: Schema.optional(Schema.String), content: Schema.String })

const rewriteSystem =
  "You improve the deliverability of e-mails. Rewrite the e-mail in grammatical, plain sentences so that it keeps " +
  "its meaning, language, merge fields ({{name}}), spintax ({{RANDOM | a | b}}) and HTML structure, but fixes every " +
  "issue listed: no shouting, no hype or pressure, and no risky links (URL shorteners, raw IP addresses, link text " +
  "naming another site). Answer with only a JSON object {\"subject\": \"…\", \"content\": \"…\"}."

const rewritePrompt = (input: typeof SpamCheckRequest.Type, analysis: typeof SpamAnalysis.Type) =>
  [
    `Issues found (score ${analysis.overallScore}/100):`,
    ...analysis.metrics.flatMap((metric) => metric.issues.map((issue) => `- ${metric.name}: ${issue}`)),
    "",
    `Subject: ${input.subject ?? ""}`,
    "Content:",
    input.content
  ].join("\n")

/** Below this overall score the spam check answers with an improved subject and body. */
const improveBelow = 70

interface Email {
  readonly subject: string | undefined
  readonly content: string
}

/** The rules' analysis on a content worker, with SpamAssassin's report as one more metric when it is configured. */
const analyse = (email: Email) =>
  Effect.gen(function*() {
    const checked = yield* (yield* ContentPool).run("checkSpam", email)
    if ("error" in checked) return yield* new ContentRefused({ message: checked.error })
    const report = yield* (yield* SpamAssassin).check({ ...email, isHtml: checked.isHtml, text: checked.text })
    return Option.match(report, {
      onNone: () => checked.analysis,
      onSome: (found) => withSpamAssassin(checked.analysis, found, hasSubject(email.subject))
    })
  })

/**
 * The model's rewrite when there is a model and it scores higher than the
 * rules' rewrite, else the rules' rewrite; both scored by the same analysis.
 */
const improve = (input: typeof SpamCheckRequest.Type, analysis: typeof SpamAnalysis.Type) =>
  Effect.gen(function*() {
    const rules = yield* (yield* ContentPool).run("rewrite", { content: input.content, subject: input.subject })
    const answer = yield* askContentModel(rewriteSystem, rewritePrompt(input, analysis), 8_000)
    const model = Option.flatMap(answer, (text) => decodeModelJson(Rewrite, text))
    if (Option.isNone(model) || model.value.content.trim().length === 0) return rules
    const rewritten = { subject: input.subject === undefined ? undefined : model.value.subject ?? rules.subject, content: model.value.content }
    const [modelScore, rulesScore] = yield* Effect.all([analyse(rewritten), analyse(rules)], { concurrency: 2 })
    return modelScore.overallScore > rulesScore.overallScore ? rewritten : rules
  })

export const spamCheck = Effect.fn("Content.spamCheck")(function*(input: typeof SpamCheckRequest.Type) {
  yield* Authorized("content:use")
  yield* requireCompany(input.companyId)
  const analysis = yield* analyse({ content: input.content, subject: input.subject })
  if (analysis.overallScore >= improveBelow) return analysis
  const improved = yield* improve(input, analysis)
  return {
    ...analysis,
    ...(improved.subject === undefined ? {} : { improvedSubject: improved.subject }),
    improvedContent: improved.content
  } satisfies typeof SpamAnalysis.Type
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

export const spintax = Effect.fn("Content.spintax")(function*(input: typeof SpintaxRequest.Type) {
  yield* Authorized("content:use")
  yield* requireCompany(input.companyId)
  const pool = yield* ContentPool
  const email = { content: input.content, subject: input.subject }
  const unfit = yield* pool.run("checkSpintax", email)
  if (unfit !== undefined) return yield* new ContentRefused({ message: unfit })
  const answer = yield* askContentModel(proposeSystem, `Subject: ${input.subject ?? ""}\n\n${input.content}`, 2_000)
  const proposed = Option.match(Option.flatMap(answer, (text) => decodeModelJson(Proposals, text)), {
    onNone: () => [],
    onSome: validProposals
  })
  return yield* pool.run("spintaxOf", { ...email, aggressive: input.aggressive ?? false, proposed })
})
