// `npm run bench:documents`: document conversion throughput (MB/s) of
// POST /api/v0/documents/convert for a 5 MB PDF and a 5 MB DOCX, end to end
// over HTTP (multipart upload, worker thread, zip checks, Markdown, token
// count), next to the baseline of the same parser library alone on the same
// bytes in this process (unpdf's text extraction; mammoth's HTML conversion).
// A text-only DOCX of 5 MB is about 2,000 pages: far beyond the default time
// and memory limits, which the benchmark raises so that the file converts.
// Settings: BENCH_MB (default 5), BENCH_ROUNDS (default 3).
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import mammoth from "mammoth"
import { createServer } from "node:http"
import { extractText } from "unpdf"
import * as Admin from "../src/admin/Admin.ts"
import { makeServer } from "../src/app/Server.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { AppConfig, documentDefaults } from "../src/platform/AppConfig.ts"
import { docxFile, pdfFile } from "../test/support/DocumentFixtures.ts"

const targetBytes = Number(process.env.BENCH_MB ?? 5) * 1024 * 1024
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)

const vocabulary = (
  "account agenda analysis answer budget campaign client contract customer deadline delivery design " +
  "engineer estimate feature forecast growth invoice launch market meeting milestone network offer " +
  "partner pipeline plan policy pricing product quarter report request revenue review risk roadmap " +
  "sales schedule service strategy supplier support target team timeline update vendor workflow"
).split(" ")

let seed = 42
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
const sentence = () =>
  Array.from({ length: 12 }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(" ") + "."

/** A document of about the target size: measures a sample, scales, and scales once more from that. */
const sized = async (make: (units: number) => Promise<Buffer>, sample: number) => {
  const probe = await make(sample)
  const first = Math.ceil((sample * targetBytes) / probe.length)
  const scaled = await make(first)
  return Math.abs(scaled.length - targetBytes) < targetBytes / 50 ? scaled : make(Math.ceil((first * targetBytes) / scaled.length))
}

const pdfOf = (pages: number) =>
  pdfFile(Array.from({ length: pages }, () => Array.from({ length: 40 }, sentence)), { uncompressed: true })

const docxOf = (paragraphs: number) =>
  docxFile({ title: "Benchmark", paragraphs: Array.from({ length: paragraphs }, () => `${sentence()} ${sentence()}`) })

const megabytes = (bytes: number) => bytes / (1024 * 1024)

const median = (values: ReadonlyArray<number>) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]

/** Median seconds of `rounds` runs of `run`, after one warm-up run. */
const timed = async (run: () => Promise<unknown>) => {
  await run()
  const seconds: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    await run()
    seconds.push((performance.now() - started) / 1000)
  }
  return median(seconds)
}

const settings = AppConfig.layerWith({
  bootstrap: false,
  logLevel: "Error",
  rateLimitPerMinute: 1_000_000,
  documents: {
    ...documentDefaults,
    maxFileBytes: targetBytes * 2,
    maxTotalBytes: targetBytes * 2,
    maxUnzippedBytes: targetBytes * 40,
    maxPdfPages: 100_000,
    timeoutMs: 600_000,
    workerMemoryMb: 4_096
  }
})

const server = makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }), inMemoryStorage, {
  logAddress: false
}).pipe(Layer.provideMerge(settings))

const program = Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  const port = address._tag === "UnixPathAddress" ? 0 : address.port
  const tenant = yield* Effect.orDie(Admin.bootstrap({ organization: "Bench", company: "Bench", email: "bench@example.com" }))
  const files = yield* Effect.promise(async () => ({
    pdf: await sized(pdfOf, 20),
    docx: await sized(docxOf, 2_000)
  }))
  const convert = (name: string, bytes: Buffer) => async () => {
    const form = new FormData()
    form.append("files", new Blob([new Uint8Array(bytes)]), name)
    const response = await fetch(`http://127.0.0.1:${port}/api/v0/documents/convert`, {
      method: "POST",
      headers: { "x-api-key": tenant.apiKey },
      body: form
    })
    const body = await response.json() as { documents?: Array<{ tokens: number }>; error?: string }
    if (response.status !== 200) return Promise.reject(new Error(`${response.status}: ${body.error}`))
    return body
  }
  const baselines = {
    pdf: () => extractText(new Uint8Array(files.pdf), { mergePages: true }),
    docx: () => mammoth.convertToHtml({ buffer: files.docx })
  }
  const rows: Array<string> = []
  for (const kind of ["pdf", "docx"] as const) {
    const size = megabytes(files[kind].length)
    const endpoint = yield* Effect.promise(() => timed(convert(`bench.${kind}`, files[kind])))
    const library = yield* Effect.promise(() => timed(baselines[kind]))
    rows.push(
      `${kind.padEnd(5)} ${size.toFixed(2).padStart(6)} MB   endpoint ${(size / endpoint).toFixed(2).padStart(6)} MB/s (${endpoint.toFixed(2)} s)` +
        `   library alone ${(size / library).toFixed(2).padStart(6)} MB/s (${library.toFixed(2)} s)`
    )
  }
  yield* Console.log(`document conversion, median of ${rounds} rounds after a warm-up\n${rows.join("\n")}`)
})

NodeRuntime.runMain(Effect.scoped(Effect.provide(program, server)))
