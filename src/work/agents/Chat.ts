import { Effect, Stream } from "effect"
import { Authorized } from "../../auth/Policy.ts"
import type { SseEvent } from "../../models/gateway/Sse.ts"
import { toApiError } from "../../models/gateway/Gateway.ts"
import { AgentLimit, type AgentEvent, agentFailureMessage } from "../../models/llm/Agent.ts"
import { LlmError } from "../../models/llm/Llm.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { windowOf } from "../../storage/Windows.ts"
import { AgentsRepo } from "./AgentsRepo.ts"
import type { ToolCaller } from "./AgentTools.ts"
import type { AnsweredToolCall, ChatReply, ChatRequest, Thread, ThreadMessage, ThreadSummary } from "./ChatApi.ts"
import { converse, type Counterpart } from "./Conversation.ts"
import { EmployeesRepo } from "./EmployeesRepo.ts"
import { AgentNotActive, AgentNotFound, ConversationStopped, EmployeeNotFound, ThreadNotFound } from "./Errors.ts"
import { agentPersona, employeePersona } from "./Prompts.ts"
import type { ThreadOwner, ThreadRecord } from "./ThreadsRepo.ts"
import { ThreadsRepo } from "./ThreadsRepo.ts"
import { agentToolNames } from "./ToolNames.ts"
import { departmentPrompt } from "../departments/Departments.ts"

/**
 * Conversations with agents and employees as the API offers them: the
 * counterpart found in the caller's company (404 otherwise), the message
 * answered as server-sent events or one JSON reply, and the caller's threads.
 */

/** What the request's caller brings beyond their principal: their credentials for platform_action, the browser. */
export type Abilities = Pick<ToolCaller, "platformAction" | "browse" | "research">

const sse = (event: string, data: unknown): SseEvent => ({ event, data: JSON.stringify(data) })

/** The event the client reads for one event of the loop, if any. */
const toSse = (threadId: string) => (event: AgentEvent<never>): ReadonlyArray<SseEvent> => {
  switch (event.type) {
    case "text":
      return [sse("text", { delta: event.delta })]
    case "tool_call":
      return [sse("tool_call", { id: event.id, name: event.name, arguments: event.arguments })]
    case "tool_result":
      return [sse("tool_result", { id: event.id, name: event.name, result: event.result })]
    case "tool_error":
      return [sse("tool_result", { id: event.id, name: event.name, error: event.error })]
    case "finished":
      return [sse("done", { threadId, usage: event.usage })]
    default:
      return []
  }
}

/** The whole answer as one JSON reply: the last round's text, every tool call with its outcome, the tokens. */
const collect = <E>(threadId: string, events: Stream.Stream<AgentEvent<never>, E>) =>
  Effect.gen(function*() {
    let content = ""
    const toolCalls: Array<typeof AnsweredToolCall.Type> = []
    let usage = { inputTokens: 0, outputTokens: 0 }
    yield* Stream.runForEach(events, (event) =>
      Effect.sync(() => {
        switch (event.type) {
          case "assistant":
            content = event.text
            break
          case "tool_call":
            toolCalls.push({ id: event.id, name: event.name, arguments: event.arguments })
            break
          case "tool_result":
          case "tool_error": {
            const index = toolCalls.findIndex((call) => call.id === event.id)
            const call = toolCalls[index]
            if (call !== undefined) {
              toolCalls[index] = event.type === "tool_result" ? { ...call, result: event.result } : { ...call, error: event.error }
            }
            break
          }
          case "finished":
            usage = event.usage
        }
      }))
    const reply: typeof ChatReply.Type = { threadId, message: { role: "assistant", content }, toolCalls, usage }
    return reply
  }).pipe(
    Effect.mapError((error) =>
      error instanceof LlmError
        ? toApiError(error)
        : error instanceof AgentLimit
        ? new ConversationStopped({ reason: error.message })
        : error as Exclude<E, LlmError | AgentLimit>
    )
  )

