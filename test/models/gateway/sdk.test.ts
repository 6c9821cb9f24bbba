import Anthropic from "@anthropic-ai/sdk"
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import OpenAI from "openai"
import { offThreadCharacters, piecesOf } from "../../../src/models/llm/Tokenizer.ts"
import { spend } from "../../support/Billing.ts"
import { loopbackServer, sdkClients, serverUrl } from "../../support/LoopbackServer.ts"
import { startStubUpstream, type StubUpstream } from "../../support/StubUpstream.ts"
import { usageHistory } from "../../support/Usage.ts"
import { pgliteStorage } from "../../support/TestServer.ts"

class Upstream extends Context.Service<Upstream, StubUpstream>()("test/Upstream") {}

const upstream = Layer.effect(
  Upstream,
  Effect.acquireRelease(Effect.promise(() => startStubUpstream()), (stub) => Effect.promise(stub.close))
)

const serverWith = (settings: { readonly llmTimeoutMs?: number }) =>
  Layer.unwrap(Upstream.useSync((stub) =>
    loopbackServer(pgliteStorage, {
      llmModels: Option.some([
        { id: "smart", provider: "openai", upstream: "stub-large", tier: "highest" },
        { id: "everyday", provider: "openai", upstream: "stub-medium", tier: "balanced" },
        { id: "quick", provider: "openai", upstream: "stub-small", tier: "fastest" }
      ]),
      openaiBaseUrl: Option.some(stub.url),
      llmMaxRetries: 2,
      ...settings
    })
  )).pipe(Layer.provideMerge(upstream))

const server = serverWith({})

const clients = sdkClients("gateway")

const usageEvents = (organizationId: string) =>
  usageHistory(organizationId).pipe(Effect.map((page) => page.events))

/** Requests the stub received since `from`. */
const received = (from: number) => Upstream.useSync((stub) => stub.requests.slice(from))

const requestCount = Upstream.useSync((stub) => stub.requests.length)

/** The error a client call rejects with. */
const failure = <A>(promise: () => Promise<A>) => Effect.flip(Effect.tryPromise({ try: promise, catch: (error) => error }))

const collect = async <A>(iterable: AsyncIterable<A>): Promise<Array<A>> => {
  const items: Array<A> = []
  for await (const item of iterable) items.push(item)
  return items
}

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }
}

