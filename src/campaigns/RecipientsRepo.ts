import { Context, type Effect, Layer, type Option } from "effect"
import type { Window } from "../storage/Windows.ts"
import type { RecipientStatus } from "./Api.ts"
import type { CampaignRecord, MoveChange } from "./CampaignsRepo.ts"
import { makeMemoryRecipientsRepo } from "./RecipientsMemory.ts"
import { makeSqlRecipientsRepo } from "./RecipientsSql.ts"

export interface RecipientRecord {
  readonly id: string
  readonly campaignId: string
  readonly companyId: string
  readonly listRowId: string
  readonly email: string
  /** The row's merge fields when sending started (`email`, `firstName`, … and any further column). */
  readonly fields: Readonly<Record<string, string>>
  readonly status: RecipientStatus
  /** Deliveries that failed temporarily (SMTP 4xx, connection errors). */
  readonly attempts: number
  readonly nextAttemptAt: Date | null
  readonly messageId: string | null
  readonly sentAt: Date | null
  readonly errorMessage: string | null
  readonly opened: boolean
  readonly openCount: number
  readonly firstOpenedAt: Date | null
  readonly lastOpenedAt: Date | null
  readonly clicked: boolean
  readonly clickCount: number
  readonly firstClickedAt: Date | null
  readonly lastClickedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface RecipientMetricCounts {
  readonly total: number
  readonly sent: number
  readonly failed: number
  readonly skipped: number
  readonly opened: number
  readonly clicked: number
}

/** Recipients leased to one worker until `expiresAt`; only the `token` holder may record them. */
export interface RecipientClaim {
  readonly token: string
  readonly recipients: ReadonlyArray<RecipientRecord>
}

/** What a delivery attempt came to. */
export type DeliveryOutcome =
  | { readonly _tag: "Sent"; readonly messageId: string }
  | { readonly _tag: "Retry"; readonly at: Date; readonly error: string }
  | { readonly _tag: "Failed"; readonly error: string }

/**
 * Recipients of campaigns: made in bulk when sending starts, delivered by
 * the sending worker under leases, and updated by tracking.
 */
export interface RecipientsRepository {
  /**
   * Moves the campaign from `from` to `sending` with `change` and, in the same
   * transaction, makes one recipient per row of `listId`: `pending`, or
   * `skipped` when the address is on the company's suppression list or
   * repeats an earlier row. None when the campaign was no longer in `from`.
   */
  readonly startSending: (
    campaign: CampaignRecord,
    from: ReadonlyArray<CampaignRecord["status"]>,
    listId: string,
    change: MoveChange,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /**
   * A window of the campaign's recipients, most recent first, whose e-mail
   * contains `search` (any case), how many match,
   * and the counts over every recipient of the campaign (one pass for both).
   */
  readonly page: (
    campaignId: string,
    search: string | undefined,
    window: Window
  ) => Effect.Effect<{
    readonly rows: ReadonlyArray<RecipientRecord>
    readonly total: number
    readonly counts: RecipientMetricCounts
  }>
  /**
   * Moves the campaign from `from` to `cancelled` and, in the same
   * transaction, makes every recipient still pending `skipped`. None when the
   * campaign was no longer in `from`.
   */
  readonly cancel: (
    companyId: string,
    id: string,
    from: ReadonlyArray<CampaignRecord["status"]>,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /**
   * Leases up to `limit` pending recipients of `sending` campaigns that are due
   * (no retry wait left) and not under another unexpired lease.
   */
  readonly claim: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<RecipientClaim>
  /** Extends the lease of the claim's still-pending recipients whose campaign is still sending; false when none. */
  readonly renew: (token: string, expiresAt: Date) => Effect.Effect<boolean>
  /** Gives up the lease on the claim's recipients not recorded yet. */
  readonly release: (token: string) => Effect.Effect<void>
  /**
   * Records a delivery attempt, only while `token` still holds the
   * recipient's lease (checked in the same statement); false otherwise.
   * `Retry` past `maxAttempts` becomes `failed`.
   */
  readonly record: (
    id: string,
    token: string,
    outcome: DeliveryOutcome,
    maxAttempts: number,
    now: Date
  ) => Effect.Effect<boolean>
  /** `sending` campaigns with no pending recipient become `sent` with `completedAt`; answers their ids. */
  readonly completeFinished: (now: Date) => Effect.Effect<ReadonlyArray<string>>
  /** A recipient by id (for tracking links). */
  readonly get: (id: string) => Effect.Effect<Option.Option<RecipientRecord>>
  /** Counts an open (`open`) or a click (`click`, which also counts as an open). */
  readonly track: (id: string, event: "open" | "click", now: Date) => Effect.Effect<void>
}

export class RecipientsRepo extends Context.Service<RecipientsRepo, RecipientsRepository>()("campaigns/RecipientsRepo") {
  static readonly sql = Layer.effect(RecipientsRepo, makeSqlRecipientsRepo)
  static readonly memory = Layer.effect(RecipientsRepo, makeMemoryRecipientsRepo)
}
