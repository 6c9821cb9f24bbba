import { Effect, Option, Schema } from "effect"
import { CurrentPrincipal } from "../../auth/Principal.ts"
import { ModelCatalog, prompt, textOf } from "../../models/llm/Llm.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"

/**
 * The content tools' one model call and its bill (feature `content`), through
 * `BilledLlm`: the worst-case cost is held before the call (403 "Insufficient
 * credits" when it does not fit) and settled to the real tokens after. Only a
 * real provider counts: with the offline `local` models the tools use their
 * deterministic paths. A failed call is released, logged and answers
 * nothing, so the caller falls back to its rules.
 */

/** The tier the content tools ask for. */
export const contentModelTier = "balanced"

/** Content longer than this many characters is not sent to a model (cost and context bound). */
export const maxModelInputCharacters = 32_000

export const askContentModel = (system: string, text: string, maxTokens: number) =>
  Effect.gen(function*() {
    const model = (yield* ModelCatalog).resolve(contentModelTier)
    if (model === undefined || model.provider === "local" || text.length > maxModelInputCharacters) return Option.none<string>()
    const payer = payerOf(yield* CurrentPrincipal)
    return yield* BilledLlm.generate(payer, "content", { ...prompt(model.id, text, system), maxTokens }).pipe(
      Effect.map((response) => Option.some(textOf(response))),
      Effect.catchTag("LlmError", (error) =>
        Effect.as(Effect.logWarning("Content model call failed; rules answer instead", { message: error.message }), Option.none<string>()))
    )
  })

/** The JSON object in a model's answer (it may wrap it in prose or a code fence), decoded with `schema`. */
export const decodeModelJson = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, answer: string) => {
  const start = answer.indexOf("{")
  const end = answer.lastIndexOf("}")
  return start < 0 || end < start
    ? Option.none<S["Type"]>()
    : Schema.decodeUnknownOption(Schema.fromJsonString(schema))(answer.slice(start, end + 1))
}
