import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { OrganizationsRepo } from "../../src/organizations/OrganizationsRepo.ts"
import type { Forbidden } from "../../src/platform/Errors.ts"
import { Credits, creditsForTokens, type Payer } from "../../src/usage/Credits.ts"
import { UsageRepo } from "../../src/usage/UsageRepo.ts"
import { failsWith } from "../support/Assertions.ts"
import { backends } from "../support/TestServer.ts"

const payerIn = (limits: { readonly creditLimit?: number; readonly dataCreditLimit?: number }) =>
  Effect.map(
    OrganizationsRepo.use((organizations) => organizations.create({ name: "Payer", ...limits })),
    (organization): Payer => ({ organizationId: organization.id, companyId: "cmp_payer", userId: "usr_payer" })
  )

const balances = (payer: Payer) =>
  Effect.map(OrganizationsRepo.use((organizations) => organizations.get(payer.organizationId)), Option.getOrThrow)

/** "charged", or the failure as "<tag>: <message>". */
const outcome = (charge: Effect.Effect<void, Forbidden>) =>
  Effect.match(charge, { onSuccess: () => "charged", onFailure: (error) => `${error._tag}: ${error.error}` })

const events = (payer: Payer) =>
  UsageRepo.use((usage) => usage.history(payer.organizationId, {}, { offset: 0, limit: 1000 }))

describe.each(backends)("Credits on $name", ({ storage }) => {
  it.layer(Credits.layer.pipe(Layer.provideMerge(storage)))((it) => {
    it.effect("concurrent charges past the limit: exactly floor(limit / amount) succeed, each with one event", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const limit = 100
        const amount = 7
        const attempts = 40
        const payer = yield* payerIn({ creditLimit: limit })
        const outcomes = yield* Effect.all(
          Array.from({ length: attempts }, () => outcome(credits.charge(payer, { feature: "chat", credits: amount }))),
          { concurrency: "unbounded" }
        )
        const succeeded = outcomes.filter((result) => result === "charged").length
        expect(succeeded).toBe(Math.floor(limit / amount))
        expect(outcomes.filter((result) => result !== "charged")).toEqual(
          Array.from({ length: attempts - succeeded }, () => "Forbidden: Insufficient credits")
        )
        const after = yield* balances(payer)
        expect(after.creditUsage).toBe(succeeded * amount)
        expect(after.creditUsage).toBeLessThanOrEqual(limit)
        const recorded = yield* events(payer)
        expect(recorded.total).toBe(succeeded)
        expect(recorded.events.every((event) => event.credits === amount)).toBe(true)
      }))

    it.effect("concurrent settlements of usage already spent fill the pool exactly and record every event", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 100 })
        const debited = yield* Effect.all(
          Array.from({ length: 30 }, () => credits.settle(payer, { feature: "chat", credits: 7, outputTokens: 900 })),
          { concurrency: "unbounded" }
        )
        expect(debited.reduce((total, credit) => total + credit, 0)).toBe(100)
        expect((yield* balances(payer)).creditUsage).toBe(100)
        const recorded = yield* events(payer)
        expect(recorded.total).toBe(30)
        expect(recorded.events.every((event) => event.outputTokens === 900)).toBe(true)
      }))

    it.effect("out of credits: 403 \"Insufficient credits\", and nothing is recorded", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 3 })
        yield* credits.ensureAvailable(payer, 3)
        yield* failsWith(credits.ensureAvailable(payer, 4), "Forbidden", /^Insufficient credits$/)
        yield* failsWith(credits.charge(payer, { feature: "chat", credits: 4 }), "Forbidden", /^Insufficient credits$/)
        expect((yield* events(payer)).total).toBe(0)
        yield* credits.charge(payer, { feature: "chat", credits: 3 })
        yield* failsWith(credits.ensureAvailable(payer), "Forbidden", /^Insufficient credits$/)
        yield* failsWith(credits.charge(payer, { feature: "chat", credits: 1 }), "Forbidden", /^Insufficient credits$/)
        expect((yield* events(payer)).total).toBe(1)
        expect((yield* balances(payer)).creditUsage).toBe(3)
        const unknown: Payer = { organizationId: "org_missing", companyId: null, userId: null }
        yield* failsWith(credits.ensureAvailable(unknown), "Forbidden", /^Insufficient credits$/)
      }))

    it.effect("the data-credit pool is independent of the credit pool", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 10, dataCreditLimit: 2 })
        const outcomes = yield* Effect.all(
          Array.from({ length: 6 }, () => outcome(credits.charge(payer, { feature: "jobs", credits: 1 }, "data"))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((result) => result === "charged").length).toBe(2)
        yield* failsWith(credits.ensureAvailable(payer, 1, "data"), "Forbidden", /^Insufficient credits$/)
        yield* credits.ensureAvailable(payer, 10)
        yield* credits.charge(payer, { feature: "chat", credits: 10 })
        expect(yield* balances(payer)).toMatchObject({ creditUsage: 10, dataCreditUsage: 2 })
        const onlyCredits = yield* payerIn({ creditLimit: 10 })
        yield* failsWith(credits.charge(onlyCredits, { feature: "jobs", credits: 1 }, "data"), "Forbidden")
      }))

    it.effect("a charge records who paid, the feature, the model and the token counts", () =>
      Effect.gen(function*() {
        const credits = yield* Credits
        const payer = yield* payerIn({ creditLimit: 10 })
        const spent = creditsForTokens(1_500)
        expect(spent).toBe(2)
        yield* credits.charge(payer, { feature: "chat", model: "balanced", credits: spent, inputTokens: 1_200, outputTokens: 300 })
        const [event] = (yield* events(payer)).events
        expect(event).toMatchObject({
          organizationId: payer.organizationId,
          companyId: "cmp_payer",
          userId: "usr_payer",
          feature: "chat",
          model: "balanced",
          credits: 2,
          tokens: 1_500,
          inputTokens: 1_200,
          outputTokens: 300
        })
        expect(creditsForTokens(0)).toBe(1)
        expect(creditsForTokens(1_000)).toBe(1)
        expect(creditsForTokens(1_001)).toBe(2)
      }))
  })
})
