import { Effect, Option, Schema } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { Llm, ModelCatalog, prompt, textOf } from "../llm/Llm.ts"
import { Credits, creditsForTokens } from "../usage/Credits.ts"

/**
 * The content tools' one model call and its bill (feature `content`). Only a
 * real provider counts: with the offline `local` models the tools use their
 * deterministic paths. Credits are checked before the call (403 when none
 * are left) and the real token counts are settled after it. A failed call
 * is logged and answers nothing, so the caller falls back to its rules.
 */

/** The tier the content tools ask for. */
export const contentModelTier = "balanced"

/** Content longer than this many characters is not sent to a model (cost and context bound). */
export const maxModelInputCharacters = 32_000

export const askContentModel = (system: string, text: string, maxTokens: number) =>
  Effect.gen(function*() {
    const model = (yield* ModelCatalog).resolve(contentModelTier)
    if (model === undefined || model.provider === "local" || text.length > maxModelInputCharacters) return Option.none<string>()
    const principal = yield* CurrentPrincipal
    const payer = { organizationId: principal.organizationId, companyId: principal.companyId, userId: principal.userId }
    yield* Credits.use((credits) => credits.ensureAvailable(payer))
    const answer = yield* Effect.option(Llm.use((llm) => llm.generate({ ...prompt(model.id, text, system), maxTokens })).pipe(
      Effect.tapError((error) => Effect.logWarning("Content model call failed; rules answer instead", { message: error.message }))
    ))
    if (Option.isNone(answer)) return Option.none<string>()
    const { usage } = answer.value
    yield* Credits.use((credits) =>
      credits.settle(payer, {
        feature: "content",
        model: answer.value.model,
        credits: creditsForTokens(usage.inputTokens + usage.outputTokens),
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens
      })
    )
    return Option.some(textOf(answer.value))
  })

/** The JSON object in a model's answer (it may wrap it in prose or a code fence), decoded with `schema`. */
export const decodeModelJson = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, answer: string) => {
  const start = answer.indexOf("{")
  const end = answer.lastIndexOf("}")
  return start < 0 || end < start
    ? Option.none<S["Type"]>()
    : Schema.decodeUnknownOption(Schema.fromJsonString(schema))(answer.slice(start, end + 1))
}