it.layer(server, { timeout: 60_000, excludeTestServices: true })("the gateway through the official OpenAI SDK", (it) => {
  it.effect("lists the catalog in OpenAI's shape", () =>
    Effect.gen(function*() {
      const { openai } = yield* clients
      const models = yield* Effect.promise(() => openai.models.list())
      expect(models.data.map((model) => [model.id, model.object, model.owned_by])).toEqual([
        ["smart", "model", "openai"],
        ["everyday", "model", "openai"],
        ["quick", "model", "openai"]
      ])
    }))

  it.effect("completes, with the provider's usage, billed once", () =>
    Effect.gen(function*() {
      const { openai, tenant } = yield* clients
      const from = yield* requestCount
      const completion = yield* Effect.promise(() =>
        openai.chat.completions.create({ model: "smart", messages: [{ role: "system", content: "Be brief" }, { role: "user", content: "Hi" }] })
      )
      expect(completion.choices[0].message.content).toBe("Hello from stub-large")
      expect(completion.choices[0].finish_reason).toBe("stop")
      expect(completion.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 7, total_tokens: 28 })
      const [sent] = yield* received(from)
      expect(sent.body).toMatchObject({ model: "stub-large", messages: [{ role: "system", content: "Be brief" }, { role: "user", content: "Hi" }] })
      expect(sent.body.stream).toBeUndefined()
      // The platform's trace ids are its own business.
      expect(sent.headers).not.toHaveProperty("traceparent")
      expect(sent.headers).not.toHaveProperty("b3")
      const events = yield* usageEvents(tenant.organizationId)
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ feature: "chat", model: "smart", inputTokens: 21, outputTokens: 7, credits: 1, companyId: tenant.companyId })
    }))

  it.effect("streams chunks, then the usage, then [DONE]", () =>
    Effect.gen(function*() {
      const { openai, tenant } = yield* clients
      const stream = yield* Effect.promise(() =>
        openai.chat.completions.create({
          model: "everyday",
          messages: [{ role: "user", content: "Hi" }],
          stream: true,
          stream_options: { include_usage: true }
        })
      )
      const chunks = yield* Effect.promise(() => collect(stream))
      expect(chunks[0].choices[0].delta).toMatchObject({ role: "assistant" })
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe("Hello from stub-medium")
      expect(chunks.at(-2)?.choices[0].finish_reason).toBe("stop")
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 21, completion_tokens: 7 } })
      const events = yield* usageEvents(tenant.organizationId)
      expect(events.map((event) => [event.model, event.inputTokens, event.outputTokens])).toEqual([["everyday", 21, 7]])
    }))

  it.effect("round-trips a tool call, streaming and not", () =>
    Effect.gen(function*() {
      const { openai } = yield* clients
      const question = { role: "user" as const, content: "What is the weather in Paris?" }
      const first = yield* Effect.promise(() =>
        openai.chat.completions.create({ model: "quick", messages: [question], tools: [weatherTool], tool_choice: "auto" })
      )
      const call = first.choices[0].message.tool_calls?.[0]
      expect(first.choices[0].finish_reason).toBe("tool_calls")
      expect(call).toMatchObject({ type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } })
      const streamed = yield* Effect.promise(async () => {
        const stream = await openai.chat.completions.create({ model: "quick", messages: [question], tools: [weatherTool], stream: true })
        const chunks = await collect(stream)
        return chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])
      })
      expect(streamed[0]).toMatchObject({ index: 0, id: "call_stub_1", function: { name: "get_weather" } })
      expect(streamed.map((delta) => delta.function?.arguments ?? "").join("")).toBe("{\"city\":\"Paris\"}")
      const from = yield* requestCount
      const answer = yield* Effect.promise(() =>
        openai.chat.completions.create({
          model: "quick",
          tools: [weatherTool],
          messages: [question, first.choices[0].message, { role: "tool", tool_call_id: call!.id, content: "18°C and sunny" }]
        })
      )
      expect(answer.choices[0].message.content).toBe("The tool said: 18°C and sunny")
      const [sent] = yield* received(from)
      expect(sent.body.messages.slice(1)).toEqual([
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call!.id, content: "18°C and sunny" }
      ])
    }))

  it.effect("routes client model names by tier and refuses unknown models", () =>
    Effect.gen(function*() {
      const { openai } = yield* clients
      const from = yield* requestCount
      for (const model of ["claude-3-5-haiku-20241022", "claude-opus-4-1", "claude-sonnet-4-5"]) {
        yield* Effect.promise(() => openai.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }] }))
      }
      expect((yield* received(from)).map((request) => request.body.model)).toEqual(["stub-small", "stub-large", "stub-medium"])
      const unknown = yield* failure(() => openai.chat.completions.create({ model: "gpt-nope", messages: [{ role: "user", content: "Hi" }] }))
      expect(unknown).toBeInstanceOf(OpenAI.BadRequestError)
      expect(String(unknown)).toContain("gpt-nope")
    }))

  it.effect("answers 400 for an invalid body and for what the upstream refuses, retrying only transient failures", () =>
    Effect.gen(function*() {
      const { openai } = yield* clients
      const empty = yield* failure(() => openai.chat.completions.create({ model: "smart", messages: [] }))
      expect(empty).toBeInstanceOf(OpenAI.BadRequestError)
      const from = yield* requestCount
      const refused = yield* failure(() => openai.chat.completions.create({ model: "smart", messages: [{ role: "user", content: "[fail-400]" }] }))
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
      expect(String(refused)).toContain("The stub refuses this request")
      expect(yield* received(from)).toHaveLength(1)
      const flaky = yield* Effect.promise(() =>
        openai.chat.completions.create({ model: "smart", messages: [{ role: "user", content: "[flaky] once" }] })
      )
      expect(flaky.choices[0].message.content).toBe("Hello from stub-large")
      expect(yield* received(from)).toHaveLength(3)
    }))

  it.effect("answers 403 Insufficient credits before any upstream call", () =>
    Effect.gen(function*() {
      const { openai, anthropic, tenant } = yield* clients
      const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }
      yield* spend(payer, { feature: "test", credits: 100_000 })
      const from = yield* requestCount
      const denied = yield* failure(() => openai.chat.completions.create({ model: "smart", messages: [{ role: "user", content: "Hi" }] }))
      expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError)
      expect((denied as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toBe("Insufficient credits")
      const streamDenied = yield* failure(() =>
        anthropic.messages.create({ model: "smart", max_tokens: 10, stream: true, messages: [{ role: "user", content: "Hi" }] })
      )
      expect(streamDenied).toBeInstanceOf(Anthropic.PermissionDeniedError)
      expect(yield* received(from)).toHaveLength(0)
    }))

  it.effect("bills a client that leaves mid-stream for what was generated, and stops the upstream call", () =>
    Effect.gen(function*() {
      const { openai, tenant } = yield* clients
      const before = yield* Upstream.useSync((stub) => stub.abandonedStreams())
      const words = yield* Effect.promise(async () => {
        const controller = new AbortController()
        const stream = await openai.chat.completions.create(
          { model: "smart", messages: [{ role: "user", content: "[slow] tell me everything" }], stream: true },
          { signal: controller.signal }
        )
        const seen: Array<string> = []
        for await (const chunk of stream) {
          const content = chunk.choices[0]?.delta.content
          if (content) seen.push(content)
          if (seen.length === 5) break
        }
        return seen
      })
      expect(words).toHaveLength(5)
      const settled = Effect.gen(function*() {
        const events = yield* usageEvents(tenant.organizationId)
        const abandoned = yield* Upstream.useSync((stub) => stub.abandonedStreams())
        return events.length === 1 && abandoned === before + 1 ? Option.some(events[0]) : Option.none()
      })
      const event = yield* settled.pipe(
        Effect.repeat({ until: Option.isSome, schedule: Schedule.spaced("20 millis"), times: 250 }),
        Effect.map(Option.getOrThrow)
      )
      expect(event.model).toBe("smart")
      expect(event.outputTokens).toBeGreaterThanOrEqual(5)
      expect(event.inputTokens).toBeGreaterThan(0)
    }))
})

