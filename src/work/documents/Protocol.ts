import type { ConversionLimits } from "./Converters.ts"
import type { Hints } from "./Formats.ts"

/** What the request thread asks a conversion worker: one uploaded file, by its temporary path. */
export interface ConversionJob {
  readonly path: string
  readonly hints: Hints
  readonly limits: ConversionLimits
}

/** A worker's answer: the converted document, or why the file cannot be converted. */
export type ConversionReply =
  | { readonly ok: true; readonly type: string; readonly content: string; readonly tokens: number }
  | { readonly ok: false; readonly reason: string }
