import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { newId } from "../../platform/Ids.ts"
import { fromColumns, Timestamp } from "../../storage/Columns.ts"

export const User = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  displayName: Schema.String,
  photo: Schema.String,
  createdAt: Timestamp
})
export type User = typeof User.Type

export interface NewUser {
  readonly email: string
  readonly displayName?: string | undefined
}

/** People who hold keys and belong to organizations and companies. Emails are unique, case-insensitively. */
export interface UsersRepository {
  /** None when the email is taken. */
  readonly create: (input: NewUser) => Effect.Effect<Option.Option<User>>
  readonly get: (id: string) => Effect.Effect<Option.Option<User>>
  readonly findByEmail: (email: string) => Effect.Effect<Option.Option<User>>
}

const UserRow = fromColumns(User)

export class UsersRepo extends Context.Service<UsersRepo, UsersRepository>()("users/UsersRepo") {
  static readonly layer = Layer.effect(UsersRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({ email: Schema.String, displayName: Schema.String }),
      Result: UserRow,
      execute: ({ email, displayName }) =>
        sql`INSERT INTO users (id, email, display_name) VALUES (${newId("usr")}, ${email}, ${displayName})
          ON CONFLICT DO NOTHING RETURNING *`
    })
    const byId = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: UserRow,
      execute: (id) => sql`SELECT * FROM users WHERE id = ${id}`
    })
    const byEmail = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: UserRow,
      execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
    })
    return {
      create: Effect.fn("UsersRepo.create")(
        (input: NewUser) => insert({ email: input.email, displayName: input.displayName ?? "" }),
        Effect.orDie
      ),
      get: Effect.fn("UsersRepo.get")((id: string) => byId(id), Effect.orDie),
      findByEmail: Effect.fn("UsersRepo.findByEmail")((email: string) => byEmail(email), Effect.orDie)
    }
  }))
}
