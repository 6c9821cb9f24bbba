import type { Layer } from "effect"
import type { memoryStorage } from "../../src/storage/Database.ts"
import type { MemoryStore } from "../../src/storage/MemoryStore.ts"
import { backends } from "./TestServer.ts"

/** What every storage backend provides: the repositories, `Storage` and `ChangeFeed`. */
export type StorageServices = Exclude<Layer.Success<typeof memoryStorage>, MemoryStore>

/** `backends`, typed by what they all provide, so that one suite runs unchanged on each. */
export const storageBackends: ReadonlyArray<{
  readonly name: string
  readonly storage: Layer.Layer<StorageServices, unknown>
}> = backends
