import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { authorize, check } from "../../src/auth/Policy.ts"
import { CurrentPrincipal, type Principal } from "../../src/auth/Principal.ts"
import { failsWith } from "../support/Assertions.ts"

const principal = (overrides: Partial<Principal> = {}): Principal => ({
  keyKind: "personal",
  keyId: "pka_x",
  credentialHash: "hash",
  companyId: "cmp_x",
  companyName: "Company",
  organizationId: "org_x",
  plan: "pro",
  userId: "usr_x",
  role: "member",
  allowedFeatures: [],
  ...overrides
})

describe("the permission table", () => {
  it("a role outside the rule is refused with the roles that may", () => {
    expect(check(principal({ role: "viewer" }), "projects:write")).toBe(
      "Your role (viewer) cannot create and change projects; it needs one of: owner, admin, member"
    )
    expect(check(principal({ role: "member" }), "projects:write")).toBeUndefined()
  })

  it("allowed features narrow the plan: other features are refused naming the feature", () => {
    const narrowed = principal({ allowedFeatures: ["chat"] })
    expect(check(narrowed, "chat:use")).toBeUndefined()
    expect(check(narrowed, "projects:read")).toBe("Your access does not include the projects feature")
    // Permissions without a feature are governed by the role alone.
    expect(check(narrowed, "companyUsers:read")).toBeUndefined()
  })

  it.effect("authorize runs the operation only when the check passes, else 403 with the reason", () =>
    Effect.gen(function*() {
      const allowed = yield* authorize("companyUsers:manage")(Effect.succeed("done")).pipe(
        Effect.provideService(CurrentPrincipal, principal({ role: "admin" }))
      )
      expect(allowed).toBe("done")
      yield* failsWith(
        authorize("companyUsers:manage")(Effect.succeed("done")).pipe(
          Effect.provideService(CurrentPrincipal, principal({ role: "viewer" }))
        ),
        "Forbidden",
        "Your role (viewer) cannot add, change or remove company users; it needs one of: owner, admin"
      )
    }))
})
