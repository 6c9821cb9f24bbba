import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import { maxJsonDepth } from "../../src/http/ErrorResponses.ts"
import { expectErrorResponse, getWithKey, postJson, requestWithKey, send } from "../support/Http.ts"
import { backends, seedTenant, testServer } from "../support/TestServer.ts"

/** `{"a":{"a":…{"a":1}…}}`, `depth` objects deep. */
const nested = (depth: number) => `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`

const postText = (path: string, text: string, apiKey: string) =>
  HttpClientRequest.post(path).pipe(
    HttpClientRequest.bodyText(text, "application/json"),
    HttpClientRequest.setHeader("x-api-key", apiKey)
  )

describe.each(backends)("strict input on $name", ({ storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("an unknown body field answers 400 naming it, at any depth", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        expectErrorResponse(
          yield* send(postJson("/api/v0/projects", { name: "Typo", nmae: "x" }, tenant.apiKey)),
          400,
          /^Unknown field "nmae"$/
        )
        expectErrorResponse(
          yield* send(postJson("/api/v0/employees", { name: "Ann", role: "Writer", extra: { deep: 1 } }, tenant.apiKey)),
          400,
          /^Unknown field "extra"$/
        )
        expectErrorResponse(
          yield* send(postJson("/api/v0/scheduled-tasks", {
            name: "Nightly",
            prompt: "Summarise",
            scheduleType: "recurring",
            employeeId: "emp_x",
            recurringConfig: { cron: "0 3 * * *", intervalMinuts: 5 }
          }, tenant.apiKey)),
          400,
          /^Unknown field "recurringConfig.intervalMinuts"$/
        )
        const free = yield* send(postJson("/api/v0/projects", { name: "Free-form", settings: { anything: { goes: 1 } } }, tenant.apiKey))
        expect(free.status).toBe(201)
      }))

    it.effect("an unknown query parameter answers 400 naming it; companyId is accepted everywhere", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        expectErrorResponse(yield* send(getWithKey("/api/v0/projects?pageSzie=5", tenant.apiKey)), 400, /^Unknown query parameter "pageSzie"$/)
        expectErrorResponse(yield* send(getWithKey("/api/v0/me?verbose=1", tenant.apiKey)), 400, /"verbose"/)
        expectErrorResponse(yield* send(HttpClientRequest.get("/health?x=1")), 400, /"x"/)
        expect((yield* send(getWithKey(`/api/v0/me?companyId=${tenant.companyId}`, tenant.apiKey))).status).toBe(200)
        expect((yield* send(getWithKey(`/api/v0/projects?page=1&companyId=${tenant.companyId}`, tenant.apiKey))).status).toBe(200)
      }))

    it.effect("the OpenAI- and Anthropic-compatible endpoints accept and ignore unknown fields", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const chat = yield* send(postJson("/api/v0/chat/completions", {
          model: "local-fastest",
          messages: [{ role: "user", content: "Hi", future_field: true }],
          some_new_option: { a: 1 }
        }, tenant.apiKey))
        expect(chat.status).toBe(200)
        const messages = yield* send(postJson("/api/v0/anthropic/v1/messages?beta=true", {
          model: "local-fastest",
          max_tokens: 16,
          messages: [{ role: "user", content: "Hi" }],
          context_management: { edits: [] }
        }, tenant.apiKey))
        expect(messages.status).toBe(200)
      }))

    it.effect("an invalid chat role or tool choice names every allowed value", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const response = yield* send(postJson("/api/v0/chat/completions", {
          model: "local-fastest",
          messages: [{ role: "wizard", content: "Hi" }]
        }, tenant.apiKey))
        expectErrorResponse(response, 400, /"messages\.0"/)
        for (const role of ["system", "developer", "user", "assistant", "tool"]) {
          expect((response.body as { error: string }).error).toContain(`"${role}"`)
        }
        const toolChoice = yield* send(postJson("/api/v0/anthropic/v1/messages", {
          model: "local-fastest",
          max_tokens: 16,
          messages: [{ role: "user", content: "Hi" }],
          tool_choice: { type: "sometimes" }
        }, tenant.apiKey))
        expectErrorResponse(toolChoice, 400, /"tool_choice"/)
        for (const type of ["auto", "any", "none", "tool"]) {
          expect((toolChoice.body as { error: string }).error).toContain(`"${type}"`)
        }
      }))

    it.effect(`JSON nested deeper than ${maxJsonDepth} levels answers 400, however deep`, () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        for (const depth of [maxJsonDepth + 1, 5_000, 100_000]) {
          const text = `{"name":"Deep","settings":${nested(depth - 1)}}`
          expectErrorResponse(yield* send(postText("/api/v0/projects", text, tenant.apiKey)), 400, /deeper than 64/)
        }
        const atLimit = `{"name":"Deep","settings":${nested(maxJsonDepth - 1)}}`
        expect((yield* send(postText("/api/v0/projects", atLimit, tenant.apiKey))).status).toBe(201)
        const bracketsInStrings = JSON.stringify({ name: "[[[[{{{{".repeat(50), description: "}}]]".repeat(100) })
        expect((yield* send(postText("/api/v0/projects", bracketsInStrings, tenant.apiKey))).status).toBe(201)
      }))

    it.effect("a lone UTF-16 surrogate anywhere in a JSON body answers 400, keys included", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const bodies = [
          `{"name":"Lone \\ud800 high"}`,
          `{"name":"x","description":"lone low \\uDC00"}`,
          `{"name":"x","settings":{"\\ud83d":1}}`,
          `{"name":"x","settings":{"list":["ok","\\udfff"]}}`
        ]
        for (const body of bodies) {
          expectErrorResponse(yield* send(postText("/api/v0/projects", body, tenant.apiKey)), 400, /surrogate/)
        }
        const paired = yield* send(postText("/api/v0/projects", `{"name":"Pair \\ud83d\\ude00"}`, tenant.apiKey))
        expect(paired.status).toBe(201)
        expect((paired.body as { name: string }).name).toBe("Pair 😀")
      }))

    it.effect("control characters in names and titles answer 400", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        for (const name of ["Line\nbreak", "Tab\tbed", "Bell\u0007", "Esc\u001b[31m", "Del\u007f"]) {
          expectErrorResponse(yield* send(postJson("/api/v0/projects", { name }, tenant.apiKey)), 400, /"name".*control characters/)
          expectErrorResponse(
            yield* send(requestWithKey("POST", "/api/v0/agents", tenant.apiKey, { name })),
            400,
            /control characters/
          )
        }
        const multiline = yield* send(postJson("/api/v0/projects", { name: "Fine", description: "Two\nlines" }, tenant.apiKey))
        expect(multiline.status).toBe(201)
      }))
  })
})
