import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { text as readBody } from "node:stream/consumers"

/**
 * A model provider on loopback that plays a scripted multi-round tool
 * conversation, in both wire formats: OpenAI-compatible streaming
 * (`/v1/chat/completions`) and Anthropic's (`/v1/messages`). The n-th request
 * since `play` gets the n-th turn of the script (the last turn repeats); every turn reports
 * `scriptedTurnUsage`. A `hang` turn streams its text and then waits, never
 * finishing, so that a client can leave mid-stream; `abandoned()` counts the
 * streams the client closed before their end.
 */

export interface ScriptedToolCall {
  readonly name: string
  readonly arguments: Record<string, unknown>
}

export interface ScriptedTurn {
  readonly text?: string
  readonly toolCalls?: ReadonlyArray<ScriptedToolCall>
  readonly hang?: boolean
}

export interface ScriptedUpstream {
  /** For `OPENAI_BASE_URL` (ends with `/v1`). */
  readonly openaiUrl: string
  /** For `ANTHROPIC_BASE_URL`. */
  readonly anthropicUrl: string
  /** Request bodies, in order. */
  readonly requests: Array<any>
  readonly abandoned: () => number
  /** Plays `script` from its first turn on (requests recorded so far are forgotten). */
  readonly play: (script: ReadonlyArray<ScriptedTurn>) => void
  readonly close: () => Promise<void>
}

export const scriptedTurnUsage = { input: 100, output: 10 }

/** Text in two pieces, so that deltas are really streamed. */
const pieces = (text: string) => {
  const half = Math.ceil(text.length / 2)
  return [text.slice(0, half), text.slice(half)].filter((piece) => piece !== "")
}

const openAiEvents = (turn: ScriptedTurn, call: number): Array<string> => {
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: `chatcmpl-${call}`,
    object: "chat.completion.chunk",
    created: 0,
    model: "scripted",
    choices: [{ index: 0, delta, finish_reason: finish }]
  })
  const events: Array<unknown> = [chunk({ role: "assistant", content: "" })]
  for (const piece of pieces(turn.text ?? "")) events.push(chunk({ content: piece }))
  if (turn.hang === true) return events.map((event) => JSON.stringify(event))
  ;(turn.toolCalls ?? []).forEach((tool, index) => {
    const json = JSON.stringify(tool.arguments)
    events.push(chunk({ tool_calls: [{ index, id: `call_${call}_${index}`, type: "function", function: { name: tool.name, arguments: "" } }] }))
    for (const piece of pieces(json)) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
  })
  events.push(chunk({}, (turn.toolCalls ?? []).length > 0 ? "tool_calls" : "stop"))
  events.push({
    id: `chatcmpl-${call}`,
    object: "chat.completion.chunk",
    created: 0,
    model: "scripted",
    choices: [],
    usage: { prompt_tokens: scriptedTurnUsage.input, completion_tokens: scriptedTurnUsage.output, total_tokens: 110 }
  })
  return [...events.map((event) => JSON.stringify(event)), "[DONE]"]
}

const anthropicEvents = (turn: ScriptedTurn, call: number): Array<[string, unknown]> => {
  const events: Array<[string, unknown]> = [[
    "message_start",
    {
      type: "message_start",
      message: {
        id: `msg_${call}`,
        type: "message",
        role: "assistant",
        model: "scripted",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: scriptedTurnUsage.input, output_tokens: 0 }
      }
    }
  ]]
  let index = 0
  if (turn.text !== undefined) {
    events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }])
    for (const piece of pieces(turn.text)) {
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }])
    }
    if (turn.hang === true) return events
    events.push(["content_block_stop", { type: "content_block_stop", index }])
    index++
  }
  for (const tool of turn.toolCalls ?? []) {
    events.push(["content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: `toolu_${call}_${index}`, name: tool.name, input: {} }
    }])
    for (const piece of pieces(JSON.stringify(tool.arguments))) {
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }])
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }])
    index++
  }
  events.push(["message_delta", {
    type: "message_delta",
    delta: { stop_reason: (turn.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: scriptedTurnUsage.output }
  }])
  events.push(["message_stop", { type: "message_stop" }])
  return events
}

export const startScriptedUpstream = async (): Promise<ScriptedUpstream> => {
  const requests: Array<any> = []
  let script: ReadonlyArray<ScriptedTurn> = []
  let abandoned = 0
  const answer = (response: ServerResponse, lines: ReadonlyArray<string>, hang: boolean) => {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    let ended = false
    response.on("close", () => {
      if (!ended) abandoned++
    })
    for (const line of lines) response.write(line)
    if (!hang) {
      ended = true
      response.end()
    }
  }
  const server = createServer(async (request, response) => {
    const body = JSON.parse(await readBody(request))
    const call = requests.push(body) - 1
    const turn = script[Math.min(call, script.length - 1)] ?? { text: "Done." }
    const hang = turn.hang === true
    if (request.url === "/v1/chat/completions") {
      answer(response, openAiEvents(turn, call).map((data) => `data: ${data}\n\n`), hang)
    } else if (request.url === "/v1/messages") {
      answer(response, anthropicEvents(turn, call).map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`), hang)
    } else {
      response.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    openaiUrl: `http://127.0.0.1:${port}/v1`,
    anthropicUrl: `http://127.0.0.1:${port}`,
    requests,
    abandoned: () => abandoned,
    play: (next) => {
      script = next
      requests.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
