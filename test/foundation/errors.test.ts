import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { failsWith } from "../support/Assertions.ts"
import { internalDetail, storageWithDefects } from "../support/Faults.ts"
import { expectErrorResponse, getWithKey, postJson, send } from "../support/Http.ts"
import { captureLogs } from "../support/Logs.ts"
import { adminKey, client, pgliteStorage, seedTenant, testServer } from "../support/TestServer.ts"

const logs = captureLogs()
const maxBodyBytes = 1024

const admin = (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.bearerToken(request, adminKey)

const json = (path: string, body: unknown) => admin(postJson(path, body))

it.layer(testServer(storageWithDefects, { maxBodyBytes }).pipe(Layer.provide(logs.layer)))("error contract", (it) => {
  it.effect("an unknown route answers 404 with exactly one field, error", () =>
    Effect.gen(function*() {
      for (const path of ["/nowhere", "/api/v0/nowhere", "/api/v0/me/extra"]) {
        expectErrorResponse(yield* send(HttpClientRequest.get(path)), 404, path)
      }
    }))

  it.effect("a wrong method on an existing path answers 404 {error} (there is no 405)", () =>
    Effect.gen(function*() {
      expectErrorResponse(yield* send(HttpClientRequest.put("/api/v0/me")), 404, "PUT /api/v0/me")
      expectErrorResponse(yield* send(HttpClientRequest.delete("/health")), 404, "DELETE /health")
      expectErrorResponse(yield* send(HttpClientRequest.get("/api/v0/admin/users")), 404)
    }))

  it.effect("malformed JSON answers 400", () =>
    Effect.gen(function*() {
      const request = admin(HttpClientRequest.post("/api/v0/admin/users")).pipe(
        HttpClientRequest.bodyText("{\"email\": ", "application/json")
      )
      expectErrorResponse(yield* send(request), 400, /JSON/)
    }))

  it.effect("a body that is not JSON (wrong content type) answers 400", () =>
    Effect.gen(function*() {
      const request = admin(HttpClientRequest.post("/api/v0/admin/users")).pipe(
        HttpClientRequest.bodyText("email=someone@example.com", "text/plain")
      )
      expectErrorResponse(yield* send(request), 400, /Content-Type/)
      const form = admin(HttpClientRequest.post("/api/v0/admin/users")).pipe(
        HttpClientRequest.bodyUrlParams({ email: "someone@example.com" })
      )
      expectErrorResponse(yield* send(form), 400)
    }))

  it.effect("an oversized body answers 400, and the server keeps serving", () =>
    Effect.gen(function*() {
      const response = yield* send(
        json("/api/v0/admin/users", { email: "big@example.com", displayName: "x".repeat(maxBodyBytes) })
      )
      expectErrorResponse(response, 400, /too large/)
      const health = yield* send(HttpClientRequest.get("/health"))
      expect(health.status).toBe(200)
    }))

  it.effect("a schema decode failure answers 400 naming the field", () =>
    Effect.gen(function*() {
      expectErrorResponse(yield* send(json("/api/v0/admin/users", { email: "not-an-email" })), 400, "\"email\"")
      expectErrorResponse(yield* send(json("/api/v0/admin/users", {})), 400, "\"email\"")
      expectErrorResponse(
        yield* send(json("/api/v0/admin/organizations", { name: "Acme", creditLimit: -5 })),
        400,
        "\"creditLimit\""
      )
      expectErrorResponse(
        yield* send(json("/api/v0/admin/companies/cmp_x/users", { userId: "usr_x", role: "emperor" })),
        400,
        "\"role\""
      )
      const tenant = yield* seedTenant()
      const query = yield* send(
        getWithKey(`/api/v0/company_users/${tenant.companyId}?pageSize=many`, tenant.apiKey)
      )
      expectErrorResponse(query, 400, "\"pageSize\"")
    }))

  it.effect("a defect answers 500 {\"error\":\"Internal server error\"}, leaks nothing and is logged with the request id", () =>
    Effect.gen(function*() {
      const response = yield* send(json("/api/v0/admin/users", { email: "defect@example.com" }))
      expectErrorResponse(response, 500)
      expect(response.body).toEqual({ error: "Internal server error" })
      expect(response.text).not.toContain("SELECT")
      const requestId = response.headers["x-request-id"]
      const logged = logs.lines.filter((line) => line.includes(internalDetail))
      expect(logged.length).toBe(1)
      expect(logged[0]).toContain(`requestId=${requestId}`)
    }))

  it.effect("a defect behind authentication answers 500 too", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      yield* failsWith(
        api.companyUsers.add({ params: { companyId: tenant.companyId }, payload: { email: "defect-2@example.com", role: "member" } }),
        "InternalError",
        /^Internal server error$/
      )
    }))

  it.effect("every response carries X-Request-Id; a sane incoming one is echoed", () =>
    Effect.gen(function*() {
      const responses = [
        yield* send(HttpClientRequest.get("/health")),
        yield* send(HttpClientRequest.get("/nowhere")),
        yield* send(HttpClientRequest.get("/api/v0/me")),
        yield* send(json("/api/v0/admin/users", { email: "nope" })),
        yield* send(json("/api/v0/admin/users", { email: "defect-3@example.com" })),
        yield* send(HttpClientRequest.get("/api/v0/openapi.json"))
      ]
      for (const response of responses) expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{12}_[0-9a-z]+$/)
      expect(new Set(responses.map((response) => response.headers["x-request-id"])).size).toBe(responses.length)
      const echoed = yield* send(HttpClientRequest.get("/api/v0/me").pipe(HttpClientRequest.setHeader("x-request-id", "trace-42.a:b")))
      expect(echoed.headers["x-request-id"]).toBe("trace-42.a:b")
      const insane = yield* send(
        HttpClientRequest.get("/health").pipe(HttpClientRequest.setHeader("x-request-id", "a b\"<script>"))
      )
      expect(insane.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{12}_[0-9a-z]+$/)
      const tooLong = yield* send(HttpClientRequest.get("/health").pipe(HttpClientRequest.setHeader("x-request-id", "a".repeat(129))))
      expect(tooLong.headers["x-request-id"]).toMatch(/^req_/)
    }))
})

