import { Effect } from "effect"
import { zipSync } from "fflate"

/**
 * Parsers load on first use: a fresh worker thread starts fast, and pays
 * only for the formats it meets.
 */
export const loadParser = <A>(module: () => Promise<A>) => Effect.promise(module)

/** The unpacked, size-checked entries again as a zip, so that parsers read only what was checked. */
export const checkedZip = (entries: ReadonlyMap<string, Buffer>) =>
  Buffer.from(zipSync(Object.fromEntries(entries), { level: 0 }))
