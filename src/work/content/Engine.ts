import { Effect, Stream } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { toApiError } from "../../models/gateway/Gateway.ts"
import { type SseEvent, sseResponse } from "../../models/gateway/Sse.ts"
import { LlmError } from "../../models/llm/Llm.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"
import type { GenerateRequest, ResearchRequest } from "./Api.ts"
import { ContentResearch } from "./Research.ts"
import type { ContentKind } from "./Kinds.ts"
import { parseWriting, writeText } from "./Writing.ts"

/**
 * The content engine's endpoints: writing (the object, or its text streamed
 * as server-sent events) and research (docs/content.md).
 */

const sse = (event: string, data: unknown): SseEvent => ({ event, data: JSON.stringify(data) })

const apiErrorOf = <E>(error: E | LlmError) => (error instanceof LlmError ? toApiError(error) : error)

/** `text` per delta, then `done` with the parsed result; a failure mid-way ends it with `error`. */
const writingEvents = (kind: ContentKind, deltas: Stream.Stream<string, { readonly message: string }>): Stream.Stream<SseEvent> => {
  let text = ""
  return deltas.pipe(
    Stream.map((delta) => {
      text += delta
      return sse("text", { delta })
    }),
    Stream.concat(Stream.suspend(() => Stream.make(sse("done", parseWriting(kind, text))))),
    Stream.catch((error) => Stream.make(sse("error", { error: error.message })))
  )
}

export const generate = Effect.fnUntraced(function*(input: typeof GenerateRequest.Type) {
  yield* Authorized("content:use")
  const principal = yield* requireCompany(input.companyId)
  const request = { kind: input.kind, brief: input.brief, tone: input.tone, length: input.length ?? "medium" }
  const deltas = yield* Effect.mapError(writeText(principal.companyId, payerOf(principal), request), apiErrorOf)
  if (input.stream === true) return sseResponse(writingEvents(input.kind, deltas))
  const text = yield* Effect.mapError(Stream.mkString(deltas), apiErrorOf)
  return parseWriting(input.kind, text)
})

export const research = Effect.fnUntraced(function*(input: typeof ResearchRequest.Type) {
  yield* Authorized("content:use")
  const principal = yield* requireCompany(input.companyId)
  const researcher = yield* ContentResearch
  return yield* researcher.research(payerOf(principal), { query: input.query, maxSources: input.maxSources ?? 5 })
})
