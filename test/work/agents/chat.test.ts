import { describe, expect, it } from "@effect/vitest"
import { Effect, type Stream } from "effect"
import type { ChatReply } from "../../../src/work/agents/ChatApi.ts"
import { streamChat } from "../../support/DesignChatClient.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { serverUrl } from "../../support/LoopbackServer.ts"
import { addPerson, backends, client, companyKeyBy, seedTenant, testServer } from "../../support/TestServer.ts"

/**
 * Conversations with agents and employees on the offline `local` model: it
 * searches the knowledge base and answers with cited passages, keeps and
 * finds memories when told to, and every message, tool call and result is
 * kept in the thread. JSON answers through the typed client, streamed ones
 * read with a real SSE parser.
 */

const refunds = `# Refund policy

Customers may return any product within 30 days of delivery for a full refund.

## Damaged goods

Damaged goods are replaced free of charge; send a photo of the damage to support.`

const onboarding = `# Onboarding guide

New employees receive a laptop on their first day. IT creates e-mail accounts before the first day.`

/** The JSON answer of a chat sent with `stream: false`. */
const replied = <E, R>(effect: Effect.Effect<Stream.Stream<unknown, unknown> | typeof ChatReply.Type, E, R>) =>
  Effect.flatMap(effect, (reply) => "threadId" in reply ? Effect.succeed(reply) : Effect.die(new Error("expected a JSON reply")))

const setup = (name: string) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant(name)
    const api = yield* client({ apiKey: tenant.apiKey })
    yield* api.knowledge.create({ payload: { title: "Refund policy", content: refunds } })
    yield* api.knowledge.create({ payload: { title: "Onboarding guide", content: onboarding } })
    const agent = yield* api.agents.create({ payload: { name: "Support", instructions: "Answer customers' questions." } })
    return { tenant, api, agent, base: yield* serverUrl }
  })

