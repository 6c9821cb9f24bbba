import { Effect, Layer } from "effect"
import { UsersRepo } from "../../src/accounts/users/UsersRepo.ts"
import { pgliteStorage } from "./TestServer.ts"

/** What a provoked defect carries, which must never reach a client. */
export const internalDetail = "SELECT password_hash FROM users WHERE id = 42"

/**
 * Memory storage whose users repository dies when asked to create a user
 * whose email starts with "defect": a defect to provoke on purpose.
 */
export const storageWithDefects = Layer.effect(
  UsersRepo,
  UsersRepo.useSync((users) => ({
    ...users,
    create: (input) => input.email.startsWith("defect") ? Effect.die(new Error(internalDetail)) : users.create(input)
  }))
).pipe(Layer.provideMerge(pgliteStorage))
