import { refusal } from "../../platform/Refusal.ts"

/** No agent with this id in the caller's company. */
export class AgentNotFound extends refusal("NotFound", "AgentNotFound", ({ id }: { readonly id: string }) => `Agent ${id} not found`) {}

/** No employee with this id in the caller's company. */
export class EmployeeNotFound extends refusal(
  "NotFound",
  "EmployeeNotFound",
  ({ id }: { readonly id: string }) => `Employee ${id} not found`
) {}

/** No thread with this id between the caller and this agent or employee. */
export class ThreadNotFound extends refusal("NotFound", "ThreadNotFound", ({ id }: { readonly id: string }) => `Thread ${id} not found`) {}

/** A thread keeps the project it started in. */
export class ThreadProjectMismatch extends refusal(
  "Invalid",
  "ThreadProjectMismatch",
  ({ threadId, projectId }: { readonly threadId: string; readonly projectId: string | null }) =>
    `projectId: thread ${threadId} belongs to ${projectId === null ? "no project" : `project ${projectId}`}`
) {}

/** The agent stopped before it was done (rounds, time or output limit), in a JSON conversation. */
export class ConversationStopped extends refusal(
  "Limited",
  "ConversationStopped",
  ({ reason }: { readonly reason: string }) => reason
) {}

/** A paused or archived agent does not talk. */
export class AgentNotActive extends refusal(
  "Invalid",
  "AgentNotActive",
  ({ id, status }: { readonly id: string; readonly status: string }) => `Agent ${id} is ${status}: set its status to active to talk to it`
) {}
