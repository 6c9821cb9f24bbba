import { Context, Effect, Layer, Option } from "effect"
import { MemoryStore, memoryTable } from "../storage/MemoryStore.ts"
import { movedForward, newestFirstPage, type Window } from "../storage/Windows.ts"
import type { BodyDocument, CampaignStatus, VersionSource } from "./Api.ts"
import { makeSqlCampaignsRepo } from "./CampaignsSql.ts"

export interface CampaignRecord {
  readonly id: string
  readonly companyId: string
  readonly userId: string | null
  readonly name: string
  readonly subject: string
  readonly fromName: string | null
  readonly fromEmail: string | null
  readonly replyTo: string | null
  readonly listId: string | null
  readonly status: CampaignStatus
  readonly bodyDocument: BodyDocument
  readonly bodyVersion: number
  readonly scheduledAt: Date | null
  readonly startedAt: Date | null
  readonly completedAt: Date | null
  readonly errorMessage: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface VersionSummaryRecord {
  readonly campaignId: string
  readonly version: number
  readonly source: VersionSource
  readonly createdAt: Date
}

export interface VersionRecord extends VersionSummaryRecord {
  readonly bodyDocument: BodyDocument
}

/** Fields a PATCH (or a save of the body) changes; undefined leaves a field, null clears it. */
export interface CampaignChange {
  readonly name?: string | undefined
  readonly subject?: string | undefined
  readonly fromName?: string | null | undefined
  readonly fromEmail?: string | null | undefined
  readonly replyTo?: string | null | undefined
  readonly listId?: string | null | undefined
  /** A new body: saved as the next version, from `source`. */
  readonly body?: { readonly document: BodyDocument; readonly source: VersionSource } | undefined
}

/** What a status move sets besides the status; undefined leaves a field. */
export interface MoveChange {
  readonly listId?: string | undefined
  readonly scheduledAt?: Date | null | undefined
  readonly startedAt?: Date | undefined
  readonly completedAt?: Date | undefined
  readonly errorMessage?: string | undefined
}

/**
 * Campaigns of a company and their body versions. Every read is scoped by
 * company id; every change names the statuses it is allowed from and
 * answers none when the campaign is missing or no longer in one of them, so
 * that two concurrent moves can never both win.
 */
export interface CampaignsRepository {
  /** Stores a new campaign; with a body (version 1) also its first version. */
  readonly create: (campaign: CampaignRecord, source: VersionSource) => Effect.Effect<CampaignRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<CampaignRecord>>
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<CampaignRecord>; readonly total: number }>
  /** Applies `change` (a body becomes version `bodyVersion + 1`, atomically) if the status is in `from`. */
  readonly update: (
    companyId: string,
    id: string,
    change: CampaignChange,
    from: ReadonlyArray<CampaignStatus>,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /** Moves the status `from` → `to` with `change`; none when it was not in `from`. */
  readonly move: (
    companyId: string,
    id: string,
    from: ReadonlyArray<CampaignStatus>,
    to: CampaignStatus,
    change: MoveChange,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /**
   * Leases up to `limit` scheduled campaigns whose `scheduledAt` has come and
   * that no unexpired lease holds, until `expiresAt`. Concurrent callers never
   * get the same campaign.
   */
  readonly claimDue: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ReadonlyArray<CampaignRecord>>
  /** Deletes the campaign (with its versions) if its status is in `from`. */
  readonly remove: (companyId: string, id: string, from: ReadonlyArray<CampaignStatus>) => Effect.Effect<boolean>
  /** The campaign's versions without their bodies, newest first. */
  readonly versions: (
    campaignId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<VersionSummaryRecord>; readonly total: number }>
  readonly version: (campaignId: string, version: number) => Effect.Effect<Option.Option<VersionRecord>>
}

/** The memory backend's campaigns and versions (see `MemoryStore`). */
export const campaignsTable = memoryTable("campaigns", (): Map<string, CampaignRecord> => new Map())
/** When each claimed campaign's lease expires (epoch ms). */
export const campaignLeasesTable = memoryTable("campaignLeases", (): Map<string, number> => new Map())
export const campaignVersionsTable = memoryTable("campaignVersions", (): Map<string, Array<VersionRecord>> => new Map())

const inCompany = (campaign: CampaignRecord | undefined, companyId: string) =>
  campaign !== undefined && campaign.companyId === companyId ? campaign : undefined

const orKeep = <A>(value: A | undefined, kept: A): A => (value === undefined ? kept : value)

export class CampaignsRepo extends Context.Service<CampaignsRepo, CampaignsRepository>()("campaigns/CampaignsRepo") {
  static readonly sql = Layer.effect(CampaignsRepo, makeSqlCampaignsRepo)

  static readonly memory = Layer.effect(CampaignsRepo, MemoryStore.useSync((store): CampaignsRepository => ({
    create: (campaign, source) =>
      store.write((tables) => {
        tables(campaignsTable).set(campaign.id, campaign)
        tables(campaignVersionsTable).set(
          campaign.id,
          campaign.bodyVersion === 0
            ? []
            : [{ campaignId: campaign.id, version: 1, bodyDocument: campaign.bodyDocument, source, createdAt: campaign.createdAt }]
        )
        return campaign
      }),
    get: (companyId, id) => store.read((tables) => Option.fromNullishOr(inCompany(tables(campaignsTable).get(id), companyId))),
    list: (companyId, window) =>
      store.read((tables) =>
        newestFirstPage([...tables(campaignsTable).values()].filter((c) => c.companyId === companyId), window)
      ),
    update: (companyId, id, change, from, now) =>
      store.write((tables) => {
        const campaign = inCompany(tables(campaignsTable).get(id), companyId)
        if (campaign === undefined || !from.includes(campaign.status)) return Option.none()
        const bodyVersion = change.body === undefined ? campaign.bodyVersion : campaign.bodyVersion + 1
        const changed: CampaignRecord = {
          ...campaign,
          name: orKeep(change.name, campaign.name),
          subject: orKeep(change.subject, campaign.subject),
          fromName: orKeep(change.fromName, campaign.fromName),
          fromEmail: orKeep(change.fromEmail, campaign.fromEmail),
          replyTo: orKeep(change.replyTo, campaign.replyTo),
          listId: orKeep(change.listId, campaign.listId),
          bodyDocument: change.body?.document ?? campaign.bodyDocument,
          bodyVersion,
          updatedAt: movedForward(campaign.updatedAt, now)
        }
        tables(campaignsTable).set(id, changed)
        if (change.body !== undefined) {
          tables(campaignVersionsTable).get(id)?.push({
            campaignId: id,
            version: bodyVersion,
            bodyDocument: change.body.document,
            source: change.body.source,
            createdAt: now
          })
        }
        return Option.some(changed)
      }),
    move: (companyId, id, from, to, change, now) =>
      store.write((tables) => {
        const campaign = inCompany(tables(campaignsTable).get(id), companyId)
        if (campaign === undefined || !from.includes(campaign.status)) return Option.none()
        const moved: CampaignRecord = {
          ...campaign,
          status: to,
          listId: change.listId ?? campaign.listId,
          scheduledAt: orKeep(change.scheduledAt, campaign.scheduledAt),
          startedAt: change.startedAt ?? campaign.startedAt,
          completedAt: change.completedAt ?? campaign.completedAt,
          errorMessage: change.errorMessage ?? campaign.errorMessage,
          updatedAt: movedForward(campaign.updatedAt, now)
        }
        tables(campaignsTable).set(id, moved)
        return Option.some(moved)
      }),
    claimDue: (now, expiresAt, limit) =>
      store.write((tables) => {
        const leases = tables(campaignLeasesTable)
        const due = [...tables(campaignsTable).values()]
          .filter((c) =>
            c.status === "scheduled" && c.scheduledAt !== null && c.scheduledAt.getTime() <= now.getTime() &&
            (leases.get(c.id) ?? 0) <= now.getTime()
          )
          .toSorted((a, b) => (a.scheduledAt?.getTime() ?? 0) - (b.scheduledAt?.getTime() ?? 0))
          .slice(0, limit)
        for (const campaign of due) leases.set(campaign.id, expiresAt.getTime())
        return due
      }),
    remove: (companyId, id, from) =>
      store.write((tables) => {
        const campaign = inCompany(tables(campaignsTable).get(id), companyId)
        if (campaign === undefined || !from.includes(campaign.status)) return false
        tables(campaignVersionsTable).delete(id)
        return tables(campaignsTable).delete(id)
      }),
    versions: (campaignId, window) =>
      store.read((tables) => {
        const all = tables(campaignVersionsTable).get(campaignId) ?? []
        const rows = all.toReversed().slice(window.offset, window.offset + window.limit)
        return { rows: rows.map(({ bodyDocument: _, ...summary }) => summary), total: all.length }
      }),
    version: (campaignId, version) =>
      store.read((tables) =>
        Option.fromNullishOr((tables(campaignVersionsTable).get(campaignId) ?? []).find((v) => v.version === version))
      )
  })))
}
