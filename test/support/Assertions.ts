import { expect } from "@effect/vitest"
import { Effect } from "effect"

/**
 * Runs a typed-client call that must fail, and checks the error's tag (the
 * status it was decoded from) and, when given, its message.
 */
export const failsWith = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>,
  tag: "BadRequest" | "Unauthorized" | "Forbidden" | "NotFound" | "RateLimited" | "InternalError",
  message?: string | RegExp
) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error._tag).toBe(tag)
    if (message !== undefined) expect((error as { readonly error?: unknown }).error).toMatch(message)
    return error
  })

/** The masked form reads show for a key: its prefix and its last four characters, never the secret. */
export const masked = (key: string) => `${key.slice(0, 4)}…${key.slice(-4)}`
