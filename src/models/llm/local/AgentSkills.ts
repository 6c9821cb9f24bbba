import type { ToolDefinition } from "../Llm.ts"
import type { RecognisedCall } from "./Instructions.ts"

/**
 * What the offline model does as an agent (docs/agents.md): an explicit
 * "remember …" becomes a `remember` call, "what do you remember about …" or
 * "recall …" a `recall` call, and any other message a `search_knowledge`
 * call for any of the message's words, when those tools are offered. After
 * the tool answered, it replies from the result without understanding it:
 * the passages that share the most words with the question, each with its
 * document's title (extractive, cited), or the memories found.
 */

const rememberPattern = /^\s*(?:please\s+)?(?:remember|note|keep in mind)\s+(?:that\s+)?([^]+?)\s*[.!]?\s*$/i
const recallPattern =
  /^\s*(?:(?:what|which)\s+(?:do|did)\s+you\s+(?:remember|know|recall)(?:\s+about)?|recall|what have i told you(?:\s+about)?)\s*([^]*?)\s*[?.!]?\s*$/i

const offered = (tools: ReadonlyArray<ToolDefinition>, name: string) => tools.find((tool) => tool.name === name)

/** The agent tool the message asks for, with its arguments. */
export const recogniseAgentCall = (prompt: string, tools: ReadonlyArray<ToolDefinition>): RecognisedCall | undefined => {
  const remember = offered(tools, "remember")
  const remembered = rememberPattern.exec(prompt)
  if (remember !== undefined && remembered !== null) return { tool: remember, input: { content: remembered[1]! } }
  const recall = offered(tools, "recall")
  const recalled = recallPattern.exec(prompt)
  if (recall !== undefined && recalled !== null) {
    const about = recalled[1]!.replace(/^(?:me|my|i)\b\s*/i, "").trim()
    return { tool: recall, input: about === "" ? {} : { query: about } }
  }
  const search = offered(tools, "search_knowledge")
  // Full-text search wants every word of a query; a question's words are alternatives, best ranked by how many match.
  const query = [...new Set(prompt.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].join(" or ").slice(0, 2_000)
  return search === undefined || query === "" ? undefined : { tool: search, input: { query } }
}

/** A tool's result as the model read it. */
export interface ReadResult {
  readonly name: string
  readonly text: string
  readonly isError: boolean
}

const words = (text: string) => new Set((text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).map((word) => word.slice(0, 6)))

const sentences = (text: string) =>
  text.replaceAll(/^#+\s.*$/gm, "").split(/(?<=[.!?])\s+|\n{2,}/).map((part) => part.replaceAll(/\s+/g, " ").trim()).filter((part) => part.length > 0)

/** The sentence of `content` sharing the most words with the question (the first on a tie), and how many it shares. */
const bestPassage = (content: string, question: Set<string>) => {
  let best = ""
  let bestScore = -1
  for (const sentence of sentences(content)) {
    const score = [...words(sentence)].filter((word) => question.has(word)).length
    if (score > bestScore) {
      best = sentence
      bestScore = score
    }
  }
  return { text: best.length <= 400 ? best : `${best.slice(0, 399)}…`, score: bestScore }
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const passagesAnswer = (question: string, results: ReadonlyArray<unknown>) => {
  const asked = words(question)
  const candidates = results.filter(isRecord).flatMap((hit) =>
    typeof hit.title === "string" && typeof hit.content === "string"
      ? [{ title: hit.title, passage: bestPassage(hit.content, asked) }]
      : []
  )
  // A passage sharing under half the words of the best one is the search's long tail (one common word): not cited.
  const best = Math.max(1, ...candidates.map((candidate) => candidate.passage.score))
  const passages = candidates.filter((candidate) => candidate.passage.score >= best / 2).slice(0, 3)
  if (passages.length === 0) return `I found nothing in the knowledge base about "${question}".`
  const lines = passages.map((hit, index) => `${index + 1}. "${hit.passage.text}" (${hit.title})`)
  return `From your documents:\n\n${lines.join("\n")}\n\nSources: ${[...new Set(passages.map((hit) => hit.title))].join("; ")}`
}

/** The reply to the tools' results, when they are the agent tools' results; undefined for any other tool. */
export const answerFromResults = (question: string, results: ReadonlyArray<ReadResult>): string | undefined => {
  const replies = results.map((result) => {
    if (result.isError) return `${result.name} failed: ${result.text}`
    const value = parse(result.text)
    if (!isRecord(value)) return undefined
    if (result.name === "search_knowledge" && Array.isArray(value.results)) return passagesAnswer(question, value.results)
    if (result.name === "remember" && isRecord(value.remembered)) return `I will remember that: ${String(value.remembered.content)}`
    if (result.name === "recall" && Array.isArray(value.memories)) {
      const found = value.memories.filter(isRecord).map((memory) => `- ${String(memory.content)}`)
      return found.length === 0 ? "I have nothing remembered about that." : `What I remember:\n${found.join("\n")}`
    }
    return undefined
  })
  return replies.every((reply) => reply !== undefined) ? replies.join("\n\n") : undefined
}
