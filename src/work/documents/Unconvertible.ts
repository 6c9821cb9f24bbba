import { Data } from "effect"

/** Why a file cannot be converted, phrased to follow its name ("report.pdf is encrypted"). */
export class Unconvertible extends Data.TaggedError("Unconvertible")<{ readonly reason: string }> {}

/** What a thrown parser error means for the client; the parser's own message only where it is safe and useful. */
export const unconvertible = (what: string) => (cause: unknown): Unconvertible => {
  if (cause instanceof Unconvertible) return cause
  if (cause instanceof RangeError) return new Unconvertible({ reason: `is too deeply nested to convert` })
  return new Unconvertible({ reason: `could not be read as ${what} (corrupt or unsupported)` })
}
