// `npm run bench:documents`: document conversion throughput (MB/s) of
// POST /api/v0/documents/convert, end to end over HTTP (multipart upload,
// worker thread, zip checks, Markdown, token count), next to the parser
// library alone on the same bytes in this process, in one run:
// - a text-only DOCX through the streaming path, the same text with one
//   table (which sends it to mammoth, the path every DOCX took before), and
//   mammoth alone (its HTML) on the text-only file;
// - a PDF (layout to Markdown) and unpdf's text extraction alone.
// A text-only DOCX of 1 MB holds about 400 pages; mammoth needs tens of
// seconds for it, so the default size is small and the limits are raised.
// Settings: BENCH_MB (default 1), BENCH_ROUNDS (default 1, after a warm-up
// on a small file of the same kind).
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import mammoth from "mammoth"
import { createServer } from "node:http"
import { extractText } from "unpdf"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { makeServer } from "../src/app/Server.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { documentDefaults } from "../src/work/documents/DocumentsConfig.ts"
import { docxFile, pdfFile } from "../test/support/DocumentFixtures.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, writeResults } from "./bench/report.ts"

const targetBytes = numberFromEnv("BENCH_MB", 1) * 1024 * 1024
const rounds = numberFromEnv("BENCH_ROUNDS", 1)

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

const docxOf = (paragraphs: number, table?: ReadonlyArray<ReadonlyArray<string>>) =>
  docxFile({
    title: "Benchmark",
    paragraphs: Array.from({ length: paragraphs }, () => `${sentence()} ${sentence()}`),
    ...(table === undefined ? {} : { table })
  })

const megabytes = (bytes: number) => bytes / (1024 * 1024)

const median = (values: ReadonlyArray<number>) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]

/** Median seconds of `rounds` runs of `run`, after one warm-up run of `warmUp` (parsers loaded, code compiled). */
const timed = async (run: () => Promise<unknown>, warmUp: () => Promise<unknown>) => {
  await warmUp()
  const seconds: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const started = performance.now()
    await run()
    seconds.push((performance.now() - started) / 1000)
  }
  return median(seconds)
}

const settings = settingsWith({
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
  const startedAt = new Date()
  const files = yield* Effect.promise(async () => {
    const docx = await sized((units) => docxOf(units), 2_000)
    return {
      pdf: await sized(pdfOf, 20),
      docx,
      // The same kind of text and one table: a document the streaming path leaves to mammoth.
      docxWithTable: await sized((units) => docxOf(units, [["Name", "Role"], ["Ada", "Engineer"]]), 2_000),
      smallPdf: await pdfOf(2),
      smallDocx: await docxOf(50),
      smallDocxWithTable: await docxOf(50, [["a", "b"]])
    }
  })
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
  const cases = [
    { name: "docx, streaming path (endpoint)", bytes: files.docx, run: convert("bench.docx", files.docx), warmUp: convert("w.docx", files.smallDocx) },
    {
      name: "docx with a table, mammoth path (endpoint)",
      bytes: files.docxWithTable,
      run: convert("bench.docx", files.docxWithTable),
      warmUp: convert("w.docx", files.smallDocxWithTable)
    },
    {
      name: "docx, mammoth alone (HTML)",
      bytes: files.docx,
      run: () => mammoth.convertToHtml({ buffer: files.docx }),
      warmUp: () => mammoth.convertToHtml({ buffer: files.smallDocx })
    },
    { name: "pdf (endpoint)", bytes: files.pdf, run: convert("bench.pdf", files.pdf), warmUp: convert("w.pdf", files.smallPdf) },
    {
      name: "pdf, unpdf text alone",
      bytes: files.pdf,
      run: () => extractText(new Uint8Array(files.pdf), { mergePages: true }),
      warmUp: () => extractText(new Uint8Array(files.smallPdf), { mergePages: true })
    }
  ]
  const results: Array<{ name: string; megabytes: number; seconds: number; megabytesPerSecond: number }> = []
  for (const benchCase of cases) {
    const seconds = yield* Effect.promise(() => timed(benchCase.run, benchCase.warmUp))
    const size = megabytes(benchCase.bytes.length)
    results.push({ name: benchCase.name, megabytes: size, seconds, megabytesPerSecond: size / seconds })
  }
  const table = formatTable(
    ["case", "MB", "seconds", "MB/s"],
    results.map((result) => [result.name, fixed(result.megabytes, 2), fixed(result.seconds, 2), fixed(result.megabytesPerSecond, 2)])
  )
  const file = writeResults("documents", startedAt, { rounds, results })
  yield* Console.log(`document conversion, median of ${rounds} round(s) after a warm-up\n${table}\n${file}`)
})

NodeRuntime.runMain(Effect.scoped(Effect.provide(program, server)))
