import { expect } from "@effect/vitest"
import { Effect } from "effect"

/**
 * Runs a call that must fail, and checks the error's tag (for a typed-client
 * call, the status it was decoded from; for a service, its domain error) and,
 * when given, its message (`error` of an API error, `message` of a domain one).
 */
export const failsWith = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>,
  tag: E["_tag"],
  message?: string | RegExp
) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error._tag).toBe(tag)
    if (message !== undefined) {
      const { error: text = (error as { readonly message?: unknown }).message } = error as { readonly error?: unknown }
      expect(text).toMatch(message)
    }
    return error
  })

/** The masked form reads show for a key: its prefix and its last four characters, never the secret. */
export const masked = (key: string) => `${key.slice(0, 4)}…${key.slice(-4)}`
