import { createParser } from "eventsource-parser"

/**
 * A design-chat client over real HTTP: POSTs a chat and reads its
 * server-sent events with `eventsource-parser`.
 */

export interface ChatEvent {
  readonly event: string
  readonly data: any
}

export interface ChatOptions {
  /** Abort the request once this returns true for an event received (a client that leaves). */
  readonly leaveAfter?: (event: ChatEvent) => boolean
}

export interface ChatAnswer {
  readonly status: number
  readonly contentType: string | null
  /** The parsed events, or the JSON error body when the status is not 200. */
  readonly events: ReadonlyArray<ChatEvent>
  readonly error?: unknown
}

export const postJson = async (base: string, apiKey: string, path: string, body: unknown, method = "POST") => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as { readonly id: string; readonly [field: string]: unknown } }
}

export const streamChat = async (
  base: string,
  apiKey: string,
  path: string,
  body: unknown,
  options: ChatOptions = {}
): Promise<ChatAnswer> => {
  const controller = new AbortController()
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: controller.signal
  })
  const contentType = response.headers.get("content-type")
  if (response.status !== 200) return { status: response.status, contentType, events: [], error: await response.json() }
  const events: Array<ChatEvent> = []
  let left = false
  const parser = createParser({
    onEvent: (message) => {
      const event = { event: message.event ?? "message", data: JSON.parse(message.data) }
      events.push(event)
      if (!left && options.leaveAfter?.(event) === true) {
        left = true
        controller.abort()
      }
    }
  })
  const decoder = new TextDecoder()
  const reader = response.body!.getReader()
  // After leaving, the aborted body is dropped as it is: cancelling it would wait on a connection that is gone.
  while (!left) {
    const chunk = await reader.read()
    if (chunk.done) break
    parser.feed(decoder.decode(chunk.value, { stream: true }))
  }
  return { status: response.status, contentType, events }
}
