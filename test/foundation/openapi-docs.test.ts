import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import { send } from "../support/Http.ts"
import { pgliteStorage, testServer } from "../support/TestServer.ts"

interface Operation {
  readonly operationId: string
  readonly summary?: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
}

interface Document {
  readonly paths: Record<string, Record<string, Operation>>
  readonly tags: ReadonlyArray<{ readonly name: string; readonly description?: string; readonly "x-displayName"?: string }>
}

const filled = (text: string | undefined) => text !== undefined && text.trim().length > 0

it.layer(testServer(pgliteStorage))("the OpenAPI document a user reads", (it) => {
  it.effect("gives every operation a summary and a description, and every tag a title and a description", () =>
    Effect.gen(function*() {
      const document = (yield* send(HttpClientRequest.get("/api/v0/openapi.json"))).body as Document
      const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods))
      expect(operations.length).toBeGreaterThan(50)
      const undocumented = operations
        .filter((operation) => !filled(operation.summary) || !filled(operation.description))
        .map((operation) => operation.operationId)
      expect(undocumented).toEqual([])
      const used = new Set(operations.flatMap((operation) => operation.tags ?? []))
      const untitled = document.tags
        .filter((tag) => used.has(tag.name) && (!filled(tag.description) || !filled(tag["x-displayName"])))
        .map((tag) => tag.name)
      expect(untitled).toEqual([])
      expect([...used].filter((name) => !document.tags.some((tag) => tag.name === name))).toEqual([])
    }))

  it.effect("says that the operator routes answer 404 unless ADMIN_API_KEY is set", () =>
    Effect.gen(function*() {
      const document = (yield* send(HttpClientRequest.get("/api/v0/openapi.json"))).body as Document
      expect(document.tags.find((tag) => tag.name === "admin")?.description).toMatch(/404 unless `ADMIN_API_KEY` is set/)
    }))
})
