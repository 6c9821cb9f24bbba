import { NodeHttpServer } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Admin from "../../src/admin/Admin.ts"
import { type ClientOptions, makeClient } from "../../src/client.ts"
import { makeServer } from "../../src/http/Server.ts"
import { AppConfig, type AppSettings } from "../../src/platform/AppConfig.ts"
import { memoryStorage, pgliteInMemoryStorage, sqlStorage } from "../../src/storage/Database.ts"

export const adminKey = "test-admin-key"

export const testSettings: Partial<AppSettings> = {
  adminApiKey: Option.some(Redacted.make(adminKey)),
  rateLimitPerMinute: 1_000_000,
  bootstrap: false,
  logLevel: "Error"
}

export const testConfig = (overrides: Partial<AppSettings> = {}) => AppConfig.layerWith({ ...testSettings, ...overrides })

/**
 * A throwaway database on the PostgreSQL server of `TEST_DATABASE_URL`, created
 * for one test file and dropped after it, so files never see each other's rows.
 */
export const postgresUrl = process.env.TEST_DATABASE_URL

export const postgresClient = Layer.unwrap(Effect.gen(function*() {
  const url = postgresUrl
  if (url === undefined) return yield* Effect.die(new Error("TEST_DATABASE_URL is not set"))
  const name = `test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = PgClient.layer({ url: Redacted.make(url) })
  yield* Effect.acquireRelease(
    Effect.scoped(Effect.provide(SqlClient.SqlClient.use((sql) => sql.unsafe(`CREATE DATABASE ${name}`)), admin)),
    () =>
      Effect.scoped(Effect.provide(
        SqlClient.SqlClient.use((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
        admin
      )).pipe(Effect.ignore)
  ).pipe(Effect.orDie)
  const target = new URL(url)
  target.pathname = `/${name}`
  return PgClient.layer({ url: Redacted.make(target.toString()) })
}))

export const postgresStorage = sqlStorage(postgresClient, "postgres", false)

/** The three storage backends every contract runs on; PostgreSQL only when `TEST_DATABASE_URL` is set. */
export const backends = [
  { name: "memory", storage: memoryStorage },
  { name: "pglite", storage: pgliteInMemoryStorage },
  ...(postgresUrl === undefined ? [] : [{ name: "postgres", storage: postgresStorage }])
] as const

if (postgresUrl === undefined) {
  process.stderr.write("notice: TEST_DATABASE_URL is unset: PostgreSQL runs of the suites are skipped\n")
}

/**
 * The whole service on a loopback port with the given storage, plus an
 * `HttpClient` aimed at it (what `client` uses).
 */
export const testServer = <A, E>(storage: Layer.Layer<A, E>, overrides: Partial<AppSettings> = {}) =>
  makeServer(NodeHttpServer.layerTest, storage, { logAddress: false }).pipe(
    Layer.provideMerge(testConfig(overrides))
  )

/** The exported typed client, against the test server, without retry delays. */
export const client = (options: Omit<ClientOptions, "baseUrl"> = {}) =>
  makeClient({ baseUrl: "", retries: 0, ...options })

let tenantCounter = 0

/** A fresh organization, company and owner with a company key and a personal access key. */
export const seedTenant = (name = "tenant") =>
  Admin.bootstrap({
    organization: `${name} organization`,
    company: `${name} company`,
    email: `${name}-${process.pid}-${Date.now()}-${tenantCounter++}@example.com`
  }).pipe(Effect.orDie)
