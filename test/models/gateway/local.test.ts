import { expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import OpenAI from "openai"
import * as Admin from "../../../src/accounts/admin/Admin.ts"
import { Llm, ModelCatalog, prompt, textOf } from "../../../src/models/llm/Llm.ts"
import { LlmLive } from "../../../src/models/llm/LlmLive.ts"
import { loopbackServer, sdkClients, serverUrl } from "../../support/LoopbackServer.ts"
import { pgliteStorage, testConfig } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

const weather = {
  name: "get_weather",
  description: "Current weather of a city",
  inputSchema: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city"] }
}

it.layer(LlmLive.pipe(Layer.provide(testConfig())))("the local provider, without any upstream", (it) => {
  it.effect("serves one model per tier and routes client model names by tier", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const { models } = yield* ModelCatalog
      expect(models.map((model) => [model.id, model.tier])).toEqual([
        ["local-highest", "highest"],
        ["local-balanced", "balanced"],
        ["local-fastest", "fastest"],
        ["local-embedding", undefined]
      ])
      const haiku = yield* llm.generate(prompt("claude-3-5-haiku-20241022", "hi"))
      expect(haiku.model).toBe("local-fastest")
      const opus = yield* llm.generate(prompt("claude-opus-4-1", "hi"))
      expect(opus.model).toBe("local-highest")
      const unknown = yield* Effect.flip(llm.generate(prompt("gpt-unknown", "hi")))
      expect(unknown).toMatchObject({ kind: "invalid_request" })
      expect(unknown.message).toContain("gpt-unknown")
    }))

  it.effect("answers deterministically and bills real token counts", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const first = yield* llm.generate(prompt("local-balanced", "Hello there"))
      const second = yield* llm.generate(prompt("local-balanced", "Hello there"))
      expect(textOf(first)).toBe(textOf(second))
      expect(textOf(first)).toContain("Hello there")
      expect(first.stopReason).toBe("end_turn")
      expect(first.usage.inputTokens).toBeGreaterThan(2)
      expect(first.usage.outputTokens).toBeGreaterThan(5)
    }))

  it.effect("honours stop sequences and max tokens", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const stopped = yield* llm.generate({ ...prompt("local-fastest", "Hello"), stop: ["demo"] })
      expect(stopped.stopReason).toBe("stop_sequence")
      expect(stopped.stopSequence).toBe("demo")
      expect(textOf(stopped)).not.toContain("demo")
      const cut = yield* llm.generate({ ...prompt("local-fastest", "Hello"), maxTokens: 3 })
      expect(cut.stopReason).toBe("max_tokens")
      expect(cut.usage.outputTokens).toBeLessThanOrEqual(3)
    }))

  it.effect("calls an offered tool the prompt asks for, then reports its result", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const ask = { ...prompt("local-balanced", "Use get_weather for Paris"), tools: [weather] }
      const call = yield* llm.generate(ask)
      expect(call.stopReason).toBe("tool_use")
      const toolCall = call.content[0]
      if (toolCall?.type !== "tool_call") return expect.unreachable("expected a tool call")
      expect(toolCall).toMatchObject({ name: "get_weather", input: { city: "Use get_weather for Paris" } })
      const answer = yield* llm.generate({
        ...ask,
        messages: [
          ...ask.messages,
          { role: "assistant", content: [toolCall] },
          { role: "user", content: [{ type: "tool_result", toolCallId: toolCall.id, content: [{ type: "text", text: "18°C" }] }] }
        ]
      })
      expect(textOf(answer)).toBe("get_weather returned: 18°C")
      const without = yield* llm.generate({ ...prompt("local-balanced", "Hello"), tools: [weather] })
      expect(without.stopReason).toBe("end_turn")
    }))

  it.effect("streams the same answer as it generates", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const request = prompt("local-balanced", "Stream this")
      const whole = yield* llm.generate(request)
      const events = yield* Stream.runCollect(llm.stream(request))
      expect(events[0]).toMatchObject({ type: "start", model: "local-balanced" })
      const text = events.flatMap((event) => (event.type === "text_delta" ? [event.text] : [])).join("")
      expect(text).toBe(textOf(whole))
      expect(events.at(-1)).toMatchObject({ type: "finish", stopReason: "end_turn", usage: whole.usage })
    }))

  it.effect("refuses several completions", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const error = yield* Effect.flip(llm.generate({ ...prompt("local-balanced", "Hi"), n: 2 }))
      expect(error.kind).toBe("invalid_request")
    }))
})

const clients = sdkClients("local")

it.layer(loopbackServer(pgliteStorage), { excludeTestServices: true })("the local provider end to end, no upstream configured", (it) => {
  it.effect("serves the built-in catalog to both SDKs, streaming and not, billed", () =>
    Effect.gen(function*() {
      const { openai, anthropic, tenant } = yield* clients
      const models = yield* Effect.promise(() => openai.models.list())
      expect(models.data.map((model) => model.id)).toEqual(["local-highest", "local-balanced", "local-fastest", "local-embedding"])
      const completion = yield* Effect.promise(() =>
        openai.chat.completions.create({ model: "claude-3-5-haiku-latest", messages: [{ role: "user", content: "Hello" }] })
      )
      expect(completion.model).toBe("local-fastest")
      expect(completion.choices[0].message.content).toContain("Hello")
      const stream = anthropic.messages.stream({
        model: "claude-sonnet-4-5",
        max_tokens: 200,
        tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
        messages: [{ role: "user", content: "Call get_weather for Oslo" }]
      })
      const message = yield* Effect.promise(() => stream.finalMessage())
      expect(message.model).toBe("local-balanced")
      expect(message.stop_reason).toBe("tool_use")
      expect(message.content[0]).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Call get_weather for Oslo" } })
      const usage = yield* usageHistory(tenant.organizationId)
      expect(usage.events.map((event) => event.model).sort()).toEqual(["local-balanced", "local-fastest"])
      expect(usage.events.every((event) => event.inputTokens > 0 && event.outputTokens > 0)).toBe(true)
    }))

  it.effect("answers 400 for n > 1, which the local provider cannot do", () =>
    Effect.gen(function*() {
      const { openai } = yield* clients
      const error = yield* Effect.flip(Effect.tryPromise({
        try: () => openai.chat.completions.create({ model: "local-balanced", n: 2, messages: [{ role: "user", content: "Hi" }] }),
        catch: (error) => error
      }))
      expect(error).toBeInstanceOf(OpenAI.BadRequestError)
      expect(String(error)).toContain("n must be 1")
    }))

  it.effect("refuses a viewer, who may not use chat", () =>
    Effect.gen(function*() {
      const { tenant } = yield* clients
      const viewer = yield* Admin.createUser({ email: `viewer-${tenant.companyId}@example.com` })
      yield* Admin.addCompanyUser(tenant.companyId, { userId: viewer.id, role: "viewer" })
      const key = yield* Admin.createPersonalKey(viewer.id, { name: "viewer" })
      const base = yield* serverUrl
      const openai = new OpenAI({ apiKey: key.key, baseURL: `${base}/api/v0`, maxRetries: 0, defaultHeaders: { "X-Company-ID": tenant.companyId } })
      const error = yield* Effect.flip(Effect.tryPromise({
        try: () => openai.chat.completions.create({ model: "local-balanced", messages: [{ role: "user", content: "Hi" }] }),
        catch: (error) => error
      }))
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError)
    }))
})
