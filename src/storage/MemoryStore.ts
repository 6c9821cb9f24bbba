import { Context, Effect, Layer, Ref } from "effect"

/**
 * A table of the memory backend, declared by the area that owns it: a name
 * (for debugging) and how to make it empty. The kernel knows no area's tables.
 */
export interface MemoryTable<A> {
  readonly name: string
  readonly empty: () => A
}

export const memoryTable = <A>(name: string, empty: () => A): MemoryTable<A> => ({ name, empty })

/** The tables of one memory storage: each is made empty the first time it is used. */
export type Tables = <A>(table: MemoryTable<A>) => A

export interface Store {
  /** Reads the tables; the memory backend never fails. */
  readonly read: <A>(f: (tables: Tables) => A) => Effect.Effect<A>
  /** Changes the tables atomically: `f` may mutate them and answers the result. */
  readonly write: <A>(f: (tables: Tables) => A) => Effect.Effect<A>
}

const tablesOf = (contents: Map<MemoryTable<unknown>, unknown>): Tables => <A>(table: MemoryTable<A>): A => {
  if (!contents.has(table)) contents.set(table, table.empty())
  return contents.get(table) as A
}

/**
 * The memory backend: every area's tables behind one `Ref`, shared by every
 * memory repository so that queries and writes across areas see one
 * consistent state.
 */
export class MemoryStore extends Context.Service<MemoryStore, Store>()("storage/MemoryStore") {
  static readonly layer = Layer.effect(
    MemoryStore,
    // Fresh tables per build (not one set made when the module loads), so that every memory storage is its own.
    Effect.map(Effect.suspend(() => Ref.make(tablesOf(new Map()))), (ref): Store => ({
      read: (f) => Effect.map(Ref.get(ref), f),
      write: (f) => Ref.modify(ref, (tables) => [f(tables), tables] as const)
    }))
  )
}
