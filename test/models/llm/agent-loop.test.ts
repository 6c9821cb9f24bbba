import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Ref, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { AgentLimit, type AgentEvent, agentTool, runAgent } from "../../../src/models/llm/Agent.ts"
import type { LlmRequest, LlmStreamEvent } from "../../../src/models/llm/Llm.ts"

/**
 * The agent loop's bounds and tool handling with a fake model: a script of
 * rounds, each either text or tool calls, and the requests it was sent.
 */

type Round = { readonly text?: string; readonly calls?: ReadonlyArray<{ readonly name: string; readonly input: unknown }> }

const usage = { inputTokens: 10, outputTokens: 5, cachedTokens: 0 }

const eventsOf = (round: Round, index: number): Array<LlmStreamEvent> => [
  { type: "start", model: "fake" },
  ...(round.text === undefined ? [] : [{ type: "text_delta" as const, index: 0, text: round.text }]),
  ...(round.calls ?? []).flatMap((call, position): Array<LlmStreamEvent> => [
    { type: "tool_call_start", index: position + 1, id: `call_${index}_${position}`, name: call.name },
    { type: "tool_call_delta", index: position + 1, partialJson: JSON.stringify(call.input) }
  ]),
  { type: "finish", stopReason: round.calls === undefined ? "end_turn" : "tool_use", usage }
]

/** A model playing `rounds` in order (the last repeats), recording each request. */
const fakeModel = (rounds: ReadonlyArray<Round>) =>
  Effect.map(Ref.make<ReadonlyArray<LlmRequest>>([]), (requests) => ({
    requests: Ref.get(requests),
    call: (request: LlmRequest) =>
      Stream.unwrap(Effect.map(Ref.getAndUpdate(requests, (all) => [...all, request]), (before) =>
        Stream.fromIterable(eventsOf(rounds[Math.min(before.length, rounds.length - 1)]!, before.length))))
  }))

const echo = agentTool("echo", "Answers its text.", Schema.Struct({ text: Schema.String }), ({ text }) => Effect.succeed({ result: { echoed: text } }))
const broken = agentTool("broken", "Always fails.", Schema.Struct({}), () => Effect.fail("the disk is full"))
const huge = agentTool("huge", "Answers a lot.", Schema.Struct({}), () => Effect.succeed({ result: { text: "x".repeat(5_000) } }))

/** A tool that never answers and notes when it is interrupted. */
const hanging = (interrupted: Ref.Ref<boolean>) =>
  agentTool("hang", "Never answers.", Schema.Struct({}), () => Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true))))

const request = { model: "fake", messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "go" }] }] }

const collect = <E>(stream: Stream.Stream<AgentEvent<never>, E>) => Stream.runCollect(stream).pipe(Effect.map((chunk) => [...chunk]))

const toolResultText = (requests: ReadonlyArray<LlmRequest>, index: number) => {
  const part = requests[index]!.messages.at(-1)!.content[0]!
  return part.type === "tool_result" ? { text: (part.content[0] as { text: string }).text, isError: part.isError === true } : undefined
}

