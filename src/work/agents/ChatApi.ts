import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { SseEvent } from "../../models/gateway/Sse.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { NonBlankText } from "../../platform/Schemas.ts"

/** `POST /agents/{agent_id}/chat` and `/employees/{employee_id}/chat` (DESIGN §7.2). */
export const ChatRequest = Schema.Struct({
  message: NonBlankText(20_000),
  /** Continues this thread; none starts one. */
  threadId: Schema.optional(Schema.String.check(Schema.isMaxLength(100))),
  /** Scopes search_knowledge to this project's documents (and those of no project) and adds the project's instructions. */
  projectId: Schema.optional(Schema.String.check(Schema.isMaxLength(100))),
  /** Server-sent events (default) or one JSON answer. */
  stream: Schema.optional(Schema.Boolean)
}).annotate({
  identifier: "AgentChatRequest",
  examples: [{ message: "What is our refund window?", stream: false }]
})

export const ToolCall = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.Unknown })

/** A tool call of the answer with what it returned (`result`) or why it failed (`error`). */
export const AnsweredToolCall = Schema.Struct({
  ...ToolCall.fields,
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.String)
})

export const ChatUsage = Schema.Struct({ inputTokens: Schema.Int, outputTokens: Schema.Int })

export const ChatReply = Schema.Struct({
  threadId: Schema.String,
  message: Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.String }),
  toolCalls: Schema.Array(AnsweredToolCall),
  usage: ChatUsage
}).annotate({ identifier: "AgentChatReply" })

export const ThreadMessage = Schema.Struct({
  id: Schema.String,
  role: Schema.Literals(["user", "assistant", "tool"]),
  content: Schema.String,
  toolCalls: Schema.optional(Schema.Array(ToolCall)),
  toolCallId: Schema.optional(Schema.String),
  /** Epoch milliseconds. */
  created: Schema.Number
}).annotate({ identifier: "ThreadMessage" })

const threadFields = {
  id: Schema.String,
  title: Schema.String,
  projectId: Schema.NullOr(Schema.String),
  /** Epoch milliseconds. */
  created: Schema.Number,
  updated: Schema.Number
}

export const ThreadSummary = Schema.Struct(threadFields).annotate({ identifier: "ThreadSummary" })

export const Thread = Schema.Struct({ ...threadFields, messages: Schema.Array(ThreadMessage) }).annotate({ identifier: "Thread" })

const errors = [BadRequest, Forbidden, NotFound]

const eventsDescription =
  "With `stream` (default) the answer is `text/event-stream`: `text` {delta}, `tool_call` {id, name, arguments}, `tool_result` {id, name, result} or {id, name, error}, and last exactly one of `done` {threadId, usage} or `error` {error}; " +
  "with `stream: false` one JSON `{threadId, message, toolCalls, usage}`. Tools run with the caller's own rights. Billed by tokens under feature `agents`; a client that disconnects stops the agent. Errors before the answer starts are statuses."

const chatErrors = {
  400: "an empty message, unknown fields",
  403: "naming the missing role or feature, or without credits",
  404: "another company's agent or employee, an unknown threadId or projectId"
}

const agentPath = { agent_id: Schema.String }
const employeePath = { employee_id: Schema.String }
const events = HttpApiSchema.StreamSse({ events: SseEvent })

/** Conversations with agents and employees, and their stored threads. */
export class AgentChatApi extends HttpApiGroup.make("agentChat")
  .annotateMerge(OpenApi.annotations({
    description: "Conversations with agents and employees: a model with tools (knowledge search, memories, platform actions) answering as the agent, kept as threads.",
    override: { "x-displayName": "Agent conversations" }
  })).add(
  HttpApiEndpoint.post("agentChat", "/agents/:agent_id/chat", {
    params: agentPath,
    payload: ChatRequest,
    success: [ChatReply, events],
    error: errors
  }).pipe(described({
    summary: "Talk to an agent",
    does: `Sends a message to the agent, in a new thread or the one named, and answers as the agent with the tools it lists. ${eventsDescription}`,
    who: "agents:chat",
    errors: chatErrors
  })),
  HttpApiEndpoint.post("employeeChat", "/employees/:employee_id/chat", {
    params: employeePath,
    payload: ChatRequest,
    success: [ChatReply, events],
    error: errors
  }).pipe(described({
    summary: "Talk to an employee",
    does: `Sends a message to the employee (its role and instructions are its prompt), in a new thread or the one named. ${eventsDescription}`,
    who: "agents:chat",
    errors: chatErrors
  })),
  HttpApiEndpoint.get("agentThreads", "/agents/:agent_id/threads", {
    params: agentPath,
    query: PageQuery,
    success: Page(ThreadSummary),
    error: errors
  }).pipe(described({
    summary: "List an agent's threads",
    does: "The caller's conversations with the agent, newest first, paginated.",
    who: "agents:chat",
    errors: { 404: "another company's agent" }
  })),
  HttpApiEndpoint.get("agentThread", "/agents/:agent_id/threads/:threadId", {
    params: { ...agentPath, threadId: Schema.String },
    success: Thread,
    error: errors
  }).pipe(described({
    summary: "Get an agent's thread",
    does: "One of the caller's conversations with the agent, with every message, tool call and tool result in order.",
    who: "agents:chat",
    errors: { 404: "another company's agent, an unknown thread or another person's" }
  })),
  HttpApiEndpoint.get("employeeThreads", "/employees/:employee_id/threads", {
    params: employeePath,
    query: PageQuery,
    success: Page(ThreadSummary),
    error: errors
  }).pipe(described({
    summary: "List an employee's threads",
    does: "The caller's conversations with the employee, newest first, paginated.",
    who: "agents:chat",
    errors: { 404: "another company's employee" }
  })),
  HttpApiEndpoint.get("employeeThread", "/employees/:employee_id/threads/:threadId", {
    params: { ...employeePath, threadId: Schema.String },
    success: Thread,
    error: errors
  }).pipe(described({
    summary: "Get an employee's thread",
    does: "One of the caller's conversations with the employee, with every message, tool call and tool result in order.",
    who: "agents:chat",
    errors: { 404: "another company's employee, an unknown thread or another person's" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
