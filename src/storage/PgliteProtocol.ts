/** What the embedded database's thread opens (`PgliteWorker.ts`): a data folder, memory, or a dump loaded into memory. */
export interface PgliteOpening {
  /** A folder; undefined: in memory. */
  readonly dataDir: string | undefined
  /** A `dumpDataDir` tarball to start the in-memory database from. */
  readonly dump?: string | undefined
  readonly wasmTierUp: boolean
}

export type RowMode = "array" | "object"

/** A call into the database's thread. */
export type PgliteRequest =
  | { readonly kind: "run"; readonly sql: string; readonly params: ReadonlyArray<unknown>; readonly rowMode: RowMode }
  | { readonly kind: "query"; readonly sql: string; readonly params: ReadonlyArray<unknown>; readonly rowMode: RowMode }
  | { readonly kind: "exec"; readonly sql: string }
  | { readonly kind: "listen"; readonly channel: string }
  | { readonly kind: "unlisten"; readonly channel: string }
  | { readonly kind: "dump" }
  | { readonly kind: "close" }

/** What a failed call carries back: what `SqlError`s are made of. */
export interface PgliteFailure {
  readonly message: string
  readonly code?: string | undefined
  readonly constraint?: string | undefined
  readonly routine?: string | undefined
}

/** Messages from the database's thread: opened (or not), a call's answer, a notification. */
export type PgliteMessage =
  | { readonly kind: "ready" }
  | { readonly kind: "failed"; readonly failure: PgliteFailure }
  | { readonly kind: "answer"; readonly id: number; readonly value: unknown }
  | { readonly kind: "error"; readonly id: number; readonly failure: PgliteFailure }
  | { readonly kind: "notification"; readonly channel: string }

/** A request numbered for its answer. */
export type NumberedRequest = PgliteRequest & { readonly id: number }
