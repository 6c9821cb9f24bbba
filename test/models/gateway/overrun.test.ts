import Anthropic from "@anthropic-ai/sdk"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import type { Payer } from "../../../src/accounts/usage/Credits.ts"
import { spend } from "../../support/Billing.ts"
import { loopbackServer, sdkClients } from "../../support/LoopbackServer.ts"
import { startStubUpstream, type StubUpstream } from "../../support/StubUpstream.ts"
import { backends, type Tenant } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

/**
 * A provider that reports more tokens than the hold counted (here 2,300 input
 * tokens for a two-word prompt): every served call is charged its real cost,
 * past its hold; the balance goes below zero by at most the overruns of the
 * calls in flight, and the next call is refused before any upstream call.
 */

class Upstream extends Context.Service<Upstream, StubUpstream>()("test/OverrunUpstream") {}

/** One credit per thousand tokens: the hold (a few prompt tokens and `max_tokens`) is 1 credit, the reported usage costs 3. */
const perThousand = { inputCreditsPerMillion: 1_000, outputCreditsPerMillion: 1_000 }
const reported = { prompt_tokens: 2_300, completion_tokens: 7, total_tokens: 2_307, prompt_tokens_details: { cached_tokens: 0 } }
const held = 1
const realCost = 3

const pool = 20
const concurrentCalls = 50

const serverOver = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Upstream.useSync((stub) =>
    loopbackServer(storage, {
      llmModels: Option.some([{ id: "metered", provider: "openai", upstream: "stub-metered", ...perThousand }]),
      openaiBaseUrl: Option.some(stub.url),
      llmMaxRetries: 0
    })
  )).pipe(Layer.provideMerge(Layer.effect(
    Upstream,
    Effect.acquireRelease(
      Effect.promise(() => startStubUpstream({ delayMs: 300, usage: reported })),
      (stub) => Effect.promise(stub.close)
    )
  )))

const payerOf = (tenant: Tenant): Payer => ({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null })

const requestCount = Upstream.useSync((stub) => stub.requests.length)

const chargesOnceSettled = (tenant: Tenant, count: number) =>
  usageHistory(tenant.organizationId, { featureKey: "chat" }).pipe(
    Effect.map((page) => page.events),
    Effect.repeat({ until: (events) => events.length >= count, schedule: Schedule.spaced("20 millis"), times: 250 })
  )

const collect = async (iterable: AsyncIterable<unknown>) => {
  for await (const _ of iterable) {
    // Reading to the end is the point.
  }
}

type Outcome = "served" | number

const outcomeOf = (call: Promise<unknown>): Promise<Outcome> =>
  call.then(() => "served", (error: unknown) => (error instanceof Anthropic.APIError ? error.status ?? -1 : -1))

const twoWords = [{ role: "user" as const, content: "Hello there" }]

describe.each(backends)("overrunning calls on $name", ({ storage }) => {
  it.layer(serverOver(storage), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect.each([
      ["messages", (anthropic: Anthropic) => anthropic.messages.create({ model: "metered", max_tokens: 7, messages: twoWords })],
      ["streamed messages", async (anthropic: Anthropic) =>
        collect(await anthropic.messages.create({ model: "metered", max_tokens: 7, messages: twoWords, stream: true }))]
    ] as const)("%s: each served call is charged its real cost, the pool overdrawn by at most the overruns in flight", ([, call]) =>
      Effect.gen(function*() {
        const { anthropic, tenant } = yield* sdkClients("overrun")
        yield* spend(payerOf(tenant), { feature: "setup", credits: 100_000 - pool })
        const from = yield* requestCount
        const outcomes = yield* Effect.promise(() =>
          Promise.all(Array.from({ length: concurrentCalls }, () => outcomeOf(call(anthropic))))
        )
        const served = outcomes.filter((outcome) => outcome === "served").length
        expect(served).toBeGreaterThanOrEqual(Math.floor(pool / realCost))
        expect(served).toBeLessThanOrEqual(pool / held)
        expect(outcomes.filter((outcome) => outcome !== "served")).toEqual(Array.from({ length: concurrentCalls - served }, () => 403))
        expect((yield* requestCount) - from).toBe(served)

        const charges = yield* chargesOnceSettled(tenant, served)
        expect(charges.map((event) => [event.credits, event.inputTokens, event.outputTokens]))
          .toEqual(Array.from({ length: served }, () => [realCost, reported.prompt_tokens, reported.completion_tokens]))
        const spent = served * realCost
        expect(spent - pool).toBeLessThanOrEqual(served * (realCost - held))

        // The balance is spent (or overdrawn): the next call is refused before it reaches the provider.
        const afterwards = yield* requestCount
        expect(yield* Effect.promise(() => outcomeOf(call(anthropic)))).toBe(403)
        expect(yield* requestCount).toBe(afterwards)
      }))
  })
})
