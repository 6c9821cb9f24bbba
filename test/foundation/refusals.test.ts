import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { answer } from "../../src/http/Refusals.ts"
import { BadRequest, Forbidden, InternalError, NotFound, RateLimited } from "../../src/platform/Errors.ts"
import { plainRefusal, refusal, type RefusalKind } from "../../src/platform/Refusal.ts"

class ThingNotFound extends refusal("NotFound", "ThingNotFound", ({ id }: { readonly id: string }) => `Thing ${id} not found`) {}

describe("domain refusals at the HTTP edge", () => {
  it.effect("a refusal keeps its tag and fields in the domain and derives its message", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.fail(new ThingNotFound({ id: "t1" })))
      expect(error._tag).toBe("ThingNotFound")
      expect(error.id).toBe("t1")
      expect(error.message).toBe("Thing t1 not found")
      const caught = yield* Effect.fail(new ThingNotFound({ id: "t2" })).pipe(
        Effect.catchTag("ThingNotFound", (found) => Effect.succeed(found.id))
      )
      expect(caught).toBe("t2")
    }))

  it.effect.each<[RefusalKind, number]>([["Invalid", 400], ["Denied", 403], ["NotFound", 404], ["Limited", 429], [
    "Failed",
    500
  ]])("a %s refusal answers %i with exactly {error: message}", ([kind, status]) =>
    Effect.gen(function*() {
      const Refused = plainRefusal(kind, "Refused")
      const answered = yield* Effect.flip(answer(Effect.fail(new Refused({ message: "no, because" }))))
      const api = [BadRequest, Forbidden, NotFound, RateLimited, InternalError].find((error) =>
        error.ast.annotations?.httpApiStatus === status
      )!
      expect(answered).toBeInstanceOf(api)
      expect(Schema.encodeUnknownSync(api)(answered)).toEqual({ error: "no, because" })
    }))

  it.effect("errors that are not refusals pass through unchanged", () =>
    Effect.gen(function*() {
      const original = new BadRequest({ error: "as it was" })
      expect(yield* Effect.flip(answer(Effect.fail(original)))).toBe(original)
    }))
})
