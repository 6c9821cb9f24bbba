import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpClient } from "effect/http"
import { failsWith, masked } from "../support/Assertions.ts"
import { internalDetail, storageWithDefects } from "../support/Faults.ts"
import { captureLogs } from "../support/Logs.ts"
import { adminKey, client, testServer } from "../support/TestServer.ts"

/** Every response body the test's clients receive, in order. */
const bodies: Array<string> = []

const recordingClient = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (http) =>
    HttpClient.tap(http, (response) => Effect.map(Effect.orDie(response.text), (text) => void bodies.push(text))))
)

const logs = captureLogs()

const server = recordingClient.pipe(Layer.provideMerge(testServer(storageWithDefects).pipe(Layer.provide(logs.layer))))

/** The same key with its checksum broken. */
const tampered = (key: string) => key.slice(0, -1) + (key.endsWith("A") ? "B" : "A")

it.layer(server)("secrets never leak", (it) => {
  it.effect("a key's value appears in its creating response only: never in a later response, never in a log line", () =>
    Effect.gen(function*() {
      const admin = yield* client({ apiKey: adminKey, scheme: "bearer" })
      const created = yield* admin.admin.bootstrap({
        payload: { organization: "Secretive", company: "Secretive co", email: `secrets-${Date.now()}@example.com` }
      })
      const extra = yield* admin.admin.createPersonalAccessKey({ params: { userId: created.userId }, payload: { name: "extra" } })
      const companyKey = yield* client({ apiKey: created.apiKey })
      const owner = yield* client({ apiKey: created.personalAccessKey, companyId: created.companyId })
      const companyId = created.companyId
      const { apiKey: ci } = yield* companyKey.apiKeys.create({ payload: { companyId, name: "ci" } })
      const { apiKey: ensured } = yield* owner.apiKeys.ensure({ payload: { name: "ensured" } })
      const laptop = yield* owner.keys.create({ payload: { name: "laptop" } })
      const secrets = [created.apiKey, created.personalAccessKey, extra.key, ci, ensured, laptop.key]

      // Reads and re-reads of every kind show masked forms only.
      expect(yield* companyKey.apiKeys.get({ query: {} })).toEqual({ apiKey: masked(created.apiKey) })
      for (const name of ["default", "ci", "ensured"]) yield* owner.apiKeys.getByName({ params: { companyId, name } })
      for (const name of ["default", "ci", "ensured"]) {
        const again = yield* owner.apiKeys.ensure({ payload: { companyId, name } })
        expect(again.apiKey).toMatch(/^plk_…/)
      }
      yield* owner.keys.list()
      yield* companyKey.keys.list()
      yield* owner.me.get()
      yield* owner.companies.list({ query: {} })
      yield* owner.companyUsers.list({ params: { companyId }, query: {} })
      for (const key of [extra.key, laptop.key]) yield* Effect.flatMap(client({ apiKey: key, companyId }), (api) => api.me.get())
      yield* Effect.flatMap(client({ apiKey: ci }), (api) => api.me.get())

      // Failures of every kind, some carrying near-copies of the secrets.
      for (const secret of secrets) {
        yield* failsWith(Effect.flatMap(client({ apiKey: tampered(secret), companyId }), (api) => api.me.get()), "Unauthorized")
      }
      yield* failsWith(Effect.flatMap(client({ apiKey: created.personalAccessKey }), (api) => api.me.get()), "Unauthorized")
      yield* failsWith(owner.apiKeys.create({ payload: { companyId, name: "ci" } }), "BadRequest")
      yield* failsWith(Effect.flatMap(client({ apiKey: created.apiKey, scheme: "bearer" }), (api) => api.admin.createUser({ payload: { email: "x@example.com" } })), "Unauthorized")
      yield* failsWith(
        owner.companyUsers.add({ params: { companyId }, payload: { email: "defect@example.com", role: "member" } }),
        "InternalError"
      )

      // Revocations answer the masked form.
      expect(yield* companyKey.apiKeys.delete({ payload: { name: "ci" } })).toEqual({ apiKey: masked(ci) })
      expect((yield* owner.keys.revoke({ params: { keyId: laptop.id } })).maskedKey).toBe(masked(laptop.key))
      yield* failsWith(Effect.flatMap(client({ apiKey: ci }), (api) => api.me.get()), "Unauthorized")

      for (const secret of secrets) {
        expect(bodies.filter((body) => body.includes(secret))).toHaveLength(1)
        expect(bodies.some((body) => body.includes(masked(secret)))).toBe(true)
      }
      // The logger did capture this test's defect: the assertions below look at real output.
      expect(logs.lines.some((line) => line.includes(internalDetail))).toBe(true)
      for (const secret of secrets) {
        const randomPart = secret.slice(4, 40)
        expect(logs.lines.filter((line) => line.includes(randomPart))).toEqual([])
      }
      expect(logs.lines.filter((line) => line.includes(adminKey))).toEqual([])
    }))
})