const respond = (
  counterpart: Counterpart,
  request: typeof ChatRequest.Type,
  abilities: Abilities
) =>
  Effect.gen(function*() {
    const { principal } = yield* Authorized("agents:chat")
    const { threadId, events } = yield* converse(principal, counterpart, request, abilities)
    if (request.stream === false) return yield* collect(threadId, events)
    return events.pipe(
      Stream.flatMap((event) => Stream.fromIterable(toSse(threadId)(event))),
      Stream.catch((error) => Stream.make(sse("error", { error: agentFailureMessage(error, "The conversation failed") })))
    )
  })

const findAgent = (companyId: string, id: string) =>
  Effect.flatMap(AgentsRepo.use((repo) => repo.get(companyId, id)), orRefuse(() => new AgentNotFound({ id })))

const findEmployee = (companyId: string, id: string) =>
  Effect.flatMap(EmployeesRepo.use((repo) => repo.get(companyId, id)), orRefuse(() => new EmployeeNotFound({ id })))

export const chatWithAgent = Effect.fn("Chat.agent")(function*(
  agentId: string,
  request: typeof ChatRequest.Type,
  abilities: Abilities
) {
  const { principal } = yield* Authorized("agents:chat")
  const agent = yield* findAgent(principal.companyId, agentId)
  if (agent.status !== "active") return yield* new AgentNotActive({ id: agent.id, status: agent.status })
  return yield* respond({
    kind: "agent",
    id: agent.id,
    model: agent.model,
    prompt: { persona: agentPersona(agent), instructions: agent.instructions },
    tools: agent.tools ?? agentToolNames
  }, request, abilities)
})

export const chatWithEmployee = Effect.fn("Chat.employee")(function*(
  employeeId: string,
  request: typeof ChatRequest.Type,
  abilities: Abilities
) {
  const { principal } = yield* Authorized("agents:chat")
  const employee = yield* findEmployee(principal.companyId, employeeId)
  return yield* respond({
    kind: "employee",
    id: employee.id,
    model: employee.model,
    prompt: {
      persona: employeePersona(employee),
      instructions: employee.instructions,
      department: yield* departmentPrompt(employee)
    },
    tools: agentToolNames
  }, request, abilities)
})

const toSummary = (thread: ThreadRecord): typeof ThreadSummary.Type => ({
  id: thread.id,
  title: thread.title,
  projectId: thread.projectId,
  created: thread.createdAt.getTime(),
  updated: thread.updatedAt.getTime()
})

/** The caller's threads with the counterpart, once it is found in the caller's company. */
const ownerOf = (kind: ThreadOwner["ownerKind"], id: string) =>
  Effect.gen(function*() {
    const { principal } = yield* Authorized("agents:chat")
    yield* kind === "agent" ? findAgent(principal.companyId, id) : findEmployee(principal.companyId, id)
    const owner: ThreadOwner = { companyId: principal.companyId, ownerKind: kind, ownerId: id, userId: principal.userId }
    return owner
  })

export const listThreads = Effect.fn("Chat.listThreads")(function*(
  kind: ThreadOwner["ownerKind"],
  id: string,
  request: PageRequest
) {
  const owner = yield* ownerOf(kind, id)
  const { rows, total } = yield* ThreadsRepo.use((repo) => repo.list(owner, windowOf(request)))
  return toPage(rows.map(toSummary), total, request)
})

export const getThread = Effect.fn("Chat.getThread")(function*(kind: ThreadOwner["ownerKind"], id: string, threadId: string) {
  const owner = yield* ownerOf(kind, id)
  const repo = yield* ThreadsRepo
  const thread = yield* Effect.flatMap(repo.get(owner, threadId), orRefuse(() => new ThreadNotFound({ id: threadId })))
  const messages = yield* repo.messages(thread.id)
  const result: typeof Thread.Type = {
    ...toSummary(thread),
    messages: messages.map((message): typeof ThreadMessage.Type => ({
      id: message.id,
      role: message.role,
      content: message.content,
      ...(message.toolCalls === null ? {} : { toolCalls: message.toolCalls }),
      ...(message.toolCallId === null ? {} : { toolCallId: message.toolCallId }),
      created: message.createdAt.getTime()
    }))
  }
  return result
})
