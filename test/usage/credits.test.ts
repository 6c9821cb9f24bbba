import { describe, expect, it } from "@effect/vitest"
import { Context, Data, Deferred, Effect, Exit, Fiber, Layer, Option, Ref, Stream } from "effect"
import { TestClock } from "effect/testing"
import { OrganizationsRepo } from "../../src/organizations/OrganizationsRepo.ts"
import { newId } from "../../src/platform/Ids.ts"
import { currentDate } from "../../src/platform/Time.ts"
import { Credits, type Payer } from "../../src/usage/Credits.ts"
import { CreditsRepo } from "../../src/usage/CreditsRepo.ts"
import { UsageRepo } from "../../src/usage/UsageRepo.ts"
import { failsWith } from "../support/Assertions.ts"
import { onLiveClock } from "../support/SchedulerTest.ts"
import { backends, postgresUrl, serversSharingPostgres, testConfig } from "../support/TestServer.ts"

const ttl = 60_000

class ModelDown extends Data.TaggedError("ModelDown") {}

const payerIn = (limits: { readonly creditLimit?: number; readonly dataCreditLimit?: number }) =>
  Effect.map(
    OrganizationsRepo.use((organizations) => organizations.create({ name: "Payer", ...limits })),
    (organization): Payer => ({ organizationId: organization.id, companyId: "cmp_payer", userId: "usr_payer" })
  )

const balances = (payer: Payer) =>
  Effect.map(OrganizationsRepo.use((organizations) => organizations.get(payer.organizationId)), Option.getOrThrow)

const events = (payer: Payer) =>
  Effect.map(UsageRepo.use((usage) => usage.history(payer.organizationId, {}, { offset: 0, limit: 1000 })), (page) => page.events)

/** True when `credits` can be held now (and releases what it held): everything else was settled or released. */
const canHold = (payer: Payer, credits: number) =>
  Credits.use((service) =>
    Effect.match(service.withHold(payer, { feature: "probe", credits }, () => Effect.void), {
      onSuccess: () => true,
      onFailure: () => false
    })
  )

/** `Credits` over a backend's storage; a second build is a second process on the same database. */
const creditsOver = <A, E>(storage: Layer.Layer<A, E>) =>
  Credits.layer.pipe(Layer.provideMerge(onLiveClock(storage)), Layer.provide(testConfig({ creditHoldTtlMs: ttl })))

