import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Pglite } from "../../storage/PgliteClient.ts"
import { sharedReads } from "../../storage/SharedRead.ts"
import { type CreditUsage, OrganizationsRepo } from "./OrganizationsRepo.ts"

/** The entries of `usages` for `ids`. */
const usagesOf = (usages: ReadonlyMap<string, CreditUsage>, ids: ReadonlyArray<string>) =>
  new Map(ids.flatMap((id) => {
    const usage = usages.get(id)
    return usage === undefined ? [] : [[id, usage] as const]
  }))

/**
 * Each organization's credit and data credit usage, as the organizations listing shows it.
 * It changes on every billed call, so it is never cached at the access
 * revision. On a shared PostgreSQL
 * (other processes bill too) it is read for every request, concurrent
 * requests sharing one read sent after they asked (`sharedReads`). The embedded
 * database serves one process, in one session: there usages are kept in
 * memory and all dropped whenever a statement changes one, which a trigger
 * reports on channel `credit_usage` (sql/0085, sql/0230) while that statement runs, so
 * that no read can see the change before the cache does.
 */
export class Balances extends Context.Service<Balances, {
  readonly creditUsage: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, CreditUsage>>
}>()("organizations/Balances") {
  /** Organizations whose usage is kept; beyond it, the cache starts over. */
  static readonly capacity = 10_000

  static readonly layer = Layer.effect(Balances, Effect.gen(function*() {
    const repo = yield* OrganizationsRepo
    const embedded = yield* Effect.serviceOption(Pglite)
    const sql = yield* SqlClient.SqlClient
    if (Option.isNone(embedded)) {
      // Reads run outside the asking request's fiber, so never on a connection of a transaction it is in.
      const shared = sharedReads((ids: ReadonlySet<string>) => repo.creditUsage([...ids]), Effect.runForkWith(yield* Effect.context<never>()))
      // A shared read holds other callers' organizations too: each caller gets only its own.
      return { creditUsage: (ids) => Effect.map(shared(ids), (usages) => usagesOf(usages, ids)) }
    }
    const usages = new Map<string, CreditUsage>()
    /** Counts the notified changes, so that a read that overlapped one is not kept. */
    let changes = 0
    yield* Effect.acquireRelease(
      Effect.promise(() =>
        embedded.value.listen("credit_usage", () => {
          changes++
          usages.clear()
        })
      ),
      (unlisten) => Effect.ignore(Effect.tryPromise(() => unlisten()))
    )
    yield* sql`SET platform.notify_credit_usage = 'on'`.pipe(Effect.orDie)
    return {
      creditUsage: (ids) =>
        Effect.suspend(() => {
          // A copy, since a notification may clear the cache at any time.
          const cached = usagesOf(usages, ids)
          if (cached.size === ids.length) return Effect.succeed(cached)
          const before = changes
          return Effect.map(repo.creditUsage(ids.filter((id) => !cached.has(id))), (read) => {
            if (changes === before) {
              if (usages.size + read.size > Balances.capacity) usages.clear()
              for (const [id, usage] of read) usages.set(id, usage)
            }
            return new Map([...cached, ...read])
          })
        })
    }
  }))
}