it.layer(testServer(pgliteStorage))("published description", (it) => {
  it.effect("/api/v0/openapi.json has version 1.0.0 and unique <area>_<operation> operation ids", () =>
    Effect.gen(function*() {
      const response = yield* send(HttpClientRequest.get("/api/v0/openapi.json"))
      expect(response.status).toBe(200)
      const document = response.body as {
        readonly info: { readonly version: string }
        readonly paths: Record<string, Record<string, { readonly operationId?: string }>>
      }
      expect(document.info.version).toBe("1.0.0")
      const operationIds = Object.values(document.paths).flatMap((methods) =>
        Object.values(methods).map((operation) => operation.operationId)
      )
      expect(operationIds.length).toBeGreaterThan(20)
      for (const operationId of operationIds) expect(operationId).toMatch(/^[a-zA-Z]+_[a-zA-Z]+$/)
      expect(new Set(operationIds).size).toBe(operationIds.length)
      expect(operationIds).toContain("apiKeys_create")
    }))

  it.effect("the OpenAPI document describes only /api/v0/… paths; /health is served outside it", () =>
    Effect.gen(function*() {
      const document = (yield* send(HttpClientRequest.get("/api/v0/openapi.json"))).body as {
        readonly paths: Record<string, unknown>
      }
      const paths = Object.keys(document.paths)
      expect(paths.length).toBeGreaterThan(20)
      for (const path of paths) expect(path).toMatch(/^\/api\/v0\//)
      expect((yield* send(HttpClientRequest.get("/health"))).status).toBe(200)
    }))

  it.effect("/docs serves the reference page as HTML", () =>
    Effect.gen(function*() {
      const response = yield* send(HttpClientRequest.get("/docs"))
      expect(response.status).toBe(200)
      expect(response.headers["content-type"]).toMatch(/^text\/html/)
      expect(response.text).toMatch(/^<!doctype html>/i)
      expect(response.text).toContain("Platform API")
    }))
})
