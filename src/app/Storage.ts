import { AccessRevision } from "../auth/AccessRevision.ts"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { type Backend, configuredDatabase, sqlStorageOf } from "../storage/Database.ts"
import * as Pglite from "../storage/PgliteClient.ts"
import { areaLayers } from "./Areas.ts"

/**
 * The repositories and `Storage` over a given `SqlClient` layer (PostgreSQL or
 * PGlite), with the access revision their writes bump (`AccessRevision.changing`).
 */
export const sqlStorage = <E>(client: Layer.Layer<SqlClient.SqlClient, E>, backend: Backend) =>
  AccessRevision.layer.pipe(Layer.provideMerge(sqlStorageOf(areaLayers("repositories"))(client, backend)))

/** A throwaway PGlite in memory, migrated from empty: for benchmarks and tools that keep nothing. */
export const inMemoryStorage = sqlStorage(Pglite.layerFrom(Pglite.open(undefined)), "pglite")

/** PostgreSQL when `DATABASE_URL` is set, else PGlite persisted in `DATA_DIR`. */
export const configuredStorage = Layer.unwrap(
  Effect.map(configuredDatabase, ({ backend, client }) => sqlStorage(client, backend))
)
