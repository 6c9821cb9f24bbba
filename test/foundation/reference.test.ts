import { describe, expect, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { Api } from "../../src/app/Api.ts"

const spec = OpenApi.fromApi(Api)

/** A component schema's property, as the JSON Schema the document holds. */
const propertyOf = (schema: string, property: string) =>
  (spec.components.schemas[schema] as { readonly properties: Record<string, { readonly examples?: ReadonlyArray<unknown> }> }).properties[property]

describe("the OpenAPI document behind /docs", () => {
  it("opens with an introduction to authentication, errors, pagination, retries, rate limits and credits", () => {
    for (const heading of ["Authentication", "Errors", "Pagination", "Retries", "Rate limits", "Credits"]) {
      expect(spec.info.description).toContain(`## ${heading}\n`)
    }
  })

  it("declares the key header and a bearer scheme readers take for bearer, not HTTP Basic", () => {
    expect(spec.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    expect(spec.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", name: "X-API-Key", in: "header" })
  })

  it("lists the operator API last and shows no safe-integer bounds as if they were limits", () => {
    expect(spec.tags.at(-1)?.name).toBe("admin")
    expect(JSON.stringify(spec)).not.toContain(String(Number.MAX_SAFE_INTEGER))
  })

  it("gives shared fields realistic examples", () => {
    expect(propertyOf("Project", "id")?.examples).toEqual([expect.stringMatching(/^prj_/)])
    expect(propertyOf("Me", "companyId")?.examples).toEqual([expect.stringMatching(/^cmp_/)])
  })
})
