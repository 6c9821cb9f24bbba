import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApiEndpoint, OpenApi } from "effect/http-api"
import { described, whoMay } from "../../src/http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../src/platform/Errors.ts"

const descriptionOf = (endpoint: { readonly annotations: Context.Context<never> }) =>
  Context.getOption(endpoint.annotations, OpenApi.Description)

describe("derived endpoint documentation", () => {
  it("words who may call from the permission table", () => {
    expect(whoMay("projects:read")).toBe(
      "Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role, in a plan with the `projects` feature."
    )
    expect(whoMay("apiKeys:manage")).toContain("whose company role is owner or admin.")
    expect(whoMay("usage:read")).toBe(
      "Who: an organization owner or admin (a personal access key, or a company key whose creator is one)."
    )
    expect(whoMay({ owner: "projects:write" })).toBe(
      "Who: its owner, or a company owner or admin, in a plan with the `projects` feature."
    )
  })

  it("lists the declared errors and what authentication adds, in status order, with notes over defaults", () => {
    const endpoint = HttpApiEndpoint.get("get", "/things/:id", { error: [NotFound, BadRequest, Forbidden] }).pipe(described({
      summary: "Get a thing",
      does: "One thing.",
      who: "projects:read",
      errors: { 404: "for an unknown thing" }
    }))
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Summary))).toBe("Get a thing")
    const description = descriptionOf(endpoint)
    expect(description._tag).toBe("Some")
    const text = description._tag === "Some" ? description.value : ""
    expect(text.startsWith("One thing. Who: ")).toBe(true)
    expect(text.endsWith(
      "Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403 naming the missing role or feature; 404 for an unknown thing; 429 over the rate limit."
    )).toBe(true)
  })

  it("a public operation lists only its declared errors", () => {
    const endpoint = HttpApiEndpoint.get("open", "/t/:token", { error: [NotFound] }).pipe(described({
      summary: "Open",
      does: "Opens.",
      who: "public"
    }))
    const description = descriptionOf(endpoint)
    expect(description._tag === "Some" ? description.value : "").toBe(
      "Opens. Who: anyone, without a key. Errors: 404 when nothing matches the path."
    )
  })
})
