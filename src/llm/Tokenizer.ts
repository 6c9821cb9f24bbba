import { Effect } from "effect"
import type { ContentPart, LlmRequest, TokenUsage } from "./Llm.ts"

/**
 * Token counting with a real BPE tokenizer (`o200k_base`, bundled with
 * `gpt-tokenizer`; nothing is downloaded). Providers' own tokenizers differ,
 * so for other vendors' models the count is a close estimate, not their bill.
 * The encoding loads on first use (~0.2 s), not at start-up.
 */

type Encoding = typeof import("gpt-tokenizer/encoding/o200k_base")

let encoding: Promise<Encoding> | undefined

/** Text that merely looks like a special token is counted as text, never rejected. */
const asPlainText = { disallowedSpecial: new Set<string>() }

/** Tokens an image is counted as: about what a ~1 megapixel image costs at Anthropic and OpenAI. */
export const imageTokens = 1_600

/** Framing tokens per message (role and separators), as OpenAI's chat format counts them. */
const perMessage = 3

export interface TokenCounter {
  readonly text: (text: string) => number
  /** Every input token of a request: system prompt, messages and tool definitions. */
  readonly request: (request: LlmRequest) => number
  /** Usage estimated for a provider that reported none: the request in, `generated` text out. */
  readonly estimate: (request: LlmRequest, generated: string) => TokenUsage
}

const makeCounter = (encoder: Encoding): TokenCounter => {
  const text = (value: string) => (value.length === 0 ? 0 : encoder.countTokens(value, asPlainText))
  const part = (content: ContentPart): number => {
    switch (content.type) {
      case "text":
        return text(content.text)
      case "image":
        return imageTokens
      case "tool_call":
        return text(content.name) + text(JSON.stringify(content.input ?? {}))
      case "tool_result":
        return content.content.reduce((sum, inner) => sum + part(inner), 0)
    }
  }
  const request = (input: LlmRequest) => {
    let total = input.system === undefined ? 0 : text(input.system) + perMessage
    for (const message of input.messages) {
      total += perMessage
      for (const content of message.content) total += part(content)
    }
    for (const tool of input.tools ?? []) {
      total += text(tool.name) + text(tool.description ?? "") + text(JSON.stringify(tool.inputSchema))
    }
    return total
  }
  return {
    text,
    request,
    estimate: (input, generated) => ({ inputTokens: request(input), outputTokens: text(generated), cachedTokens: 0 })
  }
}

/** The tokenizer, loaded once per process. */
export const tokenCounter: Effect.Effect<TokenCounter> = Effect.map(
  Effect.promise(() => (encoding ??= import("gpt-tokenizer/encoding/o200k_base"))),
  makeCounter
)
