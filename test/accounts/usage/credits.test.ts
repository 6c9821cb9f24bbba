import { describe, expect, it } from "@effect/vitest"
import { Context, Data, Deferred, Effect, Exit, Fiber, Layer, Option, Ref, Stream } from "effect"
import { TestClock } from "effect/testing"
import { OrganizationsRepo } from "../../../src/accounts/organizations/OrganizationsRepo.ts"
import { newId } from "../../../src/platform/Ids.ts"
import { currentDate } from "../../../src/platform/Time.ts"
import { Credits, type Payer } from "../../../src/accounts/usage/Credits.ts"
import { CreditsRepo } from "../../../src/accounts/usage/CreditsRepo.ts"
import { UsageRepo } from "../../../src/accounts/usage/UsageRepo.ts"
import { failsWith } from "../../support/Assertions.ts"
import { onLiveClock } from "../../support/SchedulerTest.ts"
import { backends, postgresUrl, serversSharingPostgres, testConfig } from "../../support/TestServer.ts"

const ttl = 60_000

class ModelDown extends Data.TaggedError("ModelDown") {}

const payerIn = (limits: { readonly creditLimit?: number; readonly dataCreditLimit?: number }) =>
  Effect.map(
    OrganizationsRepo.use((organizations) => organizations.create({ name: "Payer", ...limits })),
    (organization): Payer => ({ organizationId: organization.id, companyId: "cmp_payer", userId: "usr_payer" })
  )

/** Settled calls are committed in groups: a reader of balances or usage flushes first. */
const flushed = Credits.use((credits) => credits.flush)

const balances = (payer: Payer) =>
  Effect.andThen(
    flushed,
    Effect.map(OrganizationsRepo.use((organizations) => organizations.get(payer.organizationId)), Option.getOrThrow)
  )

