import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import { catalogFrom, defaultPrices, localModels, priceOf, resolveModel } from "../../../src/models/llm/Catalog.ts"
import { type CatalogModel, Llm, LlmError, ModelCatalog, prompt } from "../../../src/models/llm/Llm.ts"
import { offThreadCharacters, piecesOf, tokenCounter, TokenizerThreads } from "../../../src/models/llm/Tokenizer.ts"
import { OrganizationsRepo } from "../../../src/accounts/organizations/OrganizationsRepo.ts"
import * as BilledLlm from "../../../src/accounts/usage/BilledLlm.ts"
import { Credits, type Payer } from "../../../src/accounts/usage/Credits.ts"
import { pgliteStorage, testConfig } from "../../support/TestServer.ts"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"

/** One credit per token in and out, with a small output cap, so that holds read as token counts. */
const metered: CatalogModel = {
  id: "metered",
  provider: "openai",
  upstream: "metered",
  inputCreditsPerMillion: 1_000_000,
  outputCreditsPerMillion: 1_000_000,
  maxOutputTokens: 50
}

const usage = { inputTokens: 9, outputTokens: 4, cachedTokens: 0 }

/** An `Llm` whose calls wait until `release` (so a test can interrupt them), then answer or fail by prompt. */
const gatedLlm = (release: Deferred.Deferred<void>, started: Deferred.Deferred<void>) =>
  Layer.succeed(Llm, {
    generate: (request) =>
      Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release)).pipe(
        Effect.andThen(
          JSON.stringify(request.messages).includes("fail")
            ? Effect.fail(new LlmError({ kind: "upstream", message: "down" }))
            : Effect.succeed({ id: "r", model: "metered", content: [{ type: "text" as const, text: "ok" }], stopReason: "end_turn" as const, usage })
        )
      ),
    stream: () => Stream.fail(new LlmError({ kind: "invalid_request", message: "not streamed here" })),
    embed: () => Effect.fail(new LlmError({ kind: "invalid_request", message: "not embedded here" }))
  })

const setup = Effect.gen(function*() {
  const release = yield* Deferred.make<void>()
  const started = yield* Deferred.make<void>()
  const layer = Credits.layer.pipe(
    Layer.provideMerge(pgliteStorage),
    Layer.provideMerge(gatedLlm(release, started)),
    // As in the service: large texts are counted on worker threads.
    Layer.provideMerge(TokenizerThreads),
    Layer.provideMerge(Layer.succeed(ModelCatalog, { models: [metered], resolve: (model) => resolveModel([metered], model) })),
    Layer.provide(testConfig())
  )
  const context = yield* Layer.build(layer)
  const organization = yield* Effect.provideContext(OrganizationsRepo.use((repo) => repo.create({ name: "Billed", creditLimit: 1_000 })), context)
  const payer: Payer = { organizationId: organization.id, companyId: "cmp_billed", userId: "usr_billed" }
  const balance = Effect.provideContext(
    Effect.map(settledOrganization(organization.id), (found) => Option.getOrThrow(found).creditUsage),
    context
  )
  const events = Effect.provideContext(
    Effect.map(usageHistory(organization.id), (page) => page.events),
    context
  )
  return { release, started, context, payer, balance, events }
})

