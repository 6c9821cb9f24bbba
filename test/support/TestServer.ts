import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted, Scope } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { inject } from "vitest"
import * as Admin from "../../src/accounts/admin/Admin.ts"
import * as Keys from "../../src/accounts/keys/Keys.ts"
import { type ClientOptions, makeClient } from "../../src/client.ts"
import type { CompanyRole, OrgRole } from "../../src/auth/Roles.ts"
import { makeServer } from "../../src/app/Server.ts"
import { type AppSettings, defaults } from "../../src/platform/AppConfig.ts"
import { type SettingOverrides, settingsWith } from "../../src/app/Settings.ts"
import { nodeServer } from "../../src/http/NodeServer.ts"
import { sqlStorage } from "../../src/app/Storage.ts"
import { type Backend, postgresClient } from "../../src/storage/Database.ts"
import * as Pglite from "../../src/storage/PgliteClient.ts"

export const adminKey = "test-admin-key"

export const testSettings: Partial<AppSettings> = {
  adminApiKey: Option.some(Redacted.make(adminKey)),
  rateLimitPerMinute: 1_000_000,
  bootstrap: false,
  logLevel: "Error"
}

export const testConfig = (overrides: SettingOverrides = {}) => settingsWith({ ...testSettings, ...overrides })

/** The PostgreSQL server the suites also run on, when set (`scripts/with-postgres.sh` sets it). */
export const postgresUrl = process.env.TEST_DATABASE_URL

/**
 * A throwaway database on the PostgreSQL server of `TEST_DATABASE_URL`, created
 * for the scope (one test file) and dropped after it, so files never see each
 * other's rows. Answers its URL.
 */
export const createPostgresDatabase = Effect.gen(function*() {
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
  return target.toString()
})

/** Storage over an existing PostgreSQL database: several of these model several server processes. */
export const postgresStorageAt = (url: string) =>
  sqlStorage(postgresClient(Redacted.make(url)), "postgres")

export const postgresStorage = Layer.unwrap(Effect.map(createPostgresDatabase, postgresStorageAt))

/** The in-memory PGlite of this vitest worker, and the tables it empties for each file. */
interface WorkerDatabase {
  readonly context: Context.Context<Pglite.Pglite | SqlClient.SqlClient>
  readonly empty: Effect.Effect<void>
}

/**
 * Opens the worker's PGlite from the migrated data folder the global setup
 * saved (test/support/pgliteTemplate.ts), for the worker's lifetime. Emptying
 * truncates the tables the migrations left empty (their seeded rows stay).
 */
