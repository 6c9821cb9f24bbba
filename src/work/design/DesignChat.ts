import { type Context, Effect, Ref, Stream } from "effect"
import { InsufficientCredits } from "../../accounts/usage/Errors.ts"
import { readFileSync } from "node:fs"
import { afterFirstEvent, type AgentEvent, agentFailureMessage, runAgent } from "../../models/llm/Agent.ts"
import type { ContentPart, LlmMessage } from "../../models/llm/Llm.ts"
import type { SseEvent } from "../../models/gateway/Sse.ts"
import { DesignConfig } from "./DesignConfig.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import type { Refusal } from "../../platform/Refusal.ts"
import type { Payer } from "../../accounts/usage/Credits.ts"
import { type DesignTarget, designTools } from "./DesignTools.ts"

/**
 * The design chat shared by campaigns, templates and canvases: the agent
 * (src/models/llm/Agent.ts) with the design tools over the HTML it starts from,
 * billed per model call under the chat's feature, its events written as
 * server-sent events. Decisions in docs/design-chat.md.
 */

/** The prompts live in the project's `prompts/` folder (beside `sql/`), found the same from src/ and dist/. */
const prompt = (name: string) => readFileSync(new URL(`../../../prompts/design-chat/${name}.md`, import.meta.url), "utf8")

export const systemPrompt = prompt("system")
export const templatePrompt = prompt("template")
export const landingPagePrompt = prompt("landing-page")

/** A saved edit, as the `files_changed` event reports it: the new version and the saved document's fields. */
export interface SavedBody {
  readonly version: number
  readonly [field: string]: unknown
}

export interface DesignChat {
  readonly payer: Payer
  /** The feature the model calls are billed under. */
  readonly feature: string
  readonly system: string
  /** Earlier turns, then the user's message (with any images). */
  readonly messages: ReadonlyArray<LlmMessage>
  /** The HTML the agent starts from. */
  readonly html: string
  /** The body version before the chat's first edit. */
  readonly version: number
  readonly target: DesignTarget<SavedBody>
  /** Keeps the turn once the agent finished: the text of its answer. */
  readonly record?: ((answer: string) => Effect.Effect<void>) | undefined
}

/** An error the model reads: the API error's message. */
const messageOf = (error: { readonly error: string } | Refusal) => "refusal" in error ? error.message : error.error

/**
 * A save or change of the edited document as a tool runs it: with the
 * request's services, its failure the message the model reads, a save
 * answering the `files_changed` event.
 */
export const toolEffect = <R>(services: Context.Context<R>) => ({
  save: <E extends { readonly error: string } | Refusal>(
    effect: Effect.Effect<{ readonly bodyVersion: number; readonly bodyDocument: SavedBody["bodyDocument"] }, E, R>
  ): Effect.Effect<SavedBody, string> =>
    effect.pipe(
      Effect.map((saved) => ({ version: saved.bodyVersion, bodyDocument: saved.bodyDocument })),
      Effect.mapError(messageOf),
      Effect.provideContext(services)
    ),
  change: <E extends { readonly error: string } | Refusal>(effect: Effect.Effect<unknown, E, R>): Effect.Effect<void, string> =>
    effect.pipe(Effect.asVoid, Effect.mapError(messageOf), Effect.provideContext(services))
})

/** The conversation the model reads: earlier turns as text, then the new message with its images. */
export const conversation = (
  history: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: string }> | undefined,
  message: string,
  images: ReadonlyArray<ContentPart> = []
): ReadonlyArray<LlmMessage> => [
  ...(history ?? []).filter((turn) => turn.content !== "").map((turn): LlmMessage => ({
    role: turn.role,
    content: [{ type: "text", text: turn.content }]
  })),
  { role: "user", content: [...images, { type: "text", text: message }] }
]

/** Documents up to this many characters are shown to the model whole; larger ones it reads in parts. */
const inlineDocumentChars = 100_000

/** The system prompt with the document the chat starts from (or, when large, how to read it). */
const systemWithDocument = (system: string, html: string) =>
  html.length <= inlineDocumentChars
    ? `${system}\n\nThe HTML as the chat starts (read_document reads the current state):\n\n\`\`\`html\n${html}\n\`\`\``
    : `${system}\n\nThe HTML has ${html.length} characters: read the parts you need with read_document and a selector.`

const sse = (event: string, data: unknown): SseEvent => ({ event, data: JSON.stringify(data) })

/**
 * Opens the chat's event stream. Answers once the first event is there, so
 * that a refusal before any model output (no credits: 403) is still an HTTP
 * status; everything after it is reported in-band, ending with exactly one
 * `done` or `error`. The stream lives in the request's scope: a client that
 * leaves interrupts the model call and the tool loop.
 */
export const open = (chat: DesignChat) =>
  Effect.gen(function*() {
    const config = yield* DesignConfig
    const html = yield* Ref.make(chat.html)
    const version = yield* Ref.make(chat.version)
    const answer = yield* Ref.make("")
    const target: DesignTarget<SavedBody> = {
      ...chat.target,
      saveHtml: (next) => Effect.tap(chat.target.saveHtml(next), (saved) => Ref.set(version, saved.version))
    }
    const agent = runAgent({
      request: {
        model: config.model,
        system: systemWithDocument(chat.system, chat.html),
        messages: chat.messages
      },
      tools: designTools(target, html),
      maxRounds: config.maxRounds,
      maxMillis: config.timeoutMs,
      call: BilledLlm.rounds(chat.payer, chat.feature)
    })
    const events = yield* afterFirstEvent(agent, (error): error is InsufficientCredits => error instanceof InsufficientCredits)
    return events.pipe(
      Stream.mapEffect((event: AgentEvent<SavedBody>) => toSse(event, version, answer, chat.record)),
      Stream.flatMap((event) => event === undefined ? Stream.empty : Stream.make(event)),
      Stream.catch((error) => Stream.make(sse("error", { error: agentFailureMessage(error, "The design chat failed") })))
    )
  })

const toSse = (
  event: AgentEvent<SavedBody>,
  version: Ref.Ref<number>,
  answer: Ref.Ref<string>,
  record: DesignChat["record"]
) =>
  Effect.gen(function*(): Effect.fn.Return<SseEvent | undefined> {
    switch (event.type) {
      case "assistant":
        yield* Ref.update(answer, (text) => text === "" || event.text === "" ? text + event.text : `${text}\n\n${event.text}`)
        return undefined
      case "text":
        return sse("text", { delta: event.delta })
      case "tool_call":
        return sse("tool_call", { id: event.id, name: event.name, arguments: event.arguments })
      case "tool_result":
        return sse("tool_result", { id: event.id, name: event.name, result: event.result })
      case "tool_error":
        return sse("tool_result", { id: event.id, name: event.name, error: event.error })
      case "extra":
        return sse("files_changed", event.event)
      case "finished":
        if (record !== undefined) yield* record(yield* Ref.get(answer))
        return sse("done", { version: yield* Ref.get(version), usage: event.usage })
    }
  })
