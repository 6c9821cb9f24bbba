/**
 * The billing of one model call on the embedded database, in one process:
 * `Credits.withHold` of 960 credits settled to 1 with its usage event, back
 * to back, over the same file-backed PGlite, in two ways alternating rounds so
 * that both see the same machine: committing each settlement at once (a
 * `flush` after every call: one transaction per call, what billing cost before
 * group commit) and as the service does (settlements committed in groups by
 * the background flusher; the round's last flush is inside the measured time).
 * Reports CPU time and wall time per billed call; CPU time is the steadier
 * figure on a busy machine.
 *
 * `npm run bench:credits`; `BENCH_CALLS` (default 1500) calls per round,
 * `BENCH_ROUNDS` (default 3) rounds of each.
 */
import { Effect, Layer } from "effect"
import { OrganizationsRepo } from "../src/accounts/organizations/OrganizationsRepo.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { Credits } from "../src/accounts/usage/Credits.ts"
import { makeTempDir, runScript } from "./bench/children.ts"
import { pgliteStorageIn } from "./bench/databases.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable } from "./bench/report.ts"
import { median } from "./bench/stats.ts"

const calls = numberFromEnv("BENCH_CALLS", 1_500)
const rounds = numberFromEnv("BENCH_ROUNDS", 3)

const program = Effect.gen(function*() {
  const organization = yield* OrganizationsRepo.use((repo) => repo.create({ name: "Bench", creditLimit: 1e12 }))
  const credits = yield* Credits
  const payer = { organizationId: organization.id, companyId: null, userId: null }
  const billedCall = credits.withHold(payer, { feature: "chat", model: "bench", credits: 960 }, (hold) =>
    hold.report({ credits: 1, inputTokens: 21, outputTokens: 7 }))
  const variants = [
    { name: "each settlement committed at once", call: Effect.andThen(billedCall, credits.flush), cpu: [] as Array<number>, wall: [] as Array<number> },
    { name: "group commit (the service)", call: billedCall, cpu: [] as Array<number>, wall: [] as Array<number> }
  ]
  // Round 0 warms both up (JIT, plans) and is not reported.
  for (let round = 0; round <= rounds; round++) {
    for (const entry of variants) {
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      for (let call = 0; call < calls; call++) yield* entry.call
      yield* credits.flush
      const cpu = process.cpuUsage(cpuBefore)
      if (round === 0) continue
      entry.cpu.push((cpu.user + cpu.system) / calls)
      entry.wall.push(((performance.now() - started) * 1000) / calls)
    }
  }
  console.log(`\nBilling of one model call on file-backed PGlite (${rounds} rounds of ${calls} calls; node ${process.version})`)
  console.log(formatTable(
    ["settlements", "CPU µs/call (median)", "CPU µs/call (range)", "wall µs/call (median)"],
    variants.map((entry) => [
      entry.name,
      fixed(median(entry.cpu), 0),
      `${fixed(Math.min(...entry.cpu), 0)}–${fixed(Math.max(...entry.cpu), 0)}`,
      fixed(median(entry.wall), 0)
    ])
  ))
})

const storage = pgliteStorageIn(makeTempDir("bench-credits-"))

runScript(() =>
  Effect.runPromise(Effect.scoped(Effect.provide(
    program,
    Credits.layer.pipe(Layer.provideMerge(storage), Layer.provide(settingsWith({ logLevel: "Error" })))
  )))
)
