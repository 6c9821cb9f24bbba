import { Context, Effect, Layer, Ref } from "effect"
import type { AgentRecord } from "../agents/AgentsRepo.ts"
import type { EmployeeRecord } from "../agents/EmployeesRepo.ts"
import type { CompanyApiKey, PersonalAccessKey } from "../keys/KeysRepo.ts"
import type { Company, CompanyUserRecord } from "../companies/CompaniesRepo.ts"
import type { MemoryRecord } from "../memories/MemoriesRepo.ts"
import type { OrganizationRecord, OrgRole } from "../organizations/OrganizationsRepo.ts"
import type { ProjectRecord } from "../projects/ProjectsRepo.ts"
import type { StoredDailyLog, StoredEvaluation, StoredExecution, StoredNote, StoredTask } from "../tasks/TasksRepo.ts"
import type { UsageEvent } from "../usage/UsageRepo.ts"
import type { User } from "../users/UsersRepo.ts"

/**
 * The memory backend's tables: plain maps behind one `Ref`, shared by every
 * memory repository so that queries across areas see one consistent state.
 */
export interface Tables {
  readonly users: Map<string, User>
  readonly organizations: Map<string, OrganizationRecord>
  readonly members: Map<string, { organizationId: string; userId: string; role: OrgRole; createdAt: Date }>
  readonly companies: Map<string, Company>
  readonly companyUsers: Map<string, CompanyUserRecord>
  readonly companyKeys: Map<string, CompanyApiKey>
  readonly personalKeys: Map<string, PersonalAccessKey>
  readonly usage: Array<UsageEvent>
  readonly projects: Map<string, ProjectRecord>
  readonly memories: Map<string, MemoryRecord>
  readonly agents: Map<string, AgentRecord>
  readonly employees: Map<string, EmployeeRecord>
  readonly scheduledTasks: Map<string, StoredTask>
  readonly taskExecutions: Map<string, StoredExecution>
  readonly taskEvaluations: Map<string, StoredEvaluation>
  readonly taskDailyLogs: Map<string, StoredDailyLog>
  readonly taskNotes: Map<string, StoredNote>
}

export const emptyTables = (): Tables => ({
  users: new Map(),
  organizations: new Map(),
  members: new Map(),
  companies: new Map(),
  companyUsers: new Map(),
  companyKeys: new Map(),
  personalKeys: new Map(),
  usage: [],
  projects: new Map(),
  memories: new Map(),
  agents: new Map(),
  employees: new Map(),
  scheduledTasks: new Map(),
  taskExecutions: new Map(),
  taskEvaluations: new Map(),
  taskDailyLogs: new Map(),
  taskNotes: new Map()
})

export interface Store {
  /** Reads the tables; the memory backend never fails. */
  readonly read: <A>(f: (tables: Tables) => A) => Effect.Effect<A>
  /** Changes the tables atomically: `f` may mutate them and answers the result. */
  readonly write: <A>(f: (tables: Tables) => A) => Effect.Effect<A>
}

export class MemoryStore extends Context.Service<MemoryStore, Store>()("storage/MemoryStore") {
  static readonly layer = Layer.effect(
    MemoryStore,
    // Fresh tables per build (not one set made when the module loads), so that every memory storage is its own.
    Effect.map(Effect.suspend(() => Ref.make(emptyTables())), (ref): Store => ({
      read: (f) => Effect.map(Ref.get(ref), f),
      write: (f) => Ref.modify(ref, (tables) => [f(tables), tables] as const)
    }))
  )
}