describe("prices", () => {
  it("default per provider and tier, and LLM_MODELS fields override them", () => {
    expect(priceOf(localModels[0])).toEqual(defaultPrices.local)
    expect(priceOf({ id: "o", provider: "anthropic", upstream: "o", tier: "highest" })).toEqual(defaultPrices.highest)
    expect(priceOf({ id: "u", provider: "openai", upstream: "u" })).toEqual(defaultPrices.balanced)
    expect(priceOf(metered)).toEqual({ inputCreditsPerMillion: 1_000_000, outputCreditsPerMillion: 1_000_000, maxOutputTokens: 50 })
    const none = { openaiBaseUrl: Option.some("http://x"), openaiApiKey: Option.none(), anthropicBaseUrl: Option.none(), anthropicApiKey: Option.none() }
    const listed = catalogFrom({ ...none, llmModels: Option.some([{ id: "m", provider: "openai", inputCreditsPerMillion: 2, maxOutputTokens: 10 }]) })
    expect("models" in listed && priceOf(listed.models[0])).toEqual({ ...defaultPrices.balanced, inputCreditsPerMillion: 2, maxOutputTokens: 10 })
  })

  it("charge whole credits, rounded up; no tokens cost nothing", () => {
    const price = priceOf({ id: "h", provider: "openai", upstream: "h", tier: "highest" })
    expect(BilledLlm.creditsFor(price, { inputTokens: 21, outputTokens: 7 })).toBe(1)
    expect(BilledLlm.creditsFor(price, { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(90_000)
    expect(BilledLlm.creditsFor(price, { inputTokens: 0, outputTokens: 0 })).toBe(0)
  })
})

describe("BilledLlm", () => {
  it.effect("holds input tokens plus maxTokens per alternative, else the model's output cap; an unknown model fails first", () =>
    Effect.scoped(Effect.gen(function*() {
      const { context } = yield* setup
      const request = prompt("metered", "Count these words please")
      const inputTokens = yield* (yield* tokenCounter).request(request)
      const quote = (yield* Effect.provideContext(BilledLlm.quote("content", request), context))
      expect(quote.estimate).toEqual({ feature: "content", model: "metered", credits: inputTokens + 50 })
      const bounded = yield* Effect.provideContext(BilledLlm.quote("content", { ...request, maxTokens: 7, n: 3 }), context)
      expect(bounded.estimate.credits).toBe(inputTokens + 21)
      // A large text, counted on a worker thread, is held for what its pieces counted on this thread add up to.
      const large = Array.from({ length: 4_000 }, (_, i) => `Paragraph ${i}: the hold covers every token.\n`).join("")
      expect(large.length).toBeGreaterThan(offThreadCharacters)
      const pieces = { ...request, messages: [{ role: "user" as const, content: [...piecesOf(large)].map((text) => ({ type: "text" as const, text })) }] }
      const whole = yield* Effect.provideContext(BilledLlm.quote("content", prompt("metered", large)), context)
      const inPieces = yield* Effect.provideContext(BilledLlm.quote("content", pieces), context)
      expect(pieces.messages[0].content.length).toBeGreaterThan(1)
      expect(whole.estimate.credits).toBe(inPieces.estimate.credits)
      const unknown = yield* Effect.flip(Effect.provideContext(BilledLlm.quote("content", prompt("gpt-nope", "Hi")), context))
      expect(unknown).toMatchObject({ kind: "invalid_request" })
    })))

  it.effect("settles an answered call to its reported usage, releases a failed one, and charges an abandoned one its input", () =>
    Effect.scoped(Effect.gen(function*() {
      const { release, started, context, payer, balance, events } = yield* setup
      const call = (text: string) => Effect.provideContext(BilledLlm.generate(payer, "documents", prompt("metered", text)), context)
      const abandoned = yield* Effect.forkChild(call("Summarise this"))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(abandoned)
      const inputTokens = yield* (yield* tokenCounter).request(prompt("metered", "Summarise this"))
      expect(yield* balance).toBe(inputTokens)
      yield* Deferred.succeed(release, undefined)
      expect(yield* Effect.flip(call("please fail"))).toMatchObject({ _tag: "LlmError", kind: "upstream" })
      expect(yield* balance).toBe(inputTokens)
      const answered = yield* call("Summarise that")
      expect(answered.usage).toEqual(usage)
      expect(yield* balance).toBe(inputTokens + 13)
      expect((yield* events).map((event) => [event.feature, event.model, event.credits, event.inputTokens, event.outputTokens])).toEqual([
        ["documents", "metered", 13, 9, 4],
        ["documents", "metered", inputTokens, inputTokens, 0]
      ])
    })))
})
