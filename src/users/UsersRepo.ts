import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../platform/Ids.ts"

export interface User {
  readonly id: string
  readonly email: string
  readonly displayName: string
  readonly photo: string
  readonly createdAt: Date
}

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

export class UsersRepo extends Context.Service<UsersRepo, UsersRepository>()("users/UsersRepo") {
  static readonly layer = Layer.effect(UsersRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fromRow = (row: UserRow): User => ({
      id: row.id,
      email: row.email,
      displayName: row.display_name,
      photo: row.photo,
      createdAt: new Date(row.created_at)
    })
    const one = (rows: ReadonlyArray<UserRow>) => Option.map(Option.fromNullishOr(rows[0]), fromRow)
    return {
      create: Effect.fn("UsersRepo.create")(function*(input) {
        const rows = yield* sql<UserRow>`
          INSERT INTO users (id, email, display_name) VALUES (${newId("usr")}, ${input.email}, ${input.displayName ?? ""})
          ON CONFLICT DO NOTHING RETURNING *`
        return one(rows)
      }, Effect.orDie),
      get: Effect.fn("UsersRepo.get")(function*(id) {
        return one(yield* sql<UserRow>`SELECT * FROM users WHERE id = ${id}`)
      }, Effect.orDie),
      findByEmail: Effect.fn("UsersRepo.findByEmail")(function*(email) {
        return one(yield* sql<UserRow>`SELECT * FROM users WHERE lower(email) = lower(${email})`)
      }, Effect.orDie)
    }
  }))
}

interface UserRow {
  readonly id: string
  readonly email: string
  readonly display_name: string
  readonly photo: string
  readonly created_at: Date | string
}
