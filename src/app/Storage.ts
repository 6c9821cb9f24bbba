import { AccessRevision } from "../auth/AccessRevision.ts"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { AgentsRepo } from "../agents/AgentsRepo.ts"
import { EmployeesRepo } from "../agents/EmployeesRepo.ts"
import { CampaignsRepo } from "../campaigns/CampaignsRepo.ts"
import { RecipientsRepo } from "../campaigns/RecipientsRepo.ts"
import { InstallationSecrets } from "../campaigns/TrackingSecret.ts"
import { CanvasesRepo } from "../canvases/CanvasesRepo.ts"
import { CompaniesRepo } from "../companies/CompaniesRepo.ts"
import { BlobsRepo } from "../files/Blob.ts"
import { FilesRepo } from "../files/FilesRepo.ts"
import { KeysRepo } from "../keys/KeysRepo.ts"
import { ListsRepo } from "../lists/ListsRepo.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import { MemoriesRepo } from "../memories/MemoriesRepo.ts"
import { OrganizationsRepo } from "../organizations/OrganizationsRepo.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { SequencesRepo } from "../sequences/SequencesRepo.ts"
import { TemplatesRepo } from "../templates/TemplatesRepo.ts"
import { type Backend, configuredDatabase, sqlStorageOf } from "../storage/Database.ts"
import * as Pglite from "../storage/PgliteClient.ts"
import { tasksRepoSql } from "../tasks/TasksRepoSql.ts"
import { CreditsRepo } from "../usage/CreditsRepo.ts"
import { UsageRepo } from "../usage/UsageRepo.ts"
import { UsersRepo } from "../users/UsersRepo.ts"

/** Every area's repositories, on each storage backend. A new area adds its repository here. */

const repositoriesSql = Layer.mergeAll(
  UsersRepo.layer,
  OrganizationsRepo.layer,
  CompaniesRepo.layer,
  KeysRepo.layer,
  UsageRepo.layer,
  ProjectsRepo.layer,
  MemoriesRepo.layer,
  AgentsRepo.layer,
  EmployeesRepo.layer,
  CampaignsRepo.layer,
  RecipientsRepo.layer,
  InstallationSecrets.layer,
  ListsRepo.layer,
  Suppressions.layer,
  BlobsRepo.layer,
  FilesRepo.layer,
  TemplatesRepo.layer,
  tasksRepoSql,
  CanvasesRepo.layer,
  SequencesRepo.layer,
  CreditsRepo.layer
)

/**
 * The repositories and `Storage` over a given `SqlClient` layer (PostgreSQL or
 * PGlite), with the access revision their writes bump (`AccessRevision.changing`).
 */
export const sqlStorage = <E>(client: Layer.Layer<SqlClient.SqlClient, E>, backend: Backend) =>
  AccessRevision.layer.pipe(Layer.provideMerge(sqlStorageOf(repositoriesSql)(client, backend)))

/** A throwaway PGlite in memory, migrated from empty: for benchmarks and tools that keep nothing. */
export const inMemoryStorage = sqlStorage(Pglite.layerFrom(Pglite.open(undefined)), "pglite")

/** PostgreSQL when `DATABASE_URL` is set, else PGlite persisted in `DATA_DIR`. */
export const configuredStorage = Layer.unwrap(
  Effect.map(configuredDatabase, ({ backend, client }) => sqlStorage(client, backend))
)