const events = (payer: Payer) =>
  Effect.andThen(
    flushed,
    Effect.map(UsageRepo.use((usage) => usage.history(payer.organizationId, {}, { offset: 0, limit: 1000 })), (page) => page.events)
  )

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
  Credits.layer.pipe(Layer.provideMerge(onLiveClock(storage)), Layer.provide(testConfig({ usage: { holdTtlMs: ttl } })))

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
            Effect.match(call, { onSuccess: () => "served", onFailure: (denied) => `${denied._tag}: ${denied.message}` })),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((outcome) => outcome === "served")).toHaveLength(3)
        expect(outcomes.filter((outcome) => outcome !== "served")).toEqual(
          Array.from({ length: 9 }, () => "InsufficientCredits: Insufficient credits")
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
        expect(refused).toMatchObject({ _tag: "InsufficientCredits", message: "Insufficient credits" })
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
        yield* failsWith(credits.hold(payer, { feature: "chat", credits: 6 }), "InsufficientCredits", /^Insufficient credits$/)
        yield* failsWith(credits.hold(payer, { feature: "chat", credits: 1e300 }), "InsufficientCredits", /^Insufficient credits$/)
        const unknown: Payer = { organizationId: "org_missing", companyId: null, userId: null }
        yield* failsWith(credits.hold(unknown, { feature: "chat", credits: 0 }), "InsufficientCredits", /^Insufficient credits$/)
      }))

    it.effect("a reported cost past any number (a provider's absurd usage) is charged within the pool, and ends the hold", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        for (const absurd of [Number.POSITIVE_INFINITY, 1e300, Number.NaN]) {
          const payer = yield* payerIn({ creditLimit: 10 })
          const hold = yield* credits.hold(payer, { feature: "chat", credits: 4 })
          const charged = yield* credits.settle(hold, { credits: absurd, inputTokens: absurd, outputTokens: 1 })
          // Past the hold, a backend charges what the pool has free (shared database) or nothing more (embedded);
          // a cost that is not a number is charged the hold.
          expect(charged, String(absurd)).toBeGreaterThanOrEqual(4)
          expect(charged, String(absurd)).toBeLessThanOrEqual(Number.isNaN(absurd) ? 4 : 10)
          expect((yield* balances(payer)).creditUsage, String(absurd)).toBe(charged)
          expect(yield* events(payer), String(absurd)).toMatchObject([{ credits: charged }])
          expect(yield* canHold(payer, 10 - charged), String(absurd)).toBe(true)
        }
      }))

    it.effect("a call that cost more than its hold is charged its real cost: past the balance by at most that overrun, then refused", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        // The pool covers the overrun: charged in full, nothing overdrawn.
        const covered = yield* payerIn({ creditLimit: 20 })
        const first = yield* credits.hold(covered, { feature: "chat", credits: 4 })
        expect(yield* credits.settle(first, { credits: 7, inputTokens: 2_300, outputTokens: 7 })).toBe(7)
        expect((yield* balances(covered)).creditUsage).toBe(7)
        expect(yield* canHold(covered, 13)).toBe(true)
        expect(yield* canHold(covered, 14)).toBe(false)
        // The pool does not: the balance goes below zero by the overrun, and the next call is refused.
        const short = yield* payerIn({ creditLimit: 5 })
        const second = yield* credits.hold(short, { feature: "chat", credits: 4 })
        expect(yield* credits.settle(second, { credits: 7, inputTokens: 2_300, outputTokens: 7 })).toBe(7)
        // Refused before the commit (the lease's deficit) and after it (the pool's usage).
        expect(yield* canHold(short, 1)).toBe(false)
        expect((yield* balances(short)).creditUsage).toBe(7)
        expect(yield* canHold(short, 1)).toBe(false)
        expect(yield* canHold(short, 0)).toBe(true)
        expect((yield* events(short)).map((event) => [event.credits, event.inputTokens, event.outputTokens])).toEqual([[7, 2_300, 7]])
      }))

    it.effect("many calls overrunning at once overdraw by no more than their overruns, each charged in full", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const limit = 20
        // Each call holds 1 and costs 3 (a provider counting 2,300 input tokens for a two-word prompt).
        const overrunning = (payer: Payer, before: Effect.Effect<void>) =>
          Effect.match(
            credits.withHold(payer, { feature: "chat", model: "m", credits: 1 }, (hold) =>
              Effect.andThen(before, hold.report({ credits: 3, inputTokens: 2_300, outputTokens: 7 }))),
            { onSuccess: () => "served", onFailure: (denied) => denied.message }
          )
        // All held before any settles: every hold fits, every one overruns.
        const gated = yield* payerIn({ creditLimit: limit })
        const gate = yield* Deferred.make<void>()
        const decided = yield* Ref.make(0)
        const decide = Effect.flatMap(Ref.updateAndGet(decided, (n) => n + 1), (n) =>
          n === 30 ? Deferred.succeed(gate, undefined) : Effect.void)
        const outcomes = yield* Effect.all(
          Array.from({ length: 30 }, () =>
            overrunning(gated, Effect.andThen(decide, Deferred.await(gate))).pipe(
              Effect.tap((outcome) => (outcome === "served" ? Effect.void : decide))
            )),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((outcome) => outcome === "served")).toHaveLength(limit)
        expect((yield* balances(gated)).creditUsage).toBe(limit * 3)
        expect(yield* canHold(gated, 1)).toBe(false)
        // Holds and settlements interleaved: later holds cover earlier overruns while the pool can.
        const interleaved = yield* payerIn({ creditLimit: limit })
        const mixed = yield* Effect.all(
          Array.from({ length: 30 }, (_, i) => overrunning(interleaved, Effect.forEach(Array.from({ length: i % 7 }), () => Effect.yieldNow, { discard: true }))),
          { concurrency: "unbounded" }
        )
        const served = mixed.filter((outcome) => outcome === "served").length
        const usage = (yield* balances(interleaved)).creditUsage
        expect(usage).toBe(served * 3)
        expect(usage - limit).toBeLessThanOrEqual(served * 2)
        expect(served).toBeGreaterThanOrEqual(Math.floor(limit / 3))
        expect(yield* canHold(interleaved, Math.max(1, limit - usage + 1))).toBe(false)
        expect((yield* events(interleaved)).every((event) => event.credits === 3 && event.inputTokens === 2_300)).toBe(true)
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

    it.effect("a crashed process's leases expire after the TTL and are released once; a live process's are renewed", () =>
      Effect.gen(function*() {
        const live = yield* Credits
        const payer = yield* payerIn({ creditLimit: 100 })
        // Another process leased 60 and crashed: nothing commits, renews or returns its lease.
        const now = yield* currentDate
        const crashed = { id: newId("lease"), organizationId: payer.organizationId, pool: "credits" as const }
        const request = { needed: 60, wanted: 60, opening: true, expiresAt: new Date(now.getTime() + ttl) }
        expect(yield* CreditsRepo.use((repo) => repo.reserve(crashed, request))).toEqual({ _tag: "Reserved", amount: 60 })
        if (name === "pglite") {
          // The embedded database serves one process: a restart releases its predecessor's leases at once.
          const restarted = Context.get(
            yield* Layer.build(Layer.fresh(Credits.layer).pipe(Layer.provide(testConfig({ usage: { holdTtlMs: ttl } })))),
            Credits
          )
          expect(yield* restarted.withHold(payer, { feature: "probe", credits: 100 }, () => Effect.void)).toBeUndefined()
          return
        }
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

    it.effect("a clean shutdown commits every settled call and returns every lease", () =>
      Effect.gen(function*() {
        const payer = yield* payerIn({ creditLimit: 50 })
        yield* Effect.scoped(Effect.gen(function*() {
          const stopping = Context.get(
            yield* Layer.build(Layer.fresh(Credits.layer).pipe(Layer.provide(testConfig({ usage: { holdTtlMs: ttl } })))),
            Credits
          )
          yield* stopping.withHold(payer, { feature: "chat", credits: 20 }, (hold) => hold.report({ credits: 7 }))
        }))
        expect((yield* balances(payer)).creditUsage).toBe(7)
        expect((yield* events(payer)).map((event) => event.credits)).toEqual([7])
        expect(yield* canHold(payer, 43)).toBe(true)
      }))

    it.effect("a lease no call used for CREDIT_LEASE_IDLE_MS returns to the pool; one in use stays", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        // Earlier tests' leases go first, so that the counts below are this test's.
        yield* TestClock.adjust(1_000)
        yield* credits.returnIdle
        const payer = yield* payerIn({ creditLimit: 100 })
        const leased = Effect.map(OrganizationsRepo.use((organizations) => organizations.get(payer.organizationId)), (found) =>
          Option.getOrThrow(found))
        yield* credits.withHold(payer, { feature: "chat", credits: 10 }, (hold) => hold.report({ credits: 4 }))
        yield* credits.flush
        const open = yield* credits.hold(payer, { feature: "chat", credits: 1 })
        yield* TestClock.adjust(1_000)
        expect(yield* credits.returnIdle).toBe(0)
        yield* credits.release(open)
        expect(yield* credits.returnIdle).toBe(0)
        yield* TestClock.adjust(1_000)
        expect(yield* credits.returnIdle).toBe(1)
        expect(yield* leased).toMatchObject({ creditUsage: 4 })
        // Everything else is free again: nothing stays leased.
        expect(yield* canHold(payer, 96)).toBe(true)
      }))
  })
})

