import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { generateKey } from "../../src/accounts/keys/KeyFormat.ts"
import { KeysRepo } from "../../src/accounts/keys/KeysRepo.ts"
import { getWithKey, send } from "../support/Http.ts"
import { pgliteStorage, seedTenant, testServer } from "../support/TestServer.ts"

/** Key lookups the repository answered, by kind. */
const lookups = { company: 0, personal: 0 }

/**
 * Each lookup takes a moment of real time (20 ms), as a database round trip
 * does, so that a burst of requests overlaps one lookup.
 */
const roundTrip = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

const countingStorage = Layer.effect(
  KeysRepo,
  KeysRepo.use((repo) => Effect.succeed({
    ...repo,
    findCompanyKeyByHash: (hash: string) =>
      Effect.andThen(Effect.andThen(Effect.sync(() => lookups.company++), roundTrip), repo.findCompanyKeyByHash(hash)),
    findPersonalKeyByHash: (hash: string) =>
      Effect.andThen(Effect.andThen(Effect.sync(() => lookups.personal++), roundTrip), repo.findPersonalKeyByHash(hash))
  }))
).pipe(Layer.provideMerge(pgliteStorage))

const burst = 50

const sendBurst = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.forEach(Array.from({ length: burst }, () => request), send, { concurrency: "unbounded" })

describe("a burst of requests with a credential not cached yet", () => {
  it.layer(testServer(countingStorage))((it) => {
    it.effect("makes one key lookup for a company key, and every request is answered", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        lookups.company = 0
        const responses = yield* sendBurst(getWithKey("/api/v0/me", tenant.apiKey))
        expect(responses.map((response) => response.status)).toEqual(Array(burst).fill(200))
        expect(lookups.company).toBe(1)
      }))

    it.effect("makes one lookup per company for a personal access key", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        lookups.personal = 0
        const request = getWithKey("/api/v0/me", tenant.personalAccessKey).pipe(
          HttpClientRequest.setHeader("x-company-id", tenant.companyId)
        )
        const responses = yield* sendBurst(request)
        expect(responses.map((response) => response.status)).toEqual(Array(burst).fill(200))
        expect(lookups.personal).toBe(1)
      }))

    it.effect("makes one lookup for a made-up key, and every request answers 401", () =>
      Effect.gen(function*() {
        lookups.company = 0
        const responses = yield* sendBurst(getWithKey("/api/v0/me", generateKey("company").plaintext))
        expect(responses.map((response) => response.status)).toEqual(Array(burst).fill(401))
        expect(lookups.company).toBe(1)
      }))
  })
})