describe.each(backends)("Credits on $name", ({ name, storage }) => {
  it.layer(creditsOver(storage))((it) => {
    it.effect("concurrent holds never pass the pool: exactly floor(limit / hold) fit, and each settles its full cost", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 100 })
        // Every call holds 30 and costs 25; none settles before all twelve were held or refused.
        const gate = yield* Deferred.make<void>()
        const decided = yield* Ref.make(0)
        const decide = Effect.flatMap(Ref.updateAndGet(decided, (n) => n + 1), (n) =>
          n === 12 ? Deferred.succeed(gate, undefined) : Effect.void)
        const call = credits.withHold(payer, { feature: "chat", model: "m", credits: 30 }, (hold) =>
          decide.pipe(
            Effect.andThen(Deferred.await(gate)),
            Effect.andThen(hold.report({ credits: 25, inputTokens: 20, outputTokens: 5 }))
          )).pipe(Effect.tapError(() => decide))
        const outcomes = yield* Effect.all(
          Array.from({ length: 12 }, () =>
            Effect.match(call, { onSuccess: () => "served", onFailure: (denied) => `${denied._tag}: ${denied.error}` })),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((outcome) => outcome === "served")).toHaveLength(3)
        expect(outcomes.filter((outcome) => outcome !== "served")).toEqual(
          Array.from({ length: 9 }, () => "Forbidden: Insufficient credits")
        )
        expect((yield* balances(payer)).creditUsage).toBe(75)
        const billed = yield* events(payer)
        expect(billed.map((event) => [event.feature, event.model, event.credits, event.inputTokens, event.outputTokens]))
          .toEqual(Array.from({ length: 3 }, () => ["chat", "m", 25, 20, 5]))
        expect(yield* canHold(payer, 25)).toBe(true)
        expect(yield* canHold(payer, 26)).toBe(false)
      }))

    it.effect("a bracket settles what was reported when its work fails or is interrupted, and releases when nothing was", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 50 })
        const estimate = { feature: "content", credits: 20 }
        expect(yield* Effect.flip(credits.withHold(payer, estimate, () => Effect.fail(new ModelDown()))))
          .toBeInstanceOf(ModelDown)
        expect(yield* events(payer)).toEqual([])
        const failedAfterWork = credits.withHold(payer, estimate, (hold) =>
          Effect.andThen(hold.report({ credits: 4, outputTokens: 40 }), Effect.fail(new ModelDown())))
        yield* Effect.exit(failedAfterWork)
        const started = yield* Deferred.make<void>()
        const interrupted = yield* Effect.forkChild(credits.withHold(payer, estimate, (hold) =>
          Effect.andThen(
            Effect.andThen(hold.report({ credits: 3, outputTokens: 30 }), Deferred.succeed(started, undefined)),
            Effect.never
          )))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(interrupted)
        expect((yield* events(payer)).map((event) => [event.credits, event.outputTokens])).toEqual([[3, 30], [4, 40]])
        expect((yield* balances(payer)).creditUsage).toBe(7)
        expect(yield* canHold(payer, 43)).toBe(true)
      }))

    it.effect("the stream form holds before the first element and settles when the stream ends or is abandoned", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 9 })
        const metered = credits.stream(payer, { feature: "chat", credits: 6 }, (hold) =>
          Stream.make(1, 2, 3).pipe(Stream.tap((n) => hold.report({ credits: n, outputTokens: n }))))
        expect(yield* Stream.runCollect(metered)).toEqual([1, 2, 3])
        expect((yield* balances(payer)).creditUsage).toBe(3)
        // Only the first element is taken: the stream is abandoned after it, and settles what it reported.
        expect(yield* Stream.runCollect(Stream.take(metered, 1))).toEqual([1])
        expect((yield* balances(payer)).creditUsage).toBe(4)
        const refused = yield* Effect.flip(Stream.runCollect(metered))
        expect(refused).toMatchObject({ _tag: "Forbidden", error: "Insufficient credits" })
        expect((yield* events(payer)).map((event) => event.credits)).toEqual([1, 3])
      }))

    it.effect("a hold ends once: a second settle or release changes nothing", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 10 })
        const hold = yield* credits.hold(payer, { feature: "chat", credits: 5 })
        expect(yield* credits.settle(hold, { credits: 5 })).toBe(5)
        expect(yield* credits.settle(hold, { credits: 5 })).toBe(0)
        yield* credits.release(hold)
        expect((yield* balances(payer)).creditUsage).toBe(5)
        expect(yield* events(payer)).toHaveLength(1)
        yield* failsWith(credits.hold(payer, { feature: "chat", credits: 6 }), "Forbidden", /^Insufficient credits$/)
        yield* failsWith(credits.hold(payer, { feature: "chat", credits: 1e300 }), "Forbidden", /^Insufficient credits$/)
        const unknown: Payer = { organizationId: "org_missing", companyId: null, userId: null }
        yield* failsWith(credits.hold(unknown, { feature: "chat", credits: 0 }), "Forbidden", /^Insufficient credits$/)
      }))

    it.effect("the data pool (jobs: one data credit per successful call) is independent of the credit pool", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 10, dataCreditLimit: 2 })
        const search = (succeeds: boolean) =>
          credits.withHold(payer, { feature: "jobs", credits: 1, pool: "data" }, (hold) =>
            succeeds ? hold.report({ credits: 1 }) : Effect.fail(new ModelDown()))
        yield* Effect.exit(search(false))
        const outcomes = yield* Effect.all(Array.from({ length: 5 }, () => Effect.exit(search(true))), { concurrency: "unbounded" })
        expect(outcomes.filter(Exit.isSuccess)).toHaveLength(2)
        expect(yield* balances(payer)).toMatchObject({ creditUsage: 0, dataCreditUsage: 2 })
        yield* credits.withHold(payer, { feature: "chat", credits: 10 }, (hold) => hold.report({ credits: 10 }))
        expect(yield* balances(payer)).toMatchObject({ creditUsage: 10, dataCreditUsage: 2 })
      }))

    it.effect("a crashed process's holds expire after the TTL and are released once; a live process's are renewed", () =>
      Effect.gen(function*() {
        const live = yield* Credits
        const payer = yield* payerIn({ creditLimit: 100 })
        // Another process held 60 and crashed: nothing settles or renews its hold. On PGlite that
        // process was this one's predecessor, and its holds died with it.
        const now = yield* currentDate
        const crashed = { id: newId("hold"), organizationId: payer.organizationId, pool: "credits" as const, amount: 60 }
        if (name === "pglite") {
          expect(yield* canHold(payer, 100)).toBe(true)
          return
        }
        expect(yield* CreditsRepo.use((repo) => repo.hold({ ...crashed, expiresAt: new Date(now.getTime() + ttl) }))).toBe(true)
        const kept = yield* live.hold(payer, { feature: "chat", credits: 30 })
        expect(yield* canHold(payer, 11)).toBe(false)
        yield* TestClock.adjust(ttl / 2)
        yield* live.renewOpen
        expect(yield* live.releaseExpired).toBe(0)
        yield* TestClock.adjust(ttl / 2)
        yield* live.renewOpen
        expect(yield* live.releaseExpired).toBeGreaterThanOrEqual(1)
        expect(yield* live.releaseExpired).toBe(0)
        expect(yield* canHold(payer, 70)).toBe(true)
        expect(yield* canHold(payer, 71)).toBe(false)
        expect(yield* live.settle(kept, { credits: 12 })).toBe(12)
        expect((yield* balances(payer)).creditUsage).toBe(12)
        expect(yield* events(payer)).toHaveLength(1)
      }))
  })
})

