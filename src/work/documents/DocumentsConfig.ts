import { Config, Context, Effect, Layer } from "effect"
import { positiveInt } from "../../platform/AppConfig.ts"

/** Document conversion limits and workers; docs/documents.md and the README list the environment variables. */
export interface DocumentSettings {
  /** `DOCUMENT_MAX_FILES`: files per request. */
  readonly maxFiles: number
  /** `DOCUMENT_MAX_FILE_BYTES`: bytes per file. */
  readonly maxFileBytes: number
  /** `DOCUMENT_MAX_TOTAL_BYTES`: bytes per request. */
  readonly maxTotalBytes: number
  /** `DOCUMENT_MAX_UNZIPPED_BYTES`, `DOCUMENT_MAX_ZIP_ENTRIES`: what one docx/xlsx/pptx may unpack to, and its most zip entries. */
  readonly maxUnzippedBytes: number
  readonly maxZipEntries: number
  /** `DOCUMENT_MAX_PDF_PAGES`. */
  readonly maxPdfPages: number
  /** `DOCUMENT_TIMEOUT_MS`, per file: a conversion running longer is stopped (its worker thread terminated). */
  readonly timeoutMs: number
  /** `DOCUMENT_WORKERS`: conversion worker threads. */
  readonly workers: number
  /** `DOCUMENT_WORKER_MEMORY_MB`: heap limit of each conversion worker thread. */
  readonly workerMemoryMb: number
  /** `DOCUMENT_SUMMARY_MIN_TOKENS`: with `generateSummary`, documents above this many tokens get a summary. */
  readonly summaryMinTokens: number
}

const mebibytes = (count: number) => count * 1024 * 1024

export const documentDefaults: DocumentSettings = {
  maxFiles: 10,
  maxFileBytes: mebibytes(10),
  maxTotalBytes: mebibytes(25),
  maxUnzippedBytes: mebibytes(100),
  maxZipEntries: 2_000,
  maxPdfPages: 1_000,
  timeoutMs: 30_000,
  workers: 2,
  workerMemoryMb: 1_024,
  summaryMinTokens: 2_000
}

export class DocumentsConfig extends Context.Service<DocumentsConfig, DocumentSettings>()("documents/DocumentsConfig") {
  static readonly fromEnv = Config.all({
    maxFiles: positiveInt("DOCUMENT_MAX_FILES", documentDefaults.maxFiles),
    maxFileBytes: positiveInt("DOCUMENT_MAX_FILE_BYTES", documentDefaults.maxFileBytes),
    maxTotalBytes: positiveInt("DOCUMENT_MAX_TOTAL_BYTES", documentDefaults.maxTotalBytes),
    maxUnzippedBytes: positiveInt("DOCUMENT_MAX_UNZIPPED_BYTES", documentDefaults.maxUnzippedBytes),
    maxZipEntries: positiveInt("DOCUMENT_MAX_ZIP_ENTRIES", documentDefaults.maxZipEntries),
    maxPdfPages: positiveInt("DOCUMENT_MAX_PDF_PAGES", documentDefaults.maxPdfPages),
    timeoutMs: positiveInt("DOCUMENT_TIMEOUT_MS", documentDefaults.timeoutMs),
    workers: positiveInt("DOCUMENT_WORKERS", documentDefaults.workers),
    workerMemoryMb: positiveInt("DOCUMENT_WORKER_MEMORY_MB", documentDefaults.workerMemoryMb),
    summaryMinTokens: positiveInt("DOCUMENT_SUMMARY_MIN_TOKENS", documentDefaults.summaryMinTokens)
  })

  static readonly layer = Layer.effect(DocumentsConfig, Effect.orDie(DocumentsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<DocumentSettings> = {}) =>
    Layer.succeed(DocumentsConfig, { ...documentDefaults, ...overrides })
}
