import Anthropic from "@anthropic-ai/sdk"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import OpenAI from "openai"
import { Credits, type Payer } from "../../../src/accounts/usage/Credits.ts"
import { spend } from "../../support/Billing.ts"
import { loopbackServer, sdkClients } from "../../support/LoopbackServer.ts"
import { startStubUpstream, type StubUpstream, stubUsage } from "../../support/StubUpstream.ts"
import { backends, type Tenant } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

/**
 * Never serve what is not paid for, end to end: many concurrent calls
 * through the official SDKs against a slow upstream, with a pool that pays
 * for only a few of them. A served call is always charged its full cost;
 * the rest are refused 403 before any upstream call.
 */

class Upstream extends Context.Service<Upstream, StubUpstream>()("test/BillingUpstream") {}

/** One credit per token, in and out, so that a charge reads as a token count. */
const perToken = { inputCreditsPerMillion: 1_000_000, outputCreditsPerMillion: 1_000_000 }

/** What a call the stub answers costs: its reported 21 input and 7 output tokens. */
const fullCost = stubUsage.prompt_tokens + stubUsage.completion_tokens

/** Enough for the stub's fixed 7 output and 21 input tokens, whatever the tokenizer counts for the prompt. */
const maxTokens = fullCost

const pool = 100
const concurrentCalls = 10

const serverOver = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Upstream.useSync((stub) =>
    loopbackServer(storage, {
      llmModels: Option.some([{ id: "metered", provider: "openai", upstream: "stub-metered", ...perToken }]),
      openaiBaseUrl: Option.some(stub.url),
      llmMaxRetries: 0
    })
  )).pipe(Layer.provideMerge(Layer.effect(
    Upstream,
    Effect.acquireRelease(Effect.promise(() => startStubUpstream({ delayMs: 150 })), (stub) => Effect.promise(stub.close))
  )))

const payerOf = (tenant: Tenant): Payer => ({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null })

/** SDK clients of a fresh tenant whose organization has exactly `pool` credits left. */
const fundedClients = Effect.gen(function*() {
  const clients = yield* sdkClients("billing")
  yield* spend(payerOf(clients.tenant), { feature: "setup", credits: 100_000 - pool })
  return clients
})

const chargesOf = (tenant: Tenant) =>
  Effect.map(
    usageHistory(tenant.organizationId, { featureKey: "chat" }),
    (page) => page.events
  )

/** The chat charges once `count` calls have settled (streams settle just after their last byte). */
const settledCharges = (tenant: Tenant, count: number) =>
  chargesOf(tenant).pipe(
    Effect.repeat({ until: (events) => events.length >= count, schedule: Schedule.spaced("20 millis"), times: 250 }),
    Effect.tap((events) => Effect.sync(() => expect(events).toHaveLength(count)))
  )

/** True when the whole rest of the pool can be held: no hold of a finished call is left behind. */
const nothingHeld = (tenant: Tenant, spent: number) =>
  Credits.use((credits) =>
    Effect.match(credits.withHold(payerOf(tenant), { feature: "probe", credits: pool - spent }, () => Effect.void), {
      onSuccess: () => true,
      onFailure: () => false
    })
  )

type Outcome = "served" | number

/** Runs the calls at once; each comes back "served" or with the HTTP status it was refused with. */
const concurrently = (call: () => Promise<unknown>) =>
  Effect.promise(() =>
    Promise.all(Array.from({ length: concurrentCalls }, () =>
      call().then(
        (): Outcome => "served",
        (error: unknown): Outcome => (error instanceof OpenAI.APIError || error instanceof Anthropic.APIError ? error.status ?? -1 : -1)
      )))
  )

/** The invariant: every served call charged its full cost, every other one refused 403, the pool never passed. */
const expectPaidFor = (outcomes: ReadonlyArray<Outcome>, tenant: Tenant, upstreamCalls: number) =>
  Effect.gen(function*() {
    const served = outcomes.filter((outcome) => outcome === "served").length
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served * fullCost).toBeLessThanOrEqual(pool)
    expect(outcomes.filter((outcome) => outcome !== "served")).toEqual(Array.from({ length: concurrentCalls - served }, () => 403))
    expect(upstreamCalls).toBe(served)
    const charges = yield* settledCharges(tenant, served)
    expect(charges.map((event) => [event.credits, event.inputTokens, event.outputTokens]))
      .toEqual(Array.from({ length: served }, () => [fullCost, stubUsage.prompt_tokens, stubUsage.completion_tokens]))
    expect(yield* nothingHeld(tenant, served * fullCost)).toBe(true)
  })

