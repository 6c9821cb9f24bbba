import { Config, Context, Effect, Layer } from "effect"
import { positiveInt } from "../../platform/AppConfig.ts"

/** Conversations with agents and employees (docs/agents.md, README). */
export interface AgentsSettings {
  /** `AGENT_MODEL`: the model (or tier) of an agent or employee without its own. */
  readonly model: string
  /** `AGENT_MAX_ROUNDS`: model calls per message. */
  readonly maxRounds: number
  /** `AGENT_TIMEOUT_MS`: a message's wall-clock limit. */
  readonly timeoutMs: number
  /** `AGENT_MAX_OUTPUT_CHARS`: text the model may write per message, over all rounds. */
  readonly maxOutputChars: number
  /** `AGENT_TOOL_RESULT_CHARS`: the most of one tool result the model reads. */
  readonly maxToolResultChars: number
  /** `AGENT_HISTORY_MESSAGES`: earlier messages of a thread the model reads. */
  readonly historyMessages: number
}

export const agentsDefaults: AgentsSettings = {
  model: "balanced",
  maxRounds: 8,
  timeoutMs: 120_000,
  maxOutputChars: 40_000,
  maxToolResultChars: 20_000,
  historyMessages: 40
}

export class AgentsConfig extends Context.Service<AgentsConfig, AgentsSettings>()("agents/AgentsConfig") {
  static readonly fromEnv = Config.all({
    model: Config.String("AGENT_MODEL").pipe(Config.withDefault(agentsDefaults.model)),
    maxRounds: positiveInt("AGENT_MAX_ROUNDS", agentsDefaults.maxRounds),
    timeoutMs: positiveInt("AGENT_TIMEOUT_MS", agentsDefaults.timeoutMs),
    maxOutputChars: positiveInt("AGENT_MAX_OUTPUT_CHARS", agentsDefaults.maxOutputChars),
    maxToolResultChars: positiveInt("AGENT_TOOL_RESULT_CHARS", agentsDefaults.maxToolResultChars),
    historyMessages: positiveInt("AGENT_HISTORY_MESSAGES", agentsDefaults.historyMessages)
  })

  static readonly layer = Layer.effect(AgentsConfig, Effect.orDie(AgentsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<AgentsSettings> = {}) =>
    Layer.succeed(AgentsConfig, { ...agentsDefaults, ...overrides })
}
