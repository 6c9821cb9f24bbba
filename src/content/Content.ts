import { Effect, Option, Schema } from "effect"
import { ContentRefused } from "./Errors.ts"
import { requireCompany } from "../auth/Authentication.ts"
import { Authorized } from "../auth/Policy.ts"
import type { SpamAnalysis, SpamCheckRequest, SpintaxRequest } from "./Api.ts"
import { askContentModel, decodeModelJson } from "./ContentModel.ts"
import { ContentPool } from "./ContentPool.ts"
import { maxAlternatives, type Variation } from "./SpintaxConverter.ts"

const Rewrite = Schema.Struct({ subject: Schema.optional(Schema.String), content: Schema.String })

const rewriteSystem =
  "You improve the deliverability of e-mails. Rewrite the e-mail so that it keeps its meaning, language, " +
  "merge fields ({{name}}), spintax ({{RANDOM | a | b}}), links and HTML structure, but fixes every issue listed. " +
  "Answer with only a JSON object {\"subject\": \"…\", \"content\": \"…\"}."

const rewritePrompt = (input: typeof SpamCheckRequest.Type, analysis: typeof SpamAnalysis.Type) =>
  [
    `Issues found (score ${analysis.overallScore}/100):`,
    ...analysis.metrics.flatMap((metric) => metric.issues.map((issue) => `- ${metric.name}: ${issue}`)),
    "",
    `Subject: ${input.subject ?? ""}`,
    "Content:",
    input.content
  ].join("\n")

/** The better of the model's rewrite (when there is a model) and the rules' rewrite, by the same analysis. */
const improve = (
  input: typeof SpamCheckRequest.Type,
  analysis: typeof SpamAnalysis.Type,
  rules: { readonly subject: string; readonly content: string; readonly score: number }
) =>
  Effect.gen(function*() {
    const answer = yield* askContentModel(rewriteSystem, rewritePrompt(input, analysis), 8_000)
    const model = Option.flatMap(answer, (text) => decodeModelJson(Rewrite, text))
    if (Option.isSome(model) && model.value.content.trim().length > 0) {
      const subject = model.value.subject ?? rules.subject
      const score = yield* (yield* ContentPool).run("scoreOf", {
        content: model.value.content,
        subject: input.subject === undefined ? undefined : subject
      })
      if (score > rules.score) return { subject, content: model.value.content }
    }
    return rules
  })

export const spamCheck = Effect.fn("Content.spamCheck")(function*(input: typeof SpamCheckRequest.Type) {
  yield* Authorized("content:use")
  yield* requireCompany(input.companyId)
  const checked = yield* (yield* ContentPool).run("checkSpam", { content: input.content, subject: input.subject })
  if ("error" in checked) return yield* new ContentRefused({ message: checked.error })
  const { analysis, rules } = checked
  if (rules === undefined) return analysis
  const improved = yield* improve(input, analysis, rules)
  return {
    ...analysis,
    ...(input.subject === undefined ? {} : { improvedSubject: improved.subject }),
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
