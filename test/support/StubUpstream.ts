import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { text as readBody } from "node:stream/consumers"

/**
 * A stand-in OpenAI-compatible chat-completions server on loopback, for the
 * gateway's end-to-end tests and benchmark. It records every request and
 * answers deterministically:
 * - a turn that offers tools and does not end with a tool result calls the
 *   first tool with `{"city":"Paris"}`;
 * - after a tool result it answers `The tool said: <result>`;
 * - otherwise `Hello from <upstream model>`;
 * - a last user message containing `[slow]` streams a chunk every 20 ms (at
 *   most 500) so that a client can leave mid-stream; `[stall]` streams its
 *   first chunk and then falls silent until the client leaves; `[fail-400]` answers 400;
 *   `[flaky]` answers 503 to every other attempt.
 * Usage is reported as 21 prompt (3 cached) and 7 completion tokens, unless `usage` says otherwise.
 * `delayMs` makes every answer (a stream's first byte) wait, so that many
 * calls are in flight at once.
 */

export interface RecordedRequest {
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: any
}

export interface StubUpstream {
  /** The OpenAI-style base URL (`…/v1`). */
  readonly url: string
  readonly requests: Array<RecordedRequest>
  /** Streams the client closed before they ended. */
  readonly abandonedStreams: () => number
  readonly close: () => Promise<void>
}

export const stubUsage = { prompt_tokens: 21, completion_tokens: 7, total_tokens: 28, prompt_tokens_details: { cached_tokens: 3 } }

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part) => (typeof part?.text === "string" ? part.text : "")).join(" ")
    : ""

const json = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

export type Reply = { readonly text: string } | { readonly tool: { readonly id: string; readonly name: string; readonly arguments: string } }

const replyTo = (body: any): Reply => {
  const messages: Array<any> = body.messages ?? []
  const last = messages.at(-1)
  if (last?.role === "tool") return { text: `The tool said: ${textOf(last.content)}` }
  const tool = body.tools?.[0]?.function?.name
  if (typeof tool === "string") return { tool: { id: "call_stub_1", name: tool, arguments: "{\"city\":\"Paris\"}" } }
  return { text: `Hello from ${body.model}` }
}

const created = 1_700_000_000

/** Tokens the stub reports per embedded text. */
export const stubTokensPerText = 5

/** The stub's embedding of the `index`-th text: its length, its index, then ones up to `dimensions` (default 3). */
export const stubVector = (text: string, index: number, dimensions = 3) =>
  Array.from({ length: dimensions }, (_, at) => (at === 0 ? text.length : at === 1 ? index : 1))

const stubEmbeddings = (body: any) => {
  const input: Array<string> = typeof body.input === "string" ? [body.input] : body.input
  return {
    object: "list",
    model: body.model,
    // Out of order on purpose: clients must place vectors by `index`.
    data: input.map((text, index) => ({ object: "embedding", index, embedding: stubVector(text, index, body.dimensions) })).reverse(),
    usage: { prompt_tokens: stubTokensPerText * input.length, total_tokens: stubTokensPerText * input.length }
  }
}

export interface StubOptions {
  /** `false` keeps no request (for benchmarks, whose millions of requests would only cost memory). */
  readonly record?: boolean
  /** Waits this long before answering. */
  readonly delayMs?: number
  /** A text answer for a request (its last user message's text), in place of the default rules when defined. */
  readonly answer?: (lastUserText: string) => string | undefined
  /** The whole answer to a request (text or a tool call: a scripted model), before `answer` and the default rules. */
  readonly reply?: (body: any) => Reply | undefined
  /** The usage every answer reports, in place of `stubUsage` (e.g. far more prompt tokens than the request has). */
  readonly usage?: typeof stubUsage
}

export const startStubUpstream = async (options: StubOptions = {}): Promise<StubUpstream> => {
  const requests: Array<RecordedRequest> = []
  const attempts = new Map<string, number>()
  const usage = options.usage ?? stubUsage
  let abandoned = 0

  const complete = (response: ServerResponse, body: any, reply: Reply) =>
    json(response, 200, {
      id: "chatcmpl-stub",
      object: "chat.completion",
      created,
      model: body.model,
      choices: [{
        index: 0,
        message: "text" in reply
          ? { role: "assistant", content: reply.text, refusal: null }
          : {
            role: "assistant",
            content: null,
            tool_calls: [{ id: reply.tool.id, type: "function", function: { name: reply.tool.name, arguments: reply.tool.arguments } }]
          },
        finish_reason: "text" in reply ? "stop" : "tool_calls",
        logprobs: null
      }],
      usage
    })

  const stream = (request: IncomingMessage, response: ServerResponse, body: any, reply: Reply, pace: "fast" | "slow" | "stall") => {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    const chunk = (delta: unknown, finish: string | null = null, usage: unknown = undefined) =>
      `data: ${JSON.stringify({
        id: "chatcmpl-stub",
        object: "chat.completion.chunk",
        created,
        model: body.model,
        choices: usage === undefined ? [{ index: 0, delta, finish_reason: finish }] : [],
        ...(usage === undefined ? {} : { usage })
      })}\n\n`
    const pieces = "text" in reply
      ? reply.text.split(/(?<= )/).map((word) => chunk({ content: word }))
      : [
        chunk({ tool_calls: [{ index: 0, id: reply.tool.id, type: "function", function: { name: reply.tool.name, arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: reply.tool.arguments.slice(0, 5) } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: reply.tool.arguments.slice(5) } }] })
      ]
    const ending = [
      chunk({}, "text" in reply ? "stop" : "tool_calls"),
      ...(body.stream_options?.include_usage ? [chunk({}, null, usage)] : []),
      "data: [DONE]\n\n"
    ]
    response.write(chunk({ role: "assistant", content: "" }))
    if (pace === "stall") return
    if (pace === "fast") {
      response.end([...pieces, ...ending].join(""))
      return
    }
    let sent = 0
    const timer = setInterval(() => {
      if (sent < 500) {
        response.write(chunk({ content: `word${sent++} ` }))
        return
      }
      clearInterval(timer)
      response.end(ending.join(""))
    }, 20)
    request.socket.on("close", () => {
      if (sent < 500) abandoned++
      clearInterval(timer)
    })
  }

  const server = createServer(async (request, response) => {
    const text = await readBody(request)
    const body = text === "" ? {} : JSON.parse(text)
    if (options.record !== false) requests.push({ path: request.url ?? "", headers: request.headers, body })
    if (request.method === "POST" && request.url === "/v1/embeddings") return json(response, 200, stubEmbeddings(body))
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
      return json(response, 404, { error: { message: `No route ${request.method} ${request.url}` } })
    }
    const lastText = textOf(body.messages?.at(-1)?.content)
    if (lastText.includes("[fail-400]")) {
      return json(response, 400, { error: { message: "The stub refuses this request", type: "invalid_request_error" } })
    }
    if (lastText.includes("[flaky]")) {
      const attempt = (attempts.get(lastText) ?? 0) + 1
      attempts.set(lastText, attempt)
      if (attempt % 2 === 1) return json(response, 503, { error: { message: "Overloaded, try again" } })
    }
    if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs))
    const answer = options.answer?.(lastText)
    const reply = options.reply?.(body) ?? (answer === undefined ? replyTo(body) : { text: answer })
    if (body.stream === true) {
      return stream(request, response, body, reply, lastText.includes("[slow]") ? "slow" : lastText.includes("[stall]") ? "stall" : "fast")
    }
    return complete(response, body, reply)
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    abandonedStreams: () => abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
