import { Context, type Effect, type Option } from "effect"
import type { Window } from "../storage/Windows.ts"
import { sequencesMemory } from "./SequencesMemory.ts"
import { sequencesSql } from "./SequencesSql.ts"

export interface SequenceStep {
  readonly type: "email"
  /** Instructions for the model, or a template with merge fields. */
  readonly subject: string
  readonly body: string
  /** Days after the previous step was sent (for the first step: after enrolment). */
  readonly delayDays: number
}

export interface SequenceRecord {
  readonly id: string
  readonly companyId: string
  /** Who pays for drafting. */
  readonly organizationId: string
  readonly userId: string | null
  readonly name: string
  readonly steps: ReadonlyArray<SequenceStep>
  readonly listId: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface SequenceChange {
  readonly name?: string | undefined
  readonly steps?: ReadonlyArray<SequenceStep> | undefined
  readonly listId?: string | undefined
}

export type ExecutionStatus = "draft" | "approved" | "sent" | "failed" | "skipped"

export interface ExecutionRecord {
  readonly id: string
  readonly sequenceId: string
  readonly companyId: string
  readonly organizationId: string
  readonly listRowId: string
  readonly email: string
  /** The contact's merge fields, copied at enrolment. */
  readonly fields: Readonly<Record<string, string>>
  readonly stepIndex: number
  readonly status: ExecutionStatus
  readonly subject: string | null
  readonly body: string | null
  readonly errorMessage: string | null
  /** Not sent before this time. */
  readonly dueAt: Date
  /** Temporary SMTP failures so far. */
  readonly attempts: number
  /** When the model wrote the current draft; null while it has not. */
  readonly draftedAt: Date | null
  readonly approvedAt: Date | null
  readonly sendStartedAt: Date | null
  readonly sentAt: Date | null
  readonly messageId: string | null
  readonly openCount: number
  readonly clickCount: number
  readonly firstOpenedAt: Date | null
  readonly firstClickedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** Executions claimed by one worker poll under one lease token. */
export interface ExecutionClaim {
  readonly token: string
  readonly executions: ReadonlyArray<ExecutionRecord>
}

export type DraftOutcome =
  | { readonly _tag: "Drafted"; readonly subject: string; readonly body: string }
  | { readonly _tag: "Failed"; readonly error: string }

export type SendResult =
  | { readonly _tag: "Sent"; readonly messageId: string; readonly next: ExecutionRecord | undefined }
  | { readonly _tag: "Retry"; readonly at: Date; readonly error: string }
  | { readonly _tag: "Failed"; readonly error: string }

/**
 * Sequences and their executions. Every API read is scoped by company id;
 * the workers' claims span all companies. Each worker records a result only
 * while its lease is still its own, so an execution is drafted once and sent
 * at most once whatever the number of workers.
 */
export interface SequencesRepository {
  readonly create: (sequence: SequenceRecord) => Effect.Effect<SequenceRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<SequenceRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<SequenceRecord>; readonly total: number }>
  readonly update: (
    companyId: string,
    id: string,
    change: SequenceChange,
    now: Date
  ) => Effect.Effect<Option.Option<SequenceRecord>>
  /** Stores the executions whose (sequence, row, step) is new; answers how many. */
  readonly enroll: (executions: ReadonlyArray<ExecutionRecord>) => Effect.Effect<number>
  /** Newest first; `status` filters. */
  readonly executions: (
    sequenceId: string,
    status: ExecutionStatus | undefined,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<ExecutionRecord>; readonly total: number }>
  /** The executions of the sequence among `ids`. */
  readonly executionsByIds: (sequenceId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ExecutionRecord>>
  readonly execution: (id: string) => Effect.Effect<Option.Option<ExecutionRecord>>
  /** Written, unapproved drafts among `ids` become approved; answers their ids. */
  readonly approve: (sequenceId: string, ids: ReadonlyArray<string>, now: Date) => Effect.Effect<ReadonlyArray<string>>
  /** Failed executions among `ids` become fresh unwritten drafts; answers their ids. */
  readonly regenerate: (sequenceId: string, ids: ReadonlyArray<string>, now: Date) => Effect.Effect<ReadonlyArray<string>>
  /** Leases up to `limit` unwritten drafts. */
  readonly claimDrafts: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ExecutionClaim>
  /** Stores the model's draft (or its failure) if the lease is still `token`'s. */
  readonly recordDraft: (id: string, token: string, outcome: DraftOutcome, now: Date) => Effect.Effect<boolean>
  /**
   * Leases up to `limit` approved executions that are due. Sends abandoned by
   * a dead worker (started, lease expired) become `failed` first.
   */
  readonly claimSends: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ExecutionClaim>
  /** Marks the send as started if the lease is still `token`'s; false: do not send. */
  readonly beginSend: (id: string, token: string, now: Date) => Effect.Effect<boolean>
  /**
   * Records a send's outcome if the lease is still `token`'s; a `Sent` stores
   * the contact's next execution with it. A retry past `maxAttempts` is `failed`.
   */
  readonly recordSend: (id: string, token: string, result: SendResult, maxAttempts: number, now: Date) => Effect.Effect<boolean>
  /** Counts an open or a click of the execution's e-mail. */
  readonly track: (id: string, event: "open" | "click", now: Date) => Effect.Effect<void>
  /** Extends a claim's lease; false when no execution of it is still held. */
  readonly renew: (token: string, expiresAt: Date) => Effect.Effect<boolean>
  /** Frees what is left of a claim. */
  readonly release: (token: string) => Effect.Effect<void>
  /** The contact leaves every sequence of the company: its drafts and approved executions become `skipped`; answers how many. */
  readonly leave: (companyId: string, email: string, reason: string, now: Date) => Effect.Effect<number>
}

export class SequencesRepo extends Context.Service<SequencesRepo, SequencesRepository>()("sequences/SequencesRepo") {
  static readonly sql = sequencesSql(SequencesRepo)
  static readonly memory = sequencesMemory(SequencesRepo)
}
