// `npm run bench:webhooks` (under scripts/with-postgres.sh for the PostgreSQL rows, or with BENCH_DATABASE_URL):
// webhook deliveries per second from the outbox to a local receiver (a plain node:http server in this
// process answering 200 at once), signed and sent through the outbound guard by one delivery worker; and the
// delay from an event's commit to its arrival at the receiver (p50/p99) at a steady rate of events with the
// worker polling in the background, as a server process runs it. Settings: BENCH_WEBHOOK_EVENTS (default
// 3,000), BENCH_WEBHOOK_RATE (events per second for the delay run, default 100), BENCH_WEBHOOK_SECONDS
// (default 10), BENCH_WEBHOOK_BACKENDS (default `pglite,postgres`), and the worker's WEBHOOKS_* variables.
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, References } from "effect"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { newId } from "../src/platform/Ids.ts"
import { GuardedFetch } from "../src/platform/Outbound.ts"
import { emitAll } from "../src/storage/Outbox.ts"
import { DeliveryWorker } from "../src/integrations/webhooks/DeliveryWorker.ts"
import { WebhooksConfig } from "../src/integrations/webhooks/WebhooksConfig.ts"
import { WebhooksRepo } from "../src/integrations/webhooks/WebhooksRepo.ts"
import { postgresFromEnv, postgresNotSet, postgresStorage, throwawayDatabase } from "./bench/databases.ts"
import { listFromEnv, numberFromEnv } from "./bench/env.ts"
import { latencySummary } from "./bench/stats.ts"

const eventCount = numberFromEnv("BENCH_WEBHOOK_EVENTS", 3_000)
const rate = numberFromEnv("BENCH_WEBHOOK_RATE", 100)
const seconds = numberFromEnv("BENCH_WEBHOOK_SECONDS", 10)
const backends = listFromEnv("BENCH_WEBHOOK_BACKENDS", ["pglite", "postgres"]) ?? ["pglite", "postgres"]

/** The receiver: answers 200 at once and notes, per event, when it arrived and when it was emitted. */
const startReceiver = async () => {
  const delays: Array<number> = []
  let received = 0
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received++
      const emittedAt = JSON.parse(Buffer.concat(chunks).toString("utf8")).data.emittedAt
      if (typeof emittedAt === "number") delays.push(Date.now() - emittedAt)
      response.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    delays,
    reset: () => {
      received = 0
      delays.length = 0
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const until = (done: () => boolean) =>
  Effect.gen(function*() {
    while (!done()) yield* sleep(5)
  })

const measure = (receiver: Receiver) =>
  Effect.gen(function*() {
    const tenant = yield* Admin.bootstrap({ organization: "Bench", company: "Bench", email: `bench-${Date.now()}@bench.example` })
    const now = new Date()
    yield* WebhooksRepo.use((repo) =>
      repo.create({
        id: newId("whk"),
        companyId: tenant.companyId,
        url: receiver.url,
        events: ["lead.created"],
        description: null,
        enabled: true,
        disabledReason: null,
        secret: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
        lastSuccessAt: null,
        createdAt: now,
        updatedAt: now
      })
    )
    const events = (count: number, emittedAt?: number) =>
      Array.from({ length: count }, (_, index) => ({
        companyId: tenant.companyId,
        type: "lead.created" as const,
        payload: { leadId: `lead_${index}`, email: `lead${index}@example.com`, emittedAt }
      }))
    const sql = yield* SqlClient.SqlClient
    const worker = yield* DeliveryWorker

    // Throughput: a backlog of events, drained by polls as fast as they go.
    yield* sql.withTransaction(emitAll(events(eventCount)))
    const started = performance.now()
    while ((yield* worker.runDue) > 0) { /* again */ }
    const elapsed = (performance.now() - started) / 1000
    if (receiver.received() !== eventCount) throw new Error(`delivered ${receiver.received()} of ${eventCount}`)
    receiver.reset()

    // Delay: events committed at a steady rate while the worker polls in the background.
    yield* Effect.scoped(Effect.gen(function*() {
      yield* Layer.build(DeliveryWorker.worker)
      const total = Math.round(rate * seconds)
      const perTick = Math.max(1, Math.round(rate / 20))
      for (let sent = 0; sent < total; sent += perTick) {
        yield* emitAll(events(Math.min(perTick, total - sent), Date.now()))
        yield* sleep(1000 / 20)
      }
      yield* until(() => receiver.received() >= total)
    }))
    return { deliveriesPerSecond: eventCount / elapsed, delay: latencySummary(receiver.delays) }
  })

const settings = settingsWith({ logLevel: "Error", outbound: { allowedHosts: ["127.0.0.1"] } })

const run = (name: string, storage: Layer.Layer<any, any>) =>
  Effect.gen(function*() {
    const receiver = yield* Effect.promise(startReceiver)
    const result = yield* measure(receiver).pipe(
      Effect.provide(DeliveryWorker.layer.pipe(
        Layer.provideMerge(GuardedFetch.layer),
        Layer.provideMerge(WebhooksConfig.layer),
        Layer.provideMerge(storage),
        Layer.provideMerge(settings)
      )),
      Effect.ensuring(Effect.promise(() => receiver.close()))
    )
    yield* Console.log(
      `${name}: ${Math.round(result.deliveriesPerSecond)} deliveries/s (${eventCount} events, one worker); ` +
        `event → delivery at ${rate}/s over ${seconds} s: p50 ${result.delay.p50Ms} ms, p99 ${result.delay.p99Ms} ms, ` +
        `max ${result.delay.maxMs} ms (${result.delay.count} events)`
    )
  })

NodeRuntime.runMain(Effect.gen(function*() {
  yield* Console.log(`deliveries to a node:http receiver in this process; WEBHOOKS_POLL_MS ${process.env.WEBHOOKS_POLL_MS ?? "500 (default)"}`)
  if (backends.includes("pglite")) yield* run("PGlite (in memory)", inMemoryStorage)
  if (!backends.includes("postgres")) return
  const postgres = postgresFromEnv()
  if (postgres === undefined) return yield* Console.log(postgresNotSet)
  const database = yield* Effect.promise(() => throwawayDatabase(postgres.url))
  yield* run("PostgreSQL", postgresStorage(database.url))
}).pipe(Effect.provideService(References.MinimumLogLevel, "Error")))
