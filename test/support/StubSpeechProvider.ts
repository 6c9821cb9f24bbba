import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A stand-in OpenAI-compatible speech provider on loopback
 * (`POST /v1/audio/speech`, bearer `key`). It records every request body and
 * answers `audio` (any bytes: the platform passes them on) under the
 * format's content type. An input containing `[refuse]` answers 400 with
 * OpenAI's error shape.
 */
export interface StubSpeechProvider {
  readonly url: string
  readonly key: string
  readonly audio: Uint8Array
  readonly requests: Array<Readonly<Record<string, unknown>>>
  readonly close: () => Promise<void>
}

export const startStubSpeechProvider = (key = "speech-test-secret") =>
  new Promise<StubSpeechProvider>((resolve) => {
    const requests: Array<Readonly<Record<string, unknown>>> = []
    const audio = new Uint8Array(Buffer.concat([Buffer.from("ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000", "latin1"), Buffer.alloc(64, 0x55)]))
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => {
        if (request.url !== "/v1/audio/speech" || request.headers.authorization !== `Bearer ${key}`) {
          response.writeHead(401, { "content-type": "application/json" })
          return response.end(JSON.stringify({ error: { message: "Incorrect API key" } }))
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>
        requests.push(body)
        if (String(body.input).includes("[refuse]")) {
          response.writeHead(400, { "content-type": "application/json" })
          return response.end(JSON.stringify({ error: { message: "Input is not allowed" } }))
        }
        response.writeHead(200, { "content-type": "audio/mpeg" })
        response.end(audio)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        key,
        audio,
        requests,
        close: () => new Promise<void>((done) => server.close(() => done()))
      })
    })
  })