describe.each(backends)("conversations on $name", ({ storage }) => {
  it.layer(testServer(storage), { timeout: 60_000 })("with the offline model", (it) => {
    it.effect("answers a question from the documents, cited, and keeps the thread", () =>
      Effect.gen(function*() {
        const { api, agent } = yield* setup("answers")
        const reply = yield* replied(api.agentChat.agentChat({
          params: { agent_id: agent.id },
          payload: { message: "How many days do customers have to return a product for a refund?", stream: false }
        }))
        expect(reply.toolCalls).toHaveLength(1)
        expect(reply.toolCalls[0]).toMatchObject({ name: "search_knowledge", arguments: { query: expect.stringMatching(/^how or many or days .* or refund$/) } })
        const found = reply.toolCalls[0]!.result as { readonly results: ReadonlyArray<{ readonly title: string }> }
        expect(found.results[0]!.title).toBe("Refund policy")
        expect(reply.message.role).toBe("assistant")
        expect(reply.message.content).toContain("within 30 days of delivery")
        expect(reply.message.content).toContain("(Refund policy)")
        expect(reply.message.content).not.toContain("laptop")
        expect(reply.usage.inputTokens).toBeGreaterThan(0)

        const thread = yield* api.agentChat.agentThread({ params: { agent_id: agent.id, threadId: reply.threadId } })
        expect(thread.title).toBe("How many days do customers have to return a product for a refund?")
        expect(thread.projectId).toBeNull()
        expect(thread.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"])
        const [question, call, result, answer] = thread.messages
        expect(question!.content).toBe("How many days do customers have to return a product for a refund?")
        expect(call!.toolCalls).toEqual([{ id: reply.toolCalls[0]!.id, name: "search_knowledge", arguments: reply.toolCalls[0]!.arguments }])
        expect(result!.toolCallId).toBe(reply.toolCalls[0]!.id)
        expect(JSON.parse(result!.content)).toEqual(reply.toolCalls[0]!.result)
        expect(answer!.content).toBe(reply.message.content)

        const threads = yield* api.agentChat.agentThreads({ params: { agent_id: agent.id }, query: {} })
        expect(threads.items.map((item) => item.id)).toEqual([reply.threadId])
      }))

    it.effect("streams text, the tool call and its result, then done with the thread; a second message continues it", () =>
      Effect.gen(function*() {
        const { tenant, api, agent, base } = yield* setup("stream")
        const path = `/api/v0/agents/${agent.id}/chat`
        const first = yield* Effect.promise(() => streamChat(base, tenant.apiKey, path, { message: "What do new employees receive on their first day?" }))
        expect(first.status).toBe(200)
        expect(first.contentType).toContain("text/event-stream")
        const kinds = first.events.map((event) => event.event)
        expect(kinds.slice(0, 2)).toEqual(["tool_call", "tool_result"])
        expect(kinds.at(-1)).toBe("done")
        expect(kinds.slice(2, -1).every((kind) => kind === "text")).toBe(true)
        const text = first.events.filter((event) => event.event === "text").map((event) => event.data.delta).join("")
        expect(text).toContain("laptop")
        expect(text).toContain("(Onboarding guide)")
        const done = first.events.at(-1)!.data
        expect(done.usage.outputTokens).toBeGreaterThan(0)

        const second = yield* Effect.promise(() =>
          streamChat(base, tenant.apiKey, path, { message: "Remember that I prefer short answers", threadId: done.threadId }))
        expect(second.events.at(-1)).toMatchObject({ event: "done", data: { threadId: done.threadId } })
        const thread = yield* api.agentChat.agentThread({ params: { agent_id: agent.id, threadId: done.threadId } })
        expect(thread.messages.map((message) => message.role)).toEqual([
          "user", "assistant", "tool", "assistant",
          "user", "assistant", "tool", "assistant"
        ])
      }))

    it.effect("keeps and recalls the caller's memories when told to", () =>
      Effect.gen(function*() {
        const { tenant, api, agent } = yield* setup("memories")
        const chat = (message: string) => replied(api.agentChat.agentChat({ params: { agent_id: agent.id }, payload: { message, stream: false } }))
        const kept = yield* chat("Remember that my favourite colour is green.")
        expect(kept.toolCalls.map((call) => call.name)).toEqual(["remember"])
        expect(kept.message.content).toBe("I will remember that: my favourite colour is green")
        yield* chat("Remember that our office is in Lisbon")
        const memories = yield* api.memories.list({ params: { companyId: tenant.companyId }, query: {} })
        expect(memories.items.map((memory) => memory.content).sort()).toEqual(["my favourite colour is green", "our office is in Lisbon"])

        const recalled = yield* chat("What do you remember about my favourite colour?")
        expect(recalled.toolCalls[0]).toMatchObject({ name: "recall", arguments: { query: "favourite colour" } })
        expect(recalled.message.content).toBe("What I remember:\n- my favourite colour is green")
      }))

    it.effect("an agent uses only the tools it lists; a paused agent does not talk", () =>
      Effect.gen(function*() {
        const { api, agent } = yield* setup("tools")
        yield* api.agents.update({ params: { agent_id: agent.id }, payload: { tools: ["remember"] } })
        const reply = yield* replied(api.agentChat.agentChat({
          params: { agent_id: agent.id },
          payload: { message: "What is the refund policy?", stream: false }
        }))
        expect(reply.toolCalls).toEqual([])
        expect(reply.message.content).not.toContain("30 days")
        yield* api.agents.update({ params: { agent_id: agent.id }, payload: { status: "paused" } })
        const paused = yield* api.agentChat.agentChat({ params: { agent_id: agent.id }, payload: { message: "Hello", stream: false } }).pipe(Effect.flip)
        expect(paused).toMatchObject({ _tag: "BadRequest", error: `Agent ${agent.id} is paused: set its status to active to talk to it` })
      }))

    it.effect("employees talk with their role, in their own threads", () =>
      Effect.gen(function*() {
        const { api } = yield* setup("employee")
        const employee = yield* api.employees.create({ payload: { name: "Ada", role: "support lead" } })
        const reply = yield* replied(api.agentChat.employeeChat({
          params: { employee_id: employee.id },
          payload: { message: "Are damaged goods replaced?", stream: false }
        }))
        expect(reply.message.content).toContain("replaced free of charge")
        const threads = yield* api.agentChat.employeeThreads({ params: { employee_id: employee.id }, query: {} })
        expect(threads.items.map((item) => item.id)).toEqual([reply.threadId])
        const thread = yield* api.agentChat.employeeThread({ params: { employee_id: employee.id, threadId: reply.threadId } })
        expect(thread.messages).toHaveLength(4)
      }))

    it.effect("refuses bad input, other companies' agents, unknown or other people's threads, and viewers", () =>
      Effect.gen(function*() {
        const { tenant, api, agent } = yield* setup("refusals")
        const path = `/api/v0/agents/${agent.id}/chat`
        expectErrorResponse(yield* send(requestWithKey("POST", path, tenant.apiKey, { message: "  ", stream: false })), 400, /message/)
        expectErrorResponse(yield* send(requestWithKey("POST", path, tenant.apiKey, {})), 400, /message/)
        expectErrorResponse(
          yield* send(requestWithKey("POST", path, tenant.apiKey, { message: "Hi", stream: false, temperature: 2 })),
          400,
          /temperature/
        )
        expectErrorResponse(
          yield* send(requestWithKey("POST", path, tenant.apiKey, { message: "Hi", threadId: "thr_unknown", stream: false })),
          404,
          "Thread thr_unknown not found"
        )

        const other = yield* seedTenant("other")
        expectErrorResponse(
          yield* send(requestWithKey("POST", path, other.apiKey, { message: "Hi", stream: false })),
          404,
          `Agent ${agent.id} not found`
        )
        expectErrorResponse(yield* send(requestWithKey("GET", `/api/v0/agents/${agent.id}/threads`, other.apiKey)), 404)

        const reply = yield* replied(api.agentChat.agentChat({ params: { agent_id: agent.id }, payload: { message: "Hi", stream: false } }))
        const member = yield* addPerson(tenant, { companyRole: "member" })
        const memberKey = yield* companyKeyBy(tenant, member.userId)
        expectErrorResponse(
          yield* send(requestWithKey("GET", `/api/v0/agents/${agent.id}/threads/${reply.threadId}`, memberKey)),
          404,
          `Thread ${reply.threadId} not found`
        )
        expectErrorResponse(
          yield* send(requestWithKey("POST", path, memberKey, { message: "Hi", threadId: reply.threadId, stream: false })),
          404
        )
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const viewerKey = yield* companyKeyBy(tenant, viewer.userId)
        expectErrorResponse(yield* send(requestWithKey("POST", path, viewerKey, { message: "Hi" })), 403, /agents:chat|talk to agents/)
        expectErrorResponse(
          yield* send(requestWithKey("POST", path, tenant.apiKey, { message: "Hi", projectId: "prj_unknown", stream: false })),
          404
        )
      }))
  })

  it.layer(testServer(storage, { agents: { maxRounds: 1 } }), { timeout: 60_000 })("with one model call per message", (it) => {
    it.effect("a model still calling tools at the limit ends the stream with error, and the JSON answer with 429", () =>
      Effect.gen(function*() {
        const { tenant, agent, base } = yield* setup("limits")
        const path = `/api/v0/agents/${agent.id}/chat`
        const streamed = yield* Effect.promise(() => streamChat(base, tenant.apiKey, path, { message: "What is the refund policy?" }))
        expect(streamed.events.map((event) => event.event)).toEqual(["error"])
        expect(streamed.events[0]!.data).toEqual({ error: "Stopped after 1 tool rounds" })
        expectErrorResponse(
          yield* send(requestWithKey("POST", path, tenant.apiKey, { message: "What is the refund policy?", stream: false })),
          429,
          "Stopped after 1 tool rounds"
        )
      }))
  })
})
