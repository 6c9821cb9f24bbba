import { Effect, Option, Stream } from "effect"
import { authorize } from "../../auth/Policy.ts"
import type { Principal } from "../../auth/Principal.ts"
import { afterFirstEvent, type AgentEvent, runAgent } from "../../models/llm/Agent.ts"
import type { ContentPart, LlmMessage } from "../../models/llm/Llm.ts"
import { newId } from "../../platform/Ids.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import * as Projects from "../projects/Projects.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"
import { InsufficientCredits } from "../../accounts/usage/Errors.ts"
import { AgentsConfig } from "./AgentsConfig.ts"
import { agentTools, type ToolCaller } from "./AgentTools.ts"
import type { ChatRequest } from "./ChatApi.ts"
import { ThreadNotFound, ThreadProjectMismatch } from "./Errors.ts"
import { type PromptParts, systemPrompt } from "./Prompts.ts"
import { type MessageRecord, type NewMessage, type ThreadOwner, type ThreadRecord, ThreadsRepo } from "./ThreadsRepo.ts"
import type { AgentToolName } from "./ToolNames.ts"

/**
 * One message of a conversation with an agent or employee: the thread's
 * earlier messages and the new one go through the agent loop
 * (src/models/llm/Agent.ts) with the counterpart's tools, every round billed under
 * `agents`. The thread, the user's message and then each round's answer,
 * tool call and tool result are stored as they happen, so that a client that
 * leaves mid-way finds the thread as far as it went.
 */

/** Who the caller talks to. */
export interface Counterpart {
  readonly kind: "agent" | "employee"
  readonly id: string
  /** Null: `AGENT_MODEL`. */
  readonly model: string | null
  readonly prompt: Omit<PromptParts, "projectInstructions" | "tools">
  readonly tools: ReadonlyArray<AgentToolName>
}

/** The thread's last `count` messages, starting at a user's message so that no tool result loses its call. */
const recent = (messages: ReadonlyArray<MessageRecord>, count: number) => {
  const window = messages.slice(-count)
  const start = window.findIndex((message) => message.role === "user")
  return start === -1 ? [] : window.slice(start)
}

/**
 * Stored messages as the model reads them: tool turns become the
 * `tool_result` parts of a user turn after their call; a call whose result
 * was never stored (a client that left mid-tool) is left out.
 */
export const toLlmMessages = (messages: ReadonlyArray<MessageRecord>): Array<LlmMessage> => {
  const answered = new Set(messages.flatMap((message) => message.toolCallId === null ? [] : [message.toolCallId]))
  const result: Array<LlmMessage> = []
  for (const message of messages) {
    if (message.role === "tool") {
      const part: ContentPart = { type: "tool_result", toolCallId: message.toolCallId ?? "", content: [{ type: "text", text: message.content }] }
      const previous = result.at(-1)
      if (previous?.role === "user" && previous.content.every((item) => item.type === "tool_result")) {
        result[result.length - 1] = { role: "user", content: [...previous.content, part] }
      } else {
        result.push({ role: "user", content: [part] })
      }
      continue
    }
    const calls: Array<ContentPart> = (message.toolCalls ?? []).filter((call) => answered.has(call.id)).map((call) => ({
      type: "tool_call",
      id: call.id,
      name: call.name,
      input: call.arguments
    }))
    const text: Array<ContentPart> = message.content === "" ? [] : [{ type: "text", text: message.content }]
    if (text.length + calls.length > 0) result.push({ role: message.role, content: [...text, ...calls] })
  }
  return result
}

/** A stored message made now. */
const stored = (fields: Pick<NewMessage, "role" | "content"> & Partial<NewMessage>, now: Date): NewMessage => ({
  id: newId("msg"),
  toolCalls: null,
  toolCallId: null,
  createdAt: now,
  ...fields
})

/** The messages an event of the loop adds to the thread. */
const messagesOf = (event: AgentEvent<never>, now: Date): ReadonlyArray<NewMessage> => {
  switch (event.type) {
    case "assistant":
      return event.text === "" && event.toolCalls.length === 0
        ? []
        : [stored({ role: "assistant", content: event.text, toolCalls: event.toolCalls.length === 0 ? null : event.toolCalls }, now)]
    case "tool_result":
      return [stored({ role: "tool", content: JSON.stringify(event.result) ?? "null", toolCallId: event.id }, now)]
    case "tool_error":
      return [stored({ role: "tool", content: JSON.stringify({ error: event.error }), toolCallId: event.id }, now)]
    default:
      return []
  }
}

