import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A stand-in SerpApi-compatible job-search provider on loopback. It records
 * every request's query parameters and answers a `google_jobs` payload whose
 * listings name the query and the page; `next_page_token` walks three pages.
 * Queries steer failures: `[flaky]` answers 503 to every other request,
 * `[rate-limited]` always 429, `[down]` always 500, `[reject]` 400, and
 * `[slow]` answers after 200 ms (so that concurrent calls overlap).
 */
export interface StubJobProvider {
  readonly url: string
  readonly requests: Array<Readonly<Record<string, string>>>
  readonly close: () => Promise<void>
}

const page = (query: Record<string, string>) => {
  const number = query.next_page_token === undefined ? 1 : Number(query.next_page_token.replace("page-", ""))
  return {
    search_metadata: { status: "Success" },
    search_parameters: { engine: query.engine, q: query.q, gl: query.gl, hl: query.hl },
    jobs_results: [1, 2].map((n) => ({
      title: `${query.q} #${number}.${n}`,
      company_name: "Acme",
      location: "Anywhere",
      description: "A job.",
      extensions: ["Full-time"],
      job_id: `job-${number}-${n}`
    })),
    ...(number < 3 ? { serpapi_pagination: { next_page_token: `page-${number + 1}` } } : {})
  }
}

export const startStubJobProvider = () =>
  new Promise<StubJobProvider>((resolve) => {
    const requests: Array<Readonly<Record<string, string>>> = []
    let attempts = 0
    const server = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://stub")
      const query = Object.fromEntries(url.searchParams)
      requests.push(query)
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json" })
        response.end(JSON.stringify(body))
      }
      const q = query.q ?? ""
      if (url.pathname !== "/search.json") return answer(404, { error: "Unknown path" })
      if (q.includes("[flaky]") && attempts++ % 2 === 0) return answer(503, { error: "Try again" })
      if (q.includes("[rate-limited]")) return answer(429, { error: "Too many searches" })
      if (q.includes("[down]")) return answer(500, { error: "Broken" })
      if (q.includes("[reject]")) return answer(400, { error: "Invalid next_page_token" })
      if (q.includes("[slow]")) return void setTimeout(() => answer(200, page(query)), 200)
      answer(200, page(query))
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () => new Promise<void>((done) => server.close(() => done()))
      })
    })
  })