const requestsSince = (from: number) => Upstream.useSync((stub) => stub.requests.length - from)
const requestCount = Upstream.useSync((stub) => stub.requests.length)

const collect = async (iterable: AsyncIterable<unknown>) => {
  for await (const _ of iterable) {
    // Reading to the end is the point.
  }
}

const hello = [{ role: "user" as const, content: "Hello" }]

describe.each(backends)("billing on $name", ({ storage }) => {
  it.layer(serverOver(storage), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("non-streaming chat completions: the pool pays for every call it serves, in full", () =>
      Effect.gen(function*() {
        const { openai, tenant } = yield* fundedClients
        const from = yield* requestCount
        const outcomes = yield* concurrently(() =>
          openai.chat.completions.create({ model: "metered", max_tokens: maxTokens, messages: hello }))
        yield* expectPaidFor(outcomes, tenant, yield* requestsSince(from))
      }))

    it.effect("streamed chat completions (OpenAI wire format): the same", () =>
      Effect.gen(function*() {
        const { openai, tenant } = yield* fundedClients
        const from = yield* requestCount
        const outcomes = yield* concurrently(async () =>
          collect(await openai.chat.completions.create({ model: "metered", max_tokens: maxTokens, messages: hello, stream: true })))
        yield* expectPaidFor(outcomes, tenant, yield* requestsSince(from))
      }))

    it.effect("streamed messages (Anthropic wire format): the same", () =>
      Effect.gen(function*() {
        const { anthropic, tenant } = yield* fundedClients
        const from = yield* requestCount
        const outcomes = yield* concurrently(async () =>
          collect(await anthropic.messages.create({ model: "metered", max_tokens: maxTokens, messages: hello, stream: true })))
        yield* expectPaidFor(outcomes, tenant, yield* requestsSince(from))
      }))

    it.effect("clients that leave mid-stream are charged what was generated, and their holds are released", () =>
      Effect.gen(function*() {
        const { openai, tenant } = yield* fundedClients
        const from = yield* requestCount
        const outcomes = yield* concurrently(async () => {
          const stream = await openai.chat.completions.create({
            model: "metered",
            max_tokens: 30,
            messages: [{ role: "user", content: "[slow] go on" }],
            stream: true
          })
          let chunks = 0
          for await (const _ of stream) if (++chunks === 4) break
        })
        const served = outcomes.filter((outcome) => outcome === "served").length
        expect(served).toBeGreaterThanOrEqual(1)
        expect(outcomes.filter((outcome) => outcome !== "served")).toEqual(Array.from({ length: concurrentCalls - served }, () => 403))
        expect(yield* requestsSince(from)).toBe(served)
        const charges = yield* settledCharges(tenant, served)
        for (const charge of charges) {
          expect(charge.outputTokens).toBeGreaterThanOrEqual(3)
          expect(charge.credits).toBe(charge.inputTokens + charge.outputTokens)
        }
        const spent = charges.reduce((total, charge) => total + charge.credits, 0)
        expect(spent).toBeLessThanOrEqual(pool)
        expect(yield* nothingHeld(tenant, spent)).toBe(true)
      }))

    it.effect("a worst case past any balance (a huge max_tokens) is refused 403 before any upstream call", () =>
      Effect.gen(function*() {
        const { openai, tenant } = yield* fundedClients
        const from = yield* requestCount
        const outcomes = yield* concurrently(() =>
          openai.chat.completions.create({ model: "metered", max_tokens: Number.MAX_SAFE_INTEGER, n: 8, messages: hello }))
        expect(outcomes).toEqual(Array.from({ length: concurrentCalls }, () => 403))
        expect(yield* requestsSince(from)).toBe(0)
        expect(yield* nothingHeld(tenant, 0)).toBe(true)
      }))

    it.effect("a failed call is released: nothing charged, nothing left held", () =>
      Effect.gen(function*() {
        const { openai, tenant } = yield* fundedClients
        const outcomes = yield* concurrently(() =>
          openai.chat.completions.create({ model: "metered", max_tokens: maxTokens, messages: [{ role: "user", content: "[fail-400]" }] }))
        expect(outcomes.every((outcome) => outcome === 400 || outcome === 403)).toBe(true)
        expect(outcomes).toContain(400)
        expect(yield* chargesOf(tenant)).toEqual([])
        expect(yield* nothingHeld(tenant, 0)).toBe(true)
      }))
  })
})
