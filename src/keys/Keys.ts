import { Effect, Option } from "effect"
import { BadRequest } from "../platform/Errors.ts"
import { generateKey } from "./KeyFormat.ts"
import { KeysRepo } from "./KeysRepo.ts"

/** Issuing keys: the plaintext leaves here once, in the creating call's answer, and is never stored. */

export const issueCompanyKey = Effect.fn("Keys.issueCompanyKey")(function*(companyId: string, name: string) {
  const repo = yield* KeysRepo
  const generated = generateKey("company")
  const created = yield* repo.createCompanyKey({ companyId, name, keyHash: generated.hash, masked: generated.masked })
  if (Option.isNone(created)) {
    return yield* new BadRequest({ error: `An API key named "${name}" already exists for this company` })
  }
  return { key: created.value, plaintext: generated.plaintext }
})

export const issuePersonalKey = Effect.fn("Keys.issuePersonalKey")(function*(
  userId: string,
  name: string,
  expiresAt: Date | null
) {
  if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
    return yield* new BadRequest({ error: "expiresAt must be in the future" })
  }
  const repo = yield* KeysRepo
  const generated = generateKey("personal")
  const key = yield* repo.createPersonalKey({
    userId,
    name,
    keyHash: generated.hash,
    masked: generated.masked,
    expiresAt
  })
  return { key, plaintext: generated.plaintext }
})
