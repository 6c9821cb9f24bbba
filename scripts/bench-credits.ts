/**
 * The billing statements of one model call on the embedded database, in one
 * process: a hold of 960 credits settled to 1 with its usage event, back to
 * back, with the holds in the database (`CreditsRepo.sql`, what PostgreSQL
 * uses) and in the process's memory (`CreditsRepo.local`, what PGlite uses),
 * over the same file-backed PGlite, alternating rounds so that both see the
 * same machine. Reports CPU time and wall time per billed call; CPU time is
 * the steadier figure on a busy machine.
 *
 * `npm run bench:credits`; `BENCH_CALLS` (default 1500) calls per round,
 * `BENCH_ROUNDS` (default 3) rounds of each.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { sqlStorage } from "../src/app/Storage.ts"
import { OrganizationsRepo } from "../src/organizations/OrganizationsRepo.ts"
import * as Pglite from "../src/storage/PgliteClient.ts"
import { CreditsRepo } from "../src/usage/CreditsRepo.ts"
import { makeTempDir, runScript } from "./bench/children.ts"
import { fixed, formatTable, numberFromEnv } from "./bench/report.ts"

const calls = numberFromEnv("BENCH_CALLS", 1_500)
const rounds = numberFromEnv("BENCH_ROUNDS", 3)

const program = Effect.gen(function*() {
  const organization = yield* OrganizationsRepo.use((repo) => repo.create({ name: "Bench", creditLimit: 1e12 }))
  const client = yield* SqlClient.SqlClient
  const variant = (layer: Layer.Layer<CreditsRepo, never, SqlClient.SqlClient>) =>
    Effect.map(
      Layer.build(Layer.fresh(layer).pipe(Layer.provide(Layer.succeed(SqlClient.SqlClient, client)))),
      (context) => Context.get(context, CreditsRepo)
    )
  const variants = [
    { name: "holds in the database (CreditsRepo.sql)", repo: yield* variant(CreditsRepo.sql), cpu: [] as Array<number>, wall: [] as Array<number> },
    { name: "holds in memory (CreditsRepo.local)", repo: yield* variant(CreditsRepo.local), cpu: [] as Array<number>, wall: [] as Array<number> }
  ]
  let sequence = 0
  const billedCall = (repo: CreditsRepo["Service"]) =>
    Effect.gen(function*() {
      const hold = {
        id: `hold_bench_${sequence++}`,
        organizationId: organization.id,
        pool: "credits" as const,
        amount: 960,
        expiresAt: new Date(Date.now() + 60_000)
      }
      yield* repo.hold(hold)
      yield* repo.settle(hold, 1, {
        organizationId: organization.id,
        companyId: null,
        userId: null,
        feature: "chat",
        model: "bench",
        tokens: 28,
        inputTokens: 21,
        outputTokens: 7
      })
    })
  // Round 0 warms both up (JIT, plans) and is not reported.
  for (let round = 0; round <= rounds; round++) {
    for (const entry of variants) {
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      for (let call = 0; call < calls; call++) yield* billedCall(entry.repo)
      const cpu = process.cpuUsage(cpuBefore)
      if (round === 0) continue
      entry.cpu.push((cpu.user + cpu.system) / calls)
      entry.wall.push(((performance.now() - started) * 1000) / calls)
    }
  }
  const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  console.log(`\nBilling statements of one model call on file-backed PGlite (${rounds} rounds of ${calls} calls; node ${process.version})`)
  console.log(formatTable(
    ["holds", "CPU µs/call (median)", "CPU µs/call (range)", "wall µs/call (median)"],
    variants.map((entry) => [
      entry.name,
      fixed(median(entry.cpu), 0),
      `${fixed(Math.min(...entry.cpu), 0)}–${fixed(Math.max(...entry.cpu), 0)}`,
      fixed(median(entry.wall), 0)
    ])
  ))
})

runScript(() =>
  Effect.runPromise(Effect.scoped(Effect.provide(
    program,
    sqlStorage(Pglite.layerFrom(Pglite.open(makeTempDir("bench-credits-"))), "pglite")
  )))
)