describe("the agent loop", () => {
  it.effect("runs the tools the model calls, gives their results back and ends with the usage of every round", () =>
    Effect.gen(function*() {
      const model = yield* fakeModel([{ text: "Let me see. ", calls: [{ name: "echo", input: { text: "hi" } }] }, { text: "Done." }])
      const events = yield* collect(runAgent({ request, tools: [echo], maxRounds: 4, maxMillis: 60_000, call: model.call }))
      expect(events.map((event) => event.type)).toEqual(["text", "assistant", "tool_call", "tool_result", "text", "assistant", "finished"])
      expect(events.at(-1)).toEqual({ type: "finished", usage: { inputTokens: 20, outputTokens: 10 } })
      const requests = yield* model.requests
      expect(requests[0]!.tools?.map((tool) => tool.name)).toEqual(["echo"])
      expect(toolResultText(requests, 1)).toEqual({ text: JSON.stringify({ echoed: "hi" }), isError: false })
    }))

  it.effect("shows a failing tool, an unknown tool and undecodable arguments to the model as tool errors", () =>
    Effect.gen(function*() {
      const model = yield* fakeModel([
        { calls: [{ name: "broken", input: {} }, { name: "missing", input: {} }, { name: "echo", input: { text: 3 } }] },
        { text: "Sorry." }
      ])
      const events = yield* collect(runAgent({ request, tools: [echo, broken], maxRounds: 4, maxMillis: 60_000, call: model.call }))
      expect(events.filter((event) => event.type === "tool_error").map((event) => event.type === "tool_error" && event.error)).toEqual([
        "the disk is full",
        "Unknown tool missing",
        expect.stringContaining("Invalid arguments for echo")
      ])
      const results = (yield* model.requests)[1]!.messages.at(-1)!.content
      expect(results.map((part) => part.type === "tool_result" && part.isError)).toEqual([true, true, true])
    }))

  it.effect("cuts a tool result to maxToolResultChars before the model reads it", () =>
    Effect.gen(function*() {
      const model = yield* fakeModel([{ calls: [{ name: "huge", input: {} }] }, { text: "ok" }])
      const events = yield* collect(runAgent({ request, tools: [huge], maxRounds: 4, maxMillis: 60_000, maxToolResultChars: 100, call: model.call }))
      const full = events.find((event) => event.type === "tool_result")
      expect(full?.type === "tool_result" && JSON.stringify(full.result).length).toBeGreaterThan(5_000)
      const read = toolResultText(yield* model.requests, 1)!.text
      expect(read.startsWith(JSON.stringify({ text: "x".repeat(5_000) }).slice(0, 100))).toBe(true)
      expect(read).toMatch(/\[truncated: 4911 of 5011 characters left out\]$/)
    }))

  it.effect("stops after maxRounds model calls when the model keeps calling tools", () =>
    Effect.gen(function*() {
      const model = yield* fakeModel([{ calls: [{ name: "echo", input: { text: "again" } }] }])
      const error = yield* collect(runAgent({ request, tools: [echo], maxRounds: 3, maxMillis: 60_000, call: model.call })).pipe(Effect.flip)
      expect(error).toEqual(new AgentLimit({ message: "Stopped after 3 tool rounds" }))
      expect(yield* model.requests).toHaveLength(3)
    }))

  it.effect("stops when the model's text passes maxOutputChars", () =>
    Effect.gen(function*() {
      const model = yield* fakeModel([{ text: "a".repeat(60), calls: [{ name: "echo", input: { text: "x" } }] }, { text: "b".repeat(60) }])
      const seen: Array<string> = []
      const error = yield* Stream.runForEach(
        runAgent({ request, tools: [echo], maxRounds: 5, maxMillis: 60_000, maxOutputChars: 100, call: model.call }),
        (event) => Effect.sync(() => seen.push(event.type))
      ).pipe(Effect.flip)
      expect(error).toEqual(new AgentLimit({ message: "Stopped after 100 characters of output" }))
      expect(seen).toEqual(["text", "assistant", "tool_call", "tool_result"])
    }))

  it.effect("stops at the wall-clock limit, interrupting a tool that hangs", () =>
    Effect.gen(function*() {
      const interrupted = yield* Ref.make(false)
      const hang = hanging(interrupted)
      const model = yield* fakeModel([{ calls: [{ name: "hang", input: {} }] }])
      const fiber = yield* collect(runAgent({ request, tools: [hang], maxRounds: 5, maxMillis: 30_000, call: model.call })).pipe(
        Effect.flip,
        Effect.forkChild
      )
      yield* TestClock.adjust("29 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toEqual(new AgentLimit({ message: "Stopped after the time limit of 30000 ms" }))
      expect(yield* Ref.get(interrupted)).toBe(true)
    }))

  it.effect("a consumer that stops reading (a client that left) interrupts the running tool", () =>
    Effect.gen(function*() {
      const interrupted = yield* Ref.make(false)
      const hang = hanging(interrupted)
      const model = yield* fakeModel([{ calls: [{ name: "hang", input: {} }] }])
      const fiber = yield* Stream.runDrain(runAgent({ request, tools: [hang], maxRounds: 5, maxMillis: 600_000, call: model.call })).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      expect(yield* Ref.get(interrupted)).toBe(true)
      expect(yield* model.requests).toHaveLength(1)
    }))
})
