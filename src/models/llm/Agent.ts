import { Data, Effect, Option, Queue, Result, Schema, Sink, Stream } from "effect"
import { isRefusal } from "../../platform/Refusal.ts"
import { type ContentPart, LlmError, type LlmMessage, type LlmRequest, type LlmStreamEvent, type TokenUsage, type ToolDefinition } from "./Llm.ts"

/**
 * The one tool-using agent loop of the platform (design chats, agents,
 * employees, scheduled tasks): it streams the model's answer, runs the tools
 * the model calls, gives it their results and repeats until the model
 * answers without a tool call. Bounded in model calls (`maxRounds`), wall
 * time (`maxMillis`) and generated text (`maxOutputChars`); each tool result
 * reaches the model cut to `maxToolResultChars`. The caller decides how a
 * round is called (billed through `Credits`, which model) and what extra
 * events its tools emit.
 */

/** What a tool did: a result the model reads, plus the caller's own events (e.g. a saved version). */
export interface ToolSuccess<Extra> {
  readonly result: unknown
  readonly events?: ReadonlyArray<Extra> | undefined
}

/** A tool typed by an Effect Schema: the model sees its JSON Schema; arguments that do not decode are a tool error. */
export interface AgentTool<Extra, R> {
  readonly definition: ToolDefinition
  readonly run: (input: unknown) => Effect.Effect<ToolSuccess<Extra>, string, R>
}

/** Declares a tool once: its input Schema gives both the JSON Schema the model sees and the decoding of its calls. */
export const agentTool = <S extends Schema.Codec<any, any, never, never>, R, Extra = never>(
  name: string,
  description: string,
  input: S,
  run: (input: S["Type"]) => Effect.Effect<ToolSuccess<Extra>, string, R>
): AgentTool<Extra, R> => ({
  definition: {
    name,
    description,
    inputSchema: { ...Schema.toJsonSchemaDocument(input).schema, additionalProperties: false }
  },
  run: (raw) =>
    Schema.decodeUnknownEffect(input)(raw).pipe(
      Effect.mapError((error) => `Invalid arguments for ${name}: ${error.message}`),
      Effect.flatMap(run)
    )
})

export type AgentEvent<Extra> =
  | { readonly type: "text"; readonly delta: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly arguments: unknown }
  | { readonly type: "tool_result"; readonly id: string; readonly name: string; readonly result: unknown }
  | { readonly type: "tool_error"; readonly id: string; readonly name: string; readonly error: string }
  | { readonly type: "extra"; readonly event: Extra }
  /** A round's answer as the model gave it, once its stream ended: its text and the tools it called. */
  | {
    readonly type: "assistant"
    readonly text: string
    readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: unknown }>
  }
  | { readonly type: "finished"; readonly usage: Pick<TokenUsage, "inputTokens" | "outputTokens"> }

/** The agent stopped before the model was done. */
export class AgentLimit extends Data.TaggedError("AgentLimit")<{ readonly message: string }> {}

export interface AgentOptions<Extra, E, R> {
  /** The first request: model, system prompt and the conversation so far (ending with the user's turn). */
  readonly request: LlmRequest
  readonly tools: ReadonlyArray<AgentTool<Extra, R>>
  /** Model calls at most; a model still calling tools after the last one ends the run with `AgentLimit`. */
  readonly maxRounds: number
  /** The run's wall-clock limit: past it the run ends with `AgentLimit`, whatever it was doing. */
  readonly maxMillis: number
  /** Text the model may generate over all rounds; more ends the run with `AgentLimit`. */
  readonly maxOutputChars?: number | undefined
  /** The most characters of one tool result the model reads (default `defaultToolResultChars`); the rest is cut with a note. */
  readonly maxToolResultChars?: number | undefined
  /** How one round calls the model (billing, routing). */
  readonly call: (request: LlmRequest) => Stream.Stream<LlmStreamEvent, E, R>
}