it.layer(server, { timeout: 60_000, excludeTestServices: true })("the gateway through the official Anthropic SDK", (it) => {
  it.effect("lists the catalog in Anthropic's shape", () =>
    Effect.gen(function*() {
      const { anthropic } = yield* clients
      const page = yield* Effect.promise(() => anthropic.models.list())
      expect(page.data.map((model) => [model.type, model.id])).toEqual([["model", "smart"], ["model", "everyday"], ["model", "quick"]])
    }))

  it.effect("creates a message routed by tier, with Anthropic's usage split", () =>
    Effect.gen(function*() {
      const { anthropic, tenant } = yield* clients
      const from = yield* requestCount
      const message = yield* Effect.promise(() =>
        anthropic.messages.create({
          model: "claude-sonnet-4-5-20250929",
          max_tokens: 100,
          system: "Be brief",
          messages: [{ role: "user", content: "Hi" }]
        })
      )
      expect(message).toMatchObject({
        type: "message",
        role: "assistant",
        model: "everyday",
        content: [{ type: "text", text: "Hello from stub-medium" }],
        stop_reason: "end_turn",
        usage: { input_tokens: 18, cache_read_input_tokens: 3, output_tokens: 7 }
      })
      const [sent] = yield* received(from)
      expect(sent.body).toMatchObject({ model: "stub-medium", max_tokens: 100, messages: [{ role: "system", content: "Be brief" }, { role: "user", content: "Hi" }] })
      const events = yield* usageEvents(tenant.organizationId)
      expect(events.map((event) => [event.model, event.inputTokens, event.outputTokens])).toEqual([["everyday", 21, 7]])
    }))

  it.effect("streams Anthropic's exact event sequence", () =>
    Effect.gen(function*() {
      const { anthropic, tenant } = yield* clients
      const stream = anthropic.messages.stream({ model: "quick", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] })
      const events = yield* Effect.promise(() => collect(stream))
      const final = yield* Effect.promise(() => stream.finalMessage())
      const types = events.map((event) => event.type)
      expect(types[0]).toBe("message_start")
      expect(types.slice(1, 2)).toEqual(["content_block_start"])
      expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"])
      expect(new Set(types.slice(2, -3))).toEqual(new Set(["content_block_delta"]))
      expect(events.every((event) => !("index" in event) || event.index === 0)).toBe(true)
      expect(final.content).toEqual([{ type: "text", text: "Hello from stub-small" }])
      expect(final.stop_reason).toBe("end_turn")
      expect(final.usage).toMatchObject({ input_tokens: 18, output_tokens: 7, cache_read_input_tokens: 3 })
      expect(yield* usageEvents(tenant.organizationId)).toHaveLength(1)
    }))

  it.effect("sends ping right after message_start on the wire", () =>
    Effect.gen(function*() {
      const { tenant } = yield* clients
      const base = yield* serverUrl
      const body = yield* Effect.promise(async () => {
        const response = await fetch(`${base}/api/v0/anthropic/v1/messages`, {
          method: "POST",
          headers: { "x-api-key": tenant.apiKey, "content-type": "application/json" },
          body: JSON.stringify({ model: "quick", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] })
        })
        return { contentType: response.headers.get("content-type"), text: await response.text() }
      })
      expect(body.contentType).toContain("text/event-stream")
      const names = [...body.text.matchAll(/^event: (\w+)$/gm)].map((match) => match[1])
      expect(names.slice(0, 3)).toEqual(["message_start", "ping", "content_block_start"])
      expect(names.at(-1)).toBe("message_stop")
    }))

  it.effect("forwards client tools and streams tool_use with input_json_delta, then takes the tool_result back", () =>
    Effect.gen(function*() {
      const { anthropic } = yield* clients
      const tools = [{
        name: "get_weather",
        description: "Current weather of a city",
        input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
      }]
      const question = { role: "user" as const, content: "What is the weather in Paris?" }
      const stream = anthropic.messages.stream({ model: "quick", max_tokens: 100, tools, messages: [question] })
      const events = yield* Effect.promise(() => collect(stream))
      const final = yield* Effect.promise(() => stream.finalMessage())
      expect(events.some((event) => event.type === "content_block_delta" && event.delta.type === "input_json_delta")).toBe(true)
      expect(final.stop_reason).toBe("tool_use")
      expect(final.content).toEqual([{ type: "tool_use", id: "call_stub_1", name: "get_weather", input: { city: "Paris" } }])
      const from = yield* requestCount
      const answer = yield* Effect.promise(() =>
        anthropic.messages.create({
          model: "quick",
          max_tokens: 100,
          tools,
          messages: [
            question,
            { role: "assistant", content: final.content },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "call_stub_1", content: "18°C and sunny" }] }
          ]
        })
      )
      expect(answer.content).toEqual([{ type: "text", text: "The tool said: 18°C and sunny" }])
      const [sent] = yield* received(from)
      expect(sent.body.messages.slice(1)).toEqual([
        { role: "assistant", content: null, tool_calls: [{ id: "call_stub_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
        { role: "tool", tool_call_id: "call_stub_1", content: "18°C and sunny" }
      ])
    }))

  it.effect("accepts thinking, cache_control and server tools, and forwards none of them", () =>
    Effect.gen(function*() {
      const { anthropic } = yield* clients
      const from = yield* requestCount
      const message = yield* Effect.promise(() =>
        anthropic.messages.create({
          model: "claude-opus-4-1-20250805",
          max_tokens: 2000,
          thinking: { type: "enabled", budget_tokens: 1024 },
          system: [{ type: "text", text: "You are helpful", cache_control: { type: "ephemeral", ttl: "1h" } }],
          tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }],
          messages: [
            { role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] },
            {
              role: "assistant",
              content: [{ type: "thinking", thinking: "Let me think", signature: "sig" }, { type: "text", text: "Hello" }]
            },
            { role: "user", content: "Search the web" }
          ]
        })
      )
      expect(message.content).toEqual([{ type: "text", text: "Hello from stub-large" }])
      const [sent] = yield* received(from)
      expect(sent.body.tools).toBeUndefined()
      expect(sent.body.messages).toEqual([
        { role: "system", content: "You are helpful" },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Search the web" }
      ])
      expect(JSON.stringify(sent.body)).not.toMatch(/thinking|cache_control|web_search/)
    }))

  it.effect("counts tokens with the tokenizer, tools included, without calling the model", () =>
    Effect.gen(function*() {
      const { anthropic, tenant } = yield* clients
      const from = yield* requestCount
      const messages = [{ role: "user" as const, content: "Hello, how many tokens is this?" }]
      const plain = yield* Effect.promise(() => anthropic.messages.countTokens({ model: "claude-haiku-4-5", messages }))
      const withTools = yield* Effect.promise(() =>
        anthropic.messages.countTokens({
          model: "claude-haiku-4-5",
          system: "Be brief",
          messages,
          tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }]
        })
      )
      expect(plain.input_tokens).toBeGreaterThan(5)
      expect(withTools.input_tokens).toBeGreaterThan(plain.input_tokens + 10)
      // A large text is counted on a worker thread, its pieces on the request thread: the same total.
      const large = Array.from({ length: 4_000 }, (_, i) => `Line ${i} of a long document to count.\n`).join("")
      expect(large.length).toBeGreaterThan(offThreadCharacters)
      const whole = yield* Effect.promise(() =>
        anthropic.messages.countTokens({ model: "claude-haiku-4-5", messages: [{ role: "user", content: large }] })
      )
      const pieces = [...piecesOf(large)].map((text) => ({ type: "text" as const, text }))
      expect(pieces.length).toBeGreaterThan(1)
      const inPieces = yield* Effect.promise(() =>
        anthropic.messages.countTokens({ model: "claude-haiku-4-5", messages: [{ role: "user", content: pieces }] })
      )
      expect(whole.input_tokens).toBe(inPieces.input_tokens)
      const unknown = yield* failure(() => anthropic.messages.countTokens({ model: "nope", messages }))
      expect(unknown).toBeInstanceOf(Anthropic.BadRequestError)
      expect(yield* received(from)).toHaveLength(0)
      expect(yield* usageEvents(tenant.organizationId)).toHaveLength(0)
    }))

  it.effect("takes a personal access key with X-Company-ID", () =>
    Effect.gen(function*() {
      const { tenant } = yield* clients
      const base = yield* serverUrl
      const withCompany = new Anthropic({
        apiKey: tenant.personalAccessKey,
        baseURL: `${base}/api/v0/anthropic`,
        maxRetries: 0,
        defaultHeaders: { "X-Company-ID": tenant.companyId }
      })
      const message = yield* Effect.promise(() =>
        withCompany.messages.create({ model: "quick", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] })
      )
      expect(message.content[0]).toMatchObject({ type: "text" })
      const events = yield* usageEvents(tenant.organizationId)
      expect(events[0].userId).toBe(tenant.userId)
      const without = new Anthropic({ apiKey: tenant.personalAccessKey, baseURL: `${base}/api/v0/anthropic`, maxRetries: 0 })
      const error = yield* failure(() => without.messages.create({ model: "quick", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }))
      expect(error).toBeInstanceOf(Anthropic.AuthenticationError)
    }))
})

it.layer(serverWith({ llmTimeoutMs: 300 }), { timeout: 60_000, excludeTestServices: true })("a provider that falls silent", (it) => {
  it.effect("ends the stream with an in-band error after LLM_TIMEOUT_MS of silence, billed for what was sent", () =>
    Effect.gen(function*() {
      const { openai, tenant } = yield* clients
      const outcome = yield* Effect.promise(async () => {
        const stream = await openai.chat.completions.create({
          model: "smart",
          messages: [{ role: "user", content: "[stall] say something" }],
          stream: true
        })
        const roles: Array<string | undefined> = []
        try {
          for await (const chunk of stream) roles.push(chunk.choices[0]?.delta.role)
          return { roles, error: undefined }
        } catch (error) {
          return { roles, error }
        }
      })
      expect(outcome.roles).toEqual(["assistant"])
      expect(outcome.error).toBeInstanceOf(OpenAI.APIError)
      expect(String((outcome.error as Error).message)).toContain("stream was silent for 300 ms")
      const events = yield* usageEvents(tenant.organizationId)
      expect(events.map((event) => [event.model, event.outputTokens])).toEqual([["smart", 0]])
      expect(events[0].inputTokens).toBeGreaterThan(0)
    }))
})
