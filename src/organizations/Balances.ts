import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Pglite } from "../storage/PgliteClient.ts"
import { OrganizationsRepo } from "./OrganizationsRepo.ts"

/**
 * Each organization's credit usage, as the organizations listing shows it.
 * It changes on every billed call, so it is never cached at the access
 * revision. On a shared PostgreSQL (other processes bill too) and on the
 * memory backend (a map lookup) it is read on every request. The embedded
 * database serves one process, in one session: there usages are kept in
 * memory and all dropped whenever a statement changes one, which a trigger
 * reports on channel `credit_usage` (sql/0085) while that statement runs, so
 * that no read can see the change before the cache does.
 */
export class Balances extends Context.Service<Balances, {
  readonly creditUsage: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, number>>
}>()("organizations/Balances") {
  /** Organizations whose usage is kept; beyond it, the cache starts over. */
  static readonly capacity = 10_000

  static readonly layer = Layer.effect(Balances, Effect.gen(function*() {
    const repo = yield* OrganizationsRepo
    const embedded = yield* Effect.serviceOption(Pglite)
    const client = yield* Effect.serviceOption(SqlClient.SqlClient)
    if (Option.isNone(embedded) || Option.isNone(client)) return { creditUsage: repo.creditUsage }
    const sql = client.value
    const usages = new Map<string, number>()
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
    /** The usages of `ids` known now: a copy, since a notification may clear the cache at any time. */
    const known = (ids: ReadonlyArray<string>) =>
      new Map(ids.flatMap((id) => {
        const usage = usages.get(id)
        return usage === undefined ? [] : [[id, usage] as const]
      }))
    return {
      creditUsage: (ids) =>
        Effect.suspend(() => {
          const cached = known(ids)
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
