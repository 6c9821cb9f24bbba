import { Option } from "effect"
import type { ModelEntry } from "../../platform/AppConfig.ts"
import { type CatalogModel, isEmbeddingModel, type ProviderName, type Tier } from "./Llm.ts"
import { localEmbeddingDimensions } from "./local/LocalEmbedding.ts"

/**
 * The model catalog: platform model ids, the provider serving each, the
 * upstream model name and the tier. `LLM_MODELS` lists it; without it, each
 * configured provider brings a default set, and with no provider at all the
 * offline `local` models serve every tier.
 */

export const tiers: ReadonlyArray<Tier> = ["highest", "balanced", "fastest"]

/** What the catalog is built from (the `LLM_*`, `OPENAI_*` and `ANTHROPIC_*` settings). */
export interface CatalogSettings {
  readonly llmModels: Option.Option<ReadonlyArray<ModelEntry>>
  readonly openaiBaseUrl: Option.Option<string>
  readonly openaiApiKey: Option.Option<unknown>
  readonly anthropicBaseUrl: Option.Option<string>
  readonly anthropicApiKey: Option.Option<unknown>
}

const entries = (provider: ProviderName, models: ReadonlyArray<readonly [string, Tier]>): Array<CatalogModel> =>
  models.map(([id, tier]) => ({ id, provider, upstream: id, tier }))

/** The offline demo models, one per tier, and the offline embedding model (`local/LocalEmbedding.ts`). */
export const localModels: ReadonlyArray<CatalogModel> = [
  ...entries("local", [
    ["local-highest", "highest"],
    ["local-balanced", "balanced"],
    ["local-fastest", "fastest"]
  ]),
  { id: "local-embedding", provider: "local", upstream: "local-embedding", kind: "embedding", dimensions: localEmbeddingDimensions }
]

const anthropicDefaults = entries("anthropic", [
  ["claude-opus-4-1", "highest"],
  ["claude-sonnet-4-5", "balanced"],
  ["claude-haiku-4-5", "fastest"]
])

const openaiDefaults = entries("openai", [
  ["gpt-4.1", "highest"],
  ["gpt-4.1-mini", "balanced"],
  ["gpt-4.1-nano", "fastest"]
])

export const isOpenAiConfigured = (settings: CatalogSettings) =>
  Option.isSome(settings.openaiBaseUrl) || Option.isSome(settings.openaiApiKey)

export const isAnthropicConfigured = (settings: CatalogSettings) =>
  Option.isSome(settings.anthropicBaseUrl) || Option.isSome(settings.anthropicApiKey)

/** The catalog the settings describe, or why they are inconsistent. */
export const catalogFrom = (settings: CatalogSettings): { models: ReadonlyArray<CatalogModel> } | { error: string } => {
  if (Option.isNone(settings.llmModels)) {
    const configured = [
      ...(isAnthropicConfigured(settings) ? anthropicDefaults : []),
      ...(isOpenAiConfigured(settings) ? openaiDefaults : [])
    ]
    return { models: configured.length > 0 ? configured : localModels }
  }
  const listed = settings.llmModels.value
  if (listed.length === 0) return { error: "LLM_MODELS lists no model" }
  const seen = new Set<string>()
  for (const entry of listed) {
    if (seen.has(entry.id)) return { error: `LLM_MODELS lists model ${entry.id} twice` }
    seen.add(entry.id)
    if (entry.provider === "openai" && !isOpenAiConfigured(settings)) {
      return { error: `LLM_MODELS model ${entry.id} uses provider openai, but neither OPENAI_BASE_URL nor OPENAI_API_KEY is set` }
    }
    if (entry.provider === "anthropic" && !isAnthropicConfigured(settings)) {
      return { error: `LLM_MODELS model ${entry.id} uses provider anthropic, but neither ANTHROPIC_BASE_URL nor ANTHROPIC_API_KEY is set` }
    }
  }
  return { models: listed.map((entry) => ({ ...entry, upstream: entry.upstream ?? entry.id })) }
}

/** The tier a client's own model naming asks for: opus-class → highest, sonnet → balanced, haiku → fastest. */
export const tierOfName = (model: string): Tier | undefined => {
  const name = model.toLowerCase()
  if ((tiers as ReadonlyArray<string>).includes(name)) return name as Tier
  if (name.includes("opus")) return "highest"
  if (name.includes("sonnet")) return "balanced"
  if (name.includes("haiku")) return "fastest"
  return undefined
}

/** Where a tier falls back to when the catalog has no model of that tier. */
const fallbackOrder: Record<Tier, ReadonlyArray<Tier>> = {
  highest: ["highest", "balanced", "fastest"],
  balanced: ["balanced", "highest", "fastest"],
  fastest: ["fastest", "balanced", "highest"]
}

/**
 * The catalog model serving `model`: the one with that id, else the first
 * model of the tier its name asks for (or the nearest tier), else none.
 */
export const resolveModel = (models: ReadonlyArray<CatalogModel>, model: string): CatalogModel | undefined => {
  const exact = models.find((entry) => entry.id === model)
  if (exact !== undefined) return exact
  const tier = tierOfName(model)
  if (tier === undefined) return undefined
  // Tier names ask for a model that chats: embedding models are only reached by their id.
  const chatModels = models.filter((entry) => !isEmbeddingModel(entry))
  for (const candidate of fallbackOrder[tier]) {
    const found = chatModels.find((entry) => entry.tier === candidate)
    if (found !== undefined) return found
  }
  return chatModels[0]
}

/** What a model costs, in credits per million tokens, and the most output tokens one call may produce. */
export interface ModelPrice {
  readonly inputCreditsPerMillion: number
  readonly outputCreditsPerMillion: number
  readonly maxOutputTokens: number
}

/**
 * Prices of models that set none in `LLM_MODELS`, per tier (about one credit
 * per US$0.001 of the list prices of each tier's default models); the local
 * demo models cost one credit per thousand tokens either way.
 */
export const defaultPrices: Record<Tier | "local", ModelPrice> = {
  highest: { inputCreditsPerMillion: 15_000, outputCreditsPerMillion: 75_000, maxOutputTokens: 32_000 },
  balanced: { inputCreditsPerMillion: 3_000, outputCreditsPerMillion: 15_000, maxOutputTokens: 64_000 },
  fastest: { inputCreditsPerMillion: 1_000, outputCreditsPerMillion: 5_000, maxOutputTokens: 64_000 },
  local: { inputCreditsPerMillion: 1_000, outputCreditsPerMillion: 1_000, maxOutputTokens: 4_096 }
}

/** The model's price: its own `LLM_MODELS` fields, else its provider's or tier's default (untiered: `balanced`). */
export const priceOf = (model: CatalogModel): ModelPrice => {
  const defaults = defaultPrices[model.provider === "local" ? "local" : model.tier ?? "balanced"]
  return {
    inputCreditsPerMillion: model.inputCreditsPerMillion ?? defaults.inputCreditsPerMillion,
    outputCreditsPerMillion: model.outputCreditsPerMillion ?? defaults.outputCreditsPerMillion,
    maxOutputTokens: model.maxOutputTokens ?? defaults.maxOutputTokens
  }
}