/** Several processes on one PostgreSQL; without TEST_DATABASE_URL it is left out (test/support prints the notice). */
const sharedDatabases = postgresUrl === undefined ? [] : ["postgres"]

describe.each(sharedDatabases)("Credits across two processes on %s", () => {
  it.effect("holds from both processes never pass the pool, and one process releases the other's expired holds", () =>
    Effect.gen(function*() {
      const processes = yield* serversSharingPostgres({ creditHoldTtlMs: ttl })
      const [first, second] = processes.map((context) => Context.get(context, Credits))
      const payer = yield* Effect.provideContext(payerIn({ creditLimit: 100 }), processes[0])
      const gate = yield* Deferred.make<void>()
      const decided = yield* Ref.make(0)
      const decide = Effect.flatMap(Ref.updateAndGet(decided, (n) => n + 1), (n) =>
        n === 12 ? Deferred.succeed(gate, undefined) : Effect.void)
      const call = (credits: Credits["Service"]) =>
        credits.withHold(payer, { feature: "chat", credits: 30 }, (hold) =>
          decide.pipe(Effect.andThen(Deferred.await(gate)), Effect.andThen(hold.report({ credits: 25 })))).pipe(
            Effect.tapError(() => decide),
            Effect.match({ onSuccess: () => "served", onFailure: (denied) => denied.error })
          )
      const outcomes = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) => call(i % 2 === 0 ? first : second)),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome === "served")).toHaveLength(3)
      const usage = Effect.map(
        Effect.provideContext(OrganizationsRepo.use((repo) => repo.get(payer.organizationId)), processes[1]),
        (organization) => Option.getOrThrow(organization).creditUsage
      )
      expect(yield* usage).toBe(75)

      // The second process holds the rest and stops (crashes): only the first one is left to sweep.
      const orphan = yield* second.hold(payer, { feature: "chat", credits: 25 })
      yield* failsWith(first.hold(payer, { feature: "chat", credits: 1 }), "Forbidden", /^Insufficient credits$/)
      yield* TestClock.adjust(ttl)
      expect(yield* first.releaseExpired).toBeGreaterThanOrEqual(1)
      const kept = yield* first.hold(payer, { feature: "chat", credits: 20 })
      // The crashed process's late settlement finds its hold gone: it takes only what nobody holds.
      expect(yield* second.settle(orphan, { credits: 25 })).toBe(5)
      expect(yield* first.settle(kept, { credits: 20 })).toBe(20)
      expect(yield* usage).toBe(100)
    }))
})