/** The thread named, the caller's own with this counterpart; or none to start one. */
const findThread = (owner: ThreadOwner, threadId: string | undefined) =>
  threadId === undefined
    ? Effect.succeedNone
    : Effect.asSome(Effect.flatMap(
      ThreadsRepo.use((repo) => repo.get(owner, threadId)),
      orRefuse(() => new ThreadNotFound({ id: threadId }))
    ))

/** The project's instructions; 404 for a project the caller cannot see. */
const projectInstructions = (projectId: string | undefined) =>
  projectId === undefined
    ? Effect.succeed(undefined)
    : Effect.map(authorize("projects:read")(Projects.get(projectId)), (project) => project.instructions)

/** The first words of the message, as the new thread's title. */
const titleOf = (message: string) => {
  const line = message.trim().replaceAll(/\s+/g, " ")
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`
}

/**
 * Starts the conversation's message: answers once the model's first event
 * is there (no credits: 403 before anything is stored), with the thread's id
 * and the loop's events, stored as they pass.
 */
export const converse = Effect.fn("Conversation.converse")(function*(
  principal: Principal,
  counterpart: Counterpart,
  request: typeof ChatRequest.Type,
  abilities: Pick<ToolCaller, "platformAction" | "browse">
) {
  const config = yield* AgentsConfig
  const repo = yield* ThreadsRepo
  const owner: ThreadOwner = {
    companyId: principal.companyId,
    ownerKind: counterpart.kind,
    ownerId: counterpart.id,
    userId: principal.userId
  }
  const existing = yield* findThread(owner, request.threadId)
  if (Option.isSome(existing) && request.projectId !== undefined && request.projectId !== existing.value.projectId) {
    return yield* new ThreadProjectMismatch({ threadId: existing.value.id, projectId: existing.value.projectId })
  }
  const projectId = Option.match(existing, {
    onNone: () => request.projectId,
    onSome: (thread) => thread.projectId ?? undefined
  })
  const instructions = yield* projectInstructions(projectId)
  const history = Option.isSome(existing) ? yield* repo.messages(existing.value.id) : []
  const agent = runAgent({
    request: {
      model: counterpart.model ?? config.model,
      system: systemPrompt({ ...counterpart.prompt, projectInstructions: instructions, tools: counterpart.tools }),
      messages: [
        ...toLlmMessages(recent(history, config.historyMessages)),
        { role: "user", content: [{ type: "text", text: request.message }] }
      ]
    },
    tools: agentTools({ principal, projectId, ...abilities }, counterpart.tools),
    maxRounds: config.maxRounds,
    maxMillis: config.timeoutMs,
    maxOutputChars: config.maxOutputChars,
    maxToolResultChars: config.maxToolResultChars,
    call: BilledLlm.rounds(payerOf(principal), "agents")
  })
  const events = yield* afterFirstEvent(agent, (error): error is InsufficientCredits => error instanceof InsufficientCredits)
  const now = yield* currentDate
  const thread: ThreadRecord = Option.isSome(existing) ? existing.value : yield* repo.create({
    id: newId("thr"),
    ...owner,
    projectId: projectId ?? null,
    title: titleOf(request.message),
    createdAt: now,
    updatedAt: now
  })
  yield* repo.append(thread.id, [stored({ role: "user", content: request.message }, now)], now)
  const services = yield* Effect.context<Effect.Services<typeof events extends Stream.Stream<any, any, infer R> ? Effect.Effect<void, never, R> : never>>()
  const kept = events.pipe(
    Stream.tap((event) =>
      Effect.flatMap(currentDate, (at) => {
        const added = messagesOf(event, at)
        return added.length === 0 ? Effect.void : repo.append(thread.id, added, at)
      })
    ),
    Stream.provideContext(services)
  )
  return { threadId: thread.id, events: kept }
})
