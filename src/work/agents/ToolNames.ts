import { Schema } from "effect"

/**
 * The tools an agent or employee may use in a conversation (DESIGN §7.2),
 * always with the caller's own rights.
 */
export const agentToolNames = ["search_knowledge", "remember", "recall", "platform_action", "browse_page", "web_research"] as const

export type AgentToolName = (typeof agentToolNames)[number]

export const AgentToolName = Schema.Literals(agentToolNames).annotate({
  description: `A tool an agent may use: ${agentToolNames.join(", ")}`
})

/** An agent's tool list: each tool once. */
export const AgentToolList = Schema.Array(AgentToolName).check(
  Schema.makeFilter((tools: ReadonlyArray<string>) => new Set(tools).size === tools.length || "must name each tool once")
)
