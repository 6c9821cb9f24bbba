import { Effect } from "effect"
import yauzl from "yauzl"
import { Unconvertible, unconvertible } from "./Unconvertible.ts"

/** What one office file may unpack to: guards against zip bombs. */
export interface ZipLimits {
  readonly maxEntries: number
  readonly maxUnzippedBytes: number
}

const tooLarge = (limits: ZipLimits) =>
  new Unconvertible({ reason: `unpacks to more than ${limits.maxUnzippedBytes} bytes (zip bomb?)` })

/**
 * Unpacks a zip-based office file into memory within limits: the entry count
 * and the declared sizes are checked from the central directory before
 * anything is inflated, and the actual inflated bytes are counted while
 * inflating (yauzl also fails an entry that inflates past its declared
 * size), so a lying or overlapping archive stops at the limit.
 */
export const unzipBounded = (bytes: Buffer, limits: ZipLimits): Effect.Effect<Map<string, Buffer>, Unconvertible> =>
  Effect.tryPromise({
    try: () =>
      new Promise<Map<string, Buffer>>((resolve, reject) => {
        yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (error, zip) => {
          if (error !== null) return reject(error)
          if (zip.entryCount > limits.maxEntries) {
            zip.close()
            return reject(new Unconvertible({ reason: `has ${zip.entryCount} zip entries; at most ${limits.maxEntries} are accepted` }))
          }
          const entries: Array<yauzl.Entry> = []
          let declared = 0
          zip.on("error", reject)
          zip.on("entry", (entry: yauzl.Entry) => {
            declared += entry.uncompressedSize
            if (declared > limits.maxUnzippedBytes) {
              zip.close()
              return reject(tooLarge(limits))
            }
            if (!entry.fileName.endsWith("/")) entries.push(entry)
            zip.readEntry()
          })
          zip.on("end", () => {
            const files = new Map<string, Buffer>()
            let inflated = 0
            const next = (index: number): void => {
              if (index === entries.length) return resolve(files)
              const entry = entries[index]
              zip.openReadStream(entry, (openError, stream) => {
                if (openError !== null) return reject(openError)
                const chunks: Array<Buffer> = []
                stream.on("data", (chunk: Buffer) => {
                  inflated += chunk.length
                  if (inflated > limits.maxUnzippedBytes) {
                    stream.destroy()
                    return reject(tooLarge(limits))
                  }
                  chunks.push(chunk)
                })
                stream.on("error", reject)
                stream.on("end", () => {
                  files.set(entry.fileName, Buffer.concat(chunks))
                  next(index + 1)
                })
              })
            }
            next(0)
          })
          zip.readEntry()
        })
      }),
    catch: (cause) =>
      cause instanceof Error && /too many bytes/i.test(cause.message)
        ? new Unconvertible({ reason: "unpacks to more bytes than its zip entries declare (zip bomb?)" })
        : unconvertible("a zip archive")(cause)
  })