/** Several processes on one PostgreSQL; without TEST_DATABASE_URL it is left out (test/support prints the notice). */
const sharedDatabases = postgresUrl === undefined ? [] : ["postgres"]

describe.each(sharedDatabases)("Credits across two processes on %s", () => {
  it.effect("holds from both processes never pass the pool, and one process releases the other's expired holds", () =>
    Effect.gen(function*() {
      const processes = yield* serversSharingPostgres({ usage: { holdTtlMs: ttl } })
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
            Effect.match({ onSuccess: () => "served", onFailure: (denied) => denied.message })
          )
      const outcomes = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) => call(i % 2 === 0 ? first : second)),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome === "served")).toHaveLength(3)
      const usage = Effect.map(
        Effect.andThen(
          Effect.andThen(first.flush, second.flush),
          Effect.provideContext(OrganizationsRepo.use((repo) => repo.get(payer.organizationId)), processes[1])
        ),
        (organization) => Option.getOrThrow(organization).creditUsage
      )
      expect(yield* usage).toBe(75)

      // Each process still leases part of the pool; idle leases return to it.
      yield* TestClock.adjust(1_000)
      yield* first.returnIdle
      yield* second.returnIdle
      // The second process holds the rest and stops (crashes): only the first one is left to sweep.
      const orphan = yield* second.hold(payer, { feature: "chat", credits: 25 })
      yield* failsWith(first.hold(payer, { feature: "chat", credits: 1 }), "InsufficientCredits", /^Insufficient credits$/)
      yield* TestClock.adjust(ttl)
      expect(yield* first.releaseExpired).toBeGreaterThanOrEqual(1)
      const kept = yield* first.hold(payer, { feature: "chat", credits: 20 })
      // The crashed process's late settlement finds its lease gone: it is charged only what nobody holds.
      yield* second.settle(orphan, { credits: 25 })
      expect(yield* usage).toBe(80)
      expect(yield* first.settle(kept, { credits: 20 })).toBe(20)
      expect(yield* usage).toBe(100)
    }))
})