/** What one tool result may put in front of the model by default: about 5,000 tokens. */
export const defaultToolResultChars = 20_000

/** `text` cut to `max` characters, saying how much was left out, so the model knows it read a part. */
export const capToolResult = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}\n[truncated: ${text.length - max} of ${text.length} characters left out]`

interface PendingCall {
  readonly id: string
  readonly name: string
  json: string
}

/** One model call's answer, assembled from its stream while its text is passed on. */
const round = <Extra, E, R>(
  options: AgentOptions<Extra, E, R>,
  request: LlmRequest,
  emit: (event: AgentEvent<Extra>) => Effect.Effect<void>,
  output: { chars: number }
) =>
  Effect.gen(function*() {
    const maxOutput = options.maxOutputChars ?? Number.POSITIVE_INFINITY
    let text = ""
    const calls = new Map<number, PendingCall>()
    let usage: Pick<TokenUsage, "inputTokens" | "outputTokens"> = { inputTokens: 0, outputTokens: 0 }
    yield* Stream.runForEach(options.call(request), (event) => {
      switch (event.type) {
        case "text_delta":
          if ((event.choice ?? 0) !== 0) return Effect.void
          text += event.text
          output.chars += event.text.length
          return output.chars > maxOutput
            ? Effect.fail(new AgentLimit({ message: `Stopped after ${maxOutput} characters of output` }))
            : emit({ type: "text", delta: event.text })
        case "tool_call_start":
          calls.set(event.index, { id: event.id, name: event.name, json: "" })
          return Effect.void
        case "tool_call_delta": {
          const call = calls.get(event.index)
          if (call !== undefined) call.json += event.partialJson
          return Effect.void
        }
        case "finish":
          usage = { inputTokens: event.usage.inputTokens, outputTokens: event.usage.outputTokens }
          return Effect.void
        default:
          return Effect.void
      }
    })
    return { text, calls: [...calls.values()], usage }
  })

/** A call's arguments as sent; text that is not JSON is passed on as text, for the tool's decoding to refuse. */
const parseArguments = (json: string): unknown =>
  json.trim() === "" ? {} : Result.getOrElse(Result.try({ try: () => JSON.parse(json), catch: () => json }), () => json)

/** Runs one tool call, answering the `tool_result` part the model reads next. */
const runTool = <Extra, R>(
  tools: ReadonlyArray<AgentTool<Extra, R>>,
  call: PendingCall,
  emit: (event: AgentEvent<Extra>) => Effect.Effect<void>,
  maxChars: number
) =>
  Effect.gen(function*() {
    const input = parseArguments(call.json)
    yield* emit({ type: "tool_call", id: call.id, name: call.name, arguments: input })
    const tool = tools.find((candidate) => candidate.definition.name === call.name)
    const outcome = yield* Effect.result(
      tool === undefined ? Effect.fail(`Unknown tool ${call.name}`) : tool.run(input)
    )
    if (outcome._tag === "Failure") {
      yield* emit({ type: "tool_error", id: call.id, name: call.name, error: outcome.failure })
      const part: ContentPart = {
        type: "tool_result",
        toolCallId: call.id,
        content: [{ type: "text", text: capToolResult(outcome.failure, maxChars) }],
        isError: true
      }
      return part
    }
    yield* emit({ type: "tool_result", id: call.id, name: call.name, result: outcome.success.result })
    for (const event of outcome.success.events ?? []) yield* emit({ type: "extra", event })
    const part: ContentPart = {
      type: "tool_result",
      toolCallId: call.id,
      content: [{ type: "text", text: capToolResult(JSON.stringify(outcome.success.result) ?? "null", maxChars) }]
    }
    return part
  })

/** The loop without the time limit. */
const loop = <Extra, E, R>(options: AgentOptions<Extra, E, R>): Stream.Stream<AgentEvent<Extra>, E | AgentLimit, R> =>
  Stream.callback<AgentEvent<Extra>, E | AgentLimit, R>((queue) => {
    const emit = (event: AgentEvent<Extra>) => Effect.asVoid(Queue.offer(queue, event))
    return Effect.gen(function*() {
      let messages: ReadonlyArray<LlmMessage> = options.request.messages
      const total = { inputTokens: 0, outputTokens: 0 }
      const output = { chars: 0 }
      const maxResultChars = options.maxToolResultChars ?? defaultToolResultChars
      const tools = options.tools.map((tool) => tool.definition)
      for (let rounds = 1; ; rounds++) {
        const answer = yield* round(options, { ...options.request, messages, tools }, emit, output)
        total.inputTokens += answer.usage.inputTokens
        total.outputTokens += answer.usage.outputTokens
        const toolCalls = answer.calls.map((call) => ({ id: call.id, name: call.name, arguments: parseArguments(call.json) }))
        yield* emit({ type: "assistant", text: answer.text, toolCalls })
        if (answer.calls.length === 0) break
        if (rounds >= options.maxRounds) {
          return yield* new AgentLimit({ message: `Stopped after ${options.maxRounds} tool rounds` })
        }
        const assistant: Array<ContentPart> = answer.text === "" ? [] : [{ type: "text", text: answer.text }]
        for (const call of toolCalls) assistant.push({ type: "tool_call", id: call.id, name: call.name, input: call.arguments })
        const results: Array<ContentPart> = []
        for (const call of answer.calls) results.push(yield* runTool(options.tools, call, emit, maxResultChars))
        messages = [...messages, { role: "assistant", content: assistant }, { role: "user", content: results }]
      }
      yield* emit({ type: "finished", usage: total })
      yield* Queue.end(queue)
    })
  })

/**
 * The agent's events as they happen: text deltas, each round's `assistant`
 * answer, each tool call and its result (with the tool's own events right
 * after), and `finished` with the tokens of every round. Interrupting the
 * stream (a client that left) or passing `maxMillis` stops the model call
 * and the tool loop at once.
 */
export const runAgent = <Extra, E, R>(options: AgentOptions<Extra, E, R>): Stream.Stream<AgentEvent<Extra>, E | AgentLimit, R> =>
  Stream.merge(
    loop(options),
    Stream.fromEffect(
      Effect.andThen(
        Effect.sleep(options.maxMillis),
        Effect.fail(new AgentLimit({ message: `Stopped after the time limit of ${options.maxMillis} ms` }))
      )
    ),
    { haltStrategy: "left" }
  )

/**
 * `events` once their first one is there, so that a refusal before any
 * model output (`isRefusal`: no credits) fails here — still an HTTP status —
 * while every later failure stays in the stream, for the caller to report
 * in-band. Needs the request's scope: a client that leaves interrupts it.
 */
export const afterFirstEvent = <A, E, R, Refused extends E>(
  events: Stream.Stream<A, E, R>,
  isRefusal: (error: E) => error is Refused
) =>
  Effect.gen(function*() {
    const [first, rest] = yield* Stream.peel(events, Sink.head()).pipe(
      Effect.catch((error) =>
        isRefusal(error)
          ? Effect.fail(error)
          : Effect.succeed([Option.none<A>(), Stream.fail(error) as Stream.Stream<A, E>] as const)
      )
    )
    return Option.match(first, { onNone: () => rest, onSome: (event) => Stream.concat(Stream.make(event), rest) })
  })

/** What a failed run tells its client: the limit, the model failure or the refusal (no credits), an API error's `{error}`, else `fallback`. */
export const agentFailureMessage = (error: unknown, fallback: string): string =>
  error instanceof AgentLimit || error instanceof LlmError || isRefusal(error)
    ? error.message
    : typeof error === "object" && error !== null && "error" in error && typeof error.error === "string"
    ? error.error
    : fallback
