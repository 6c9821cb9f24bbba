import type { ToolDefinition } from "../Llm.ts"

/**
 * The offline model's one skill beyond echoing: simple editing
 * instructions — "change the headline to Spring sale", "set the subject to
 * …" — become a tool call, so that a tool-using feature (the design chat)
 * does something useful on a machine without a model provider.
 */

const instruction = /\b(?:change|set|make|update|rename)\s+(?:the\s+)?([a-z][a-z -]*?)\s+(?:to|into)\s+["“']?([^]*?)["”']?\s*\.?\s*$/i

/** Words for parts of an e-mail, and the CSS selector of each. */
const elementSelectors: Record<string, string> = {
  headline: "h1",
  heading: "h1",
  title: "h1",
  subheading: "h2",
  subtitle: "h2",
  button: "a",
  link: "a",
  paragraph: "p"
}

export interface RecognisedCall {
  readonly tool: ToolDefinition
  readonly input: Record<string, unknown>
}

const firstProperty = (tool: ToolDefinition) => {
  const required = tool.inputSchema.required
  return Array.isArray(required) && typeof required[0] === "string" ? required[0] : undefined
}

/**
 * The call an instruction asks for among the offered tools: a tool named
 * after the part (`set_subject` for "the subject") with the new value as its
 * one argument, else `set_text` on the element the word names.
 */
export const recogniseInstruction = (prompt: string, tools: ReadonlyArray<ToolDefinition>): RecognisedCall | undefined => {
  const match = instruction.exec(prompt.trim())
  if (match === null) return undefined
  const target = match[1]!.trim().toLowerCase()
  const value = match[2]!
  const named = tools.find((tool) => tool.name.toLowerCase() === `set_${target.replaceAll(/\s+/g, "_")}`)
  const property = named === undefined ? undefined : firstProperty(named)
  if (named !== undefined && property !== undefined) return { tool: named, input: { [property]: value } }
  const selector = elementSelectors[target.split(/\s+/).at(-1) ?? ""]
  const setText = tools.find((tool) => tool.name === "set_text")
  return selector === undefined || setText === undefined ? undefined : { tool: setText, input: { selector, text: value } }
}
