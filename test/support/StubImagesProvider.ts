import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { png } from "./Images.ts"

/**
 * A stand-in OpenAI-compatible images provider on loopback
 * (`POST /v1/images/generations`, bearer `key`). It records every request
 * body and answers `n` black PNGs of the requested size (64×64 for `auto` or
 * none) in base64, with a `revised_prompt` for `dall-e-3`. Prompts steer
 * failures: `[refuse]` answers 400 with OpenAI's error shape, `[busy]` always
 * 429, `[url]` answers a URL on this very server instead of the bytes,
 * `[text]` bytes that are not an image.
 */
export interface StubImagesProvider {
  readonly url: string
  readonly key: string
  readonly requests: Array<Readonly<Record<string, unknown>>>
  readonly close: () => Promise<void>
}

const bodyOf = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
  })

export const startStubImagesProvider = (key = "images-test-secret") =>
  new Promise<StubImagesProvider>((resolve) => {
    const requests: Array<Readonly<Record<string, unknown>>> = []
    let base = ""
    const server = createServer(async (request, response) => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json" })
        response.end(JSON.stringify(body))
      }
      if (request.url === "/image.png") {
        response.writeHead(200, { "content-type": "image/png" })
        return response.end(png(8, 8))
      }
      if (request.method !== "POST" || request.url !== "/v1/images/generations") return answer(404, { error: { message: "Unknown path" } })
      if (request.headers.authorization !== `Bearer ${key}`) return answer(401, { error: { message: "Incorrect API key" } })
      const body = JSON.parse(await bodyOf(request)) as Record<string, any>
      requests.push(body)
      const prompt = String(body.prompt)
      if (prompt.includes("[refuse]")) {
        return answer(400, { error: { message: "Your request was rejected as a result of our safety system.", code: "content_policy_violation" } })
      }
      if (prompt.includes("[busy]")) return answer(429, { error: { message: "Rate limit reached for images" } })
      const [width, height] = typeof body.size === "string" && body.size !== "auto" ? body.size.split("x").map(Number) : [64, 64]
      const image = (): Record<string, string> => {
        if (prompt.includes("[url]")) return { url: `${base}/image.png` }
        const bytes = prompt.includes("[text]") ? Buffer.from("not an image at all") : Buffer.from(png(width, height))
        return { b64_json: bytes.toString("base64") }
      }
      const revised = body.model === "dall-e-3" ? { revised_prompt: `A detailed picture of ${prompt}` } : {}
      answer(200, { created: 1_700_000_000, data: Array.from({ length: body.n ?? 1 }, () => ({ ...image(), ...revised })) })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      base = `http://127.0.0.1:${port}`
      resolve({
        url: `${base}/v1`,
        key,
        requests,
        close: () => new Promise<void>((done) => server.close(() => done()))
      })
    })
  })