const openWorkerDatabase = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const context = yield* Layer.buildWithScope(Pglite.layerFrom(Pglite.openDump(inject("pgliteTemplate"))), scope)
  const sql = Context.get(context, SqlClient.SqlClient)
  const tables = yield* sql<{ readonly name: string }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`
  const seeded = yield* Effect.filter(tables, ({ name }) =>
    Effect.map(sql`SELECT 1 FROM ${sql(name)} LIMIT 1`, (rows) => rows.length > 0))
  const emptied = tables.filter((table) => !seeded.includes(table)).map(({ name }) => name)
  const empty = sql.unsafe(`TRUNCATE ${emptied.map((name) => `"${name}"`).join(", ")} RESTART IDENTITY CASCADE`)
  return { context, empty: Effect.orDie(Effect.asVoid(empty)) } satisfies WorkerDatabase
}).pipe(Effect.orDie)

let workerDatabase: Promise<WorkerDatabase> | undefined
let workerDatabaseUsers = 0

/**
 * PGlite in memory, one per vitest worker, shared by the files it runs
 * (`isolate: false` keeps this module between them): starting a PGlite costs
 * seconds of CPU, emptying one milliseconds. A build that finds nobody else
 * using it empties it first, so each file (each `it.layer`) starts on an
 * empty database as it did on a PGlite of its own; builds that overlap share
 * it, their tenants kept apart by ids.
 */
const workerPglite = Layer.effectContext(Effect.acquireRelease(
  Effect.gen(function*() {
    const database = yield* Effect.promise(() => workerDatabase ??= Effect.runPromise(openWorkerDatabase))
    if (workerDatabaseUsers++ === 0) yield* database.empty
    return database.context
  }),
  () => Effect.sync(() => void workerDatabaseUsers--)
))

export const pgliteStorage = sqlStorage(workerPglite, "pglite")

/** What every storage backend provides: the repositories and `Storage`. */
export type StorageServices = Layer.Success<typeof pgliteStorage>

export interface TestBackend {
  readonly name: Backend
  readonly storage: Layer.Layer<StorageServices, unknown>
}

/** The storage backends every contract runs on; PostgreSQL only when `TEST_DATABASE_URL` is set. */
export const backends: ReadonlyArray<TestBackend> = [
  { name: "pglite", storage: pgliteStorage },
  ...(postgresUrl === undefined ? [] : [{ name: "postgres" as const, storage: postgresStorage }])
]

if (postgresUrl === undefined) {
  process.stderr.write("notice: TEST_DATABASE_URL is unset: PostgreSQL runs of the suites are skipped\n")
}

/**
 * The whole service on a loopback port with the given storage, plus an
 * `HttpClient` aimed at it (what `client` uses).
 */
export const testServer = <A, E>(storage: Layer.Layer<A, E>, overrides: SettingOverrides = {}) =>
  makeServer(testHttpServer({ ...defaults, ...testSettings, ...overrides }), storage, { logAddress: false }).pipe(
    Layer.provideMerge(testConfig(overrides))
  )

/** `NodeHttpServer.layerTest` over the service's own hardened Node server, on any free port. */
const testHttpServer = (settings: AppSettings) =>
  HttpServer.layerTestClient.pipe(
    Layer.provide(Layer.fresh(FetchHttpClient.layer).pipe(
      Layer.provide(Layer.succeed(FetchHttpClient.RequestInit)({ keepalive: false }))
    )),
    Layer.provideMerge(nodeServer(settings, { port: 0 }))
  )

export interface TestClientOptions extends Omit<ClientOptions, "baseUrl"> {
  /** How the key travels: `X-API-Key` (what the exported client sends) or `Authorization: Bearer`. */
  readonly scheme?: "x-api-key" | "bearer"
  /** Sent as the `companyId` query parameter on every request. */
  readonly companyIdQuery?: string
}

/**
 * The exported typed client, against the test server, without retry delays.
 * `scheme` and `companyIdQuery` send the credential the other ways the API
 * accepts, on the client's own requests.
 */
export const client = (options: TestClientOptions = {}) => {
  const { scheme = "x-api-key", companyIdQuery, ...clientOptions } = options
  const bearer = scheme === "bearer" ? options.apiKey : undefined
  return Effect.flatMap(HttpClient.HttpClient, (http) =>
    makeClient({ baseUrl: "", retries: 0, ...clientOptions, apiKey: bearer === undefined ? options.apiKey : undefined }).pipe(
      Effect.provideService(
        HttpClient.HttpClient,
        HttpClient.mapRequest(http, (request) => {
          const authorized = bearer === undefined ? request : HttpClientRequest.bearerToken(request, bearer)
          return companyIdQuery === undefined
            ? authorized
            : HttpClientRequest.appendUrlParam(authorized, "companyId", companyIdQuery)
        })
      )
    ))
}

let tenantCounter = 0

/** A fresh organization, company and owner with a company key and a personal access key. */
export const seedTenant = (name = "tenant") =>
  Admin.bootstrap({
    organization: `${name} organization`,
    company: `${name} company`,
    email: `${name}-${process.pid}-${Date.now()}-${tenantCounter++}@example.com`
  }).pipe(Effect.orDie)

/** What an organization created with a name only starts with. */
export const organizationDefaults = {
  subscriptionType: "free",
  status: "active",
  creditLimit: 0,
  creditUsage: 0,
  dataCreditLimit: 0,
  dataCreditUsage: 0,
  seats: 1,
  companyLimit: 1
} as const

export type Tenant = Effect.Success<ReturnType<typeof seedTenant>>

/**
 * Another person for a tenant, with a personal access key: a company user of
 * its company when `companyRole` is given, an organization member when
 * `organizationRole` is.
 */
export const addPerson = (
  tenant: Tenant,
  options: {
    readonly companyRole?: CompanyRole
    readonly organizationRole?: OrgRole
    readonly displayName?: string
    /** Narrows the company user's features (empty: every feature of the plan). */
    readonly allowedFeatures?: ReadonlyArray<string>
  } = {}
) =>
  Effect.gen(function*() {
    const user = yield* Admin.createUser({
      email: `person-${process.pid}-${Date.now()}-${tenantCounter++}@example.com`,
      displayName: options.displayName
    })
    if (options.companyRole !== undefined) {
      yield* Admin.addCompanyUser(tenant.companyId, {
        userId: user.id,
        role: options.companyRole,
        allowedFeatures: options.allowedFeatures
      })
    }
    if (options.organizationRole !== undefined) {
      yield* Admin.addMember(tenant.organizationId, user.id, options.organizationRole)
    }
    const key = yield* Admin.createPersonalKey(user.id, { name: "test" })
    return { userId: user.id, email: user.email, personalAccessKey: key.key }
  }).pipe(Effect.orDie)

/** A company API key of the tenant's company created by `userId`: it acts as that user (plaintext). */
export const companyKeyBy = (tenant: Tenant, userId: string) =>
  Keys.issueCompanyKey(tenant.companyId, `key-${tenantCounter++}`, userId).pipe(
    Effect.map(({ plaintext }) => plaintext),
    Effect.orDie
  )

/**
 * Two complete servers over one PostgreSQL database, as two processes of a
 * scaled-out deployment would be: answers each one's services (its typed
 * client's HttpClient, its repositories) for `Effect.provideContext`.
 */
export const serversSharingPostgres = (overrides: SettingOverrides = {}) =>
  Effect.gen(function*() {
    const url = yield* createPostgresDatabase
    const first = yield* Layer.build(testServer(postgresStorageAt(url), overrides))
    const second = yield* Layer.build(testServer(postgresStorageAt(url), overrides))
    return [first, second] as const
  })
