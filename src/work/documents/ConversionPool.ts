import { Context, Effect, Layer } from "effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ConversionLimits } from "./Converters.ts"
import { DocumentsConfig, type DocumentSettings } from "./DocumentsConfig.ts"
import { makeWorkerPool, siblingModule, type WorkerFailed } from "../../platform/WorkerPool.ts"
import type { ConversionJob, ConversionReply } from "./Protocol.ts"

/**
 * The conversion worker threads (`DOCUMENT_WORKERS`), so that parsing never
 * blocks the request thread: each file runs on one thread within
 * `DOCUMENT_WORKER_MEMORY_MB` and `DOCUMENT_TIMEOUT_MS`; a thread that fails
 * answers why the file cannot be converted.
 */
export class ConversionPool extends Context.Service<ConversionPool, {
  readonly convert: (job: ConversionJob) => Effect.Effect<ConversionReply>
}>()("documents/ConversionPool") {
  static readonly layer = Layer.effect(ConversionPool, Effect.gen(function*() {
    const settings = yield* DocumentsConfig
    const run = yield* makeWorkerPool<ConversionJob, ConversionReply>({
      file: siblingModule(import.meta.url, "ConversionWorker"),
      workers: settings.workers,
      memoryMb: settings.workerMemoryMb,
      timeoutMs: settings.timeoutMs,
      // The parsers allocate many short-lived objects: scavenges dominate with V8's default young generation.
      youngGenerationMb: 128
    })
    const reasons: Record<WorkerFailed["reason"], string> = {
      timeout: `could not be converted within ${settings.timeoutMs / 1000} s`,
      "out-of-memory": `needs more than ${settings.workerMemoryMb} MB of memory to convert`,
      crashed: "could not be converted (the converter failed)"
    }
    return {
      convert: (job) =>
        run(job).pipe(Effect.catchTag("WorkerFailed", (failed) => Effect.succeed({ ok: false as const, reason: reasons[failed.reason] })))
    }
  }))
}

/** Elements an HTML (or DOCX) document may nest: deeper trees are refused rather than walked. */
const maxHtmlDepth = 256

/** What one conversion may unpack, read and nest. */
export const conversionLimits = (settings: DocumentSettings): ConversionLimits => ({
  maxEntries: settings.maxZipEntries,
  maxUnzippedBytes: settings.maxUnzippedBytes,
  maxPdfPages: settings.maxPdfPages,
  maxHtmlDepth
})

/** Bytes fetched from somewhere (a web page, a linked file) as Markdown, converted on a conversion worker like an upload. */
export const convertBytes = (bytes: Uint8Array, hints: { readonly name: string; readonly declaredType: string }) =>
  Effect.gen(function*() {
    const pool = yield* ConversionPool
    const limits = conversionLimits(yield* DocumentsConfig)
    const folder = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "page-"))),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
    )
    const path = join(folder, "input")
    yield* Effect.promise(() => writeFile(path, bytes))
    return yield* pool.convert({ path, hints, limits })
  }).pipe(Effect.scoped)

/** An HTML page as Markdown (`convertBytes`). */
export const pageToMarkdown = (html: string) => convertBytes(Buffer.from(html), { name: "page.html", declaredType: "text/html" })
