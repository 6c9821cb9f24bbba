import { Effect } from "effect"
import { CampaignNotFound, VersionNotFound } from "./Errors.ts"
import { RecipientListNotFound } from "../lists/Errors.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { checkSender } from "../domains/Senders.ts"
import { Authorized } from "../../auth/Policy.ts"
import { ListsRepo } from "../lists/ListsRepo.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import { answeredVersion, type BodyDocument, versionReads } from "../../http/BodyVersions.ts"
import type { VersionSource } from "../../storage/BodyVersions.ts"
import type { Campaign, CampaignPatch, CampaignVersion, NewCampaign } from "./Api.ts"
import { checkEditable, editable } from "./CampaignStates.ts"
import { type CampaignChange, type CampaignRecord, CampaignsRepo } from "./CampaignsRepo.ts"

/**
 * Marketing campaigns: drafts that are edited, scheduled or sent. Every save
 * of the body document is a numbered version. Decisions in docs/campaigns.md.
 */

export const toCampaign = (record: CampaignRecord): typeof Campaign.Type => ({
  id: record.id,
  companyId: record.companyId,
  userId: record.userId,
  name: record.name,
  subject: record.subject,
  fromName: record.fromName,
  fromEmail: record.fromEmail,
  replyTo: record.replyTo,
  listId: record.listId,
  smartListId: record.smartListId,
  status: record.status,
  bodyDocument: record.bodyDocument,
  bodyVersion: record.bodyVersion,
  scheduledAt: record.scheduledAt,
  startedAt: record.startedAt,
  completedAt: record.completedAt,
  errorMessage: record.errorMessage,
  created_date: record.createdAt,
  updated_date: record.updatedAt
})

const notFound = (id: string) => new CampaignNotFound({ id })

/** The company's campaign, or 404. */
export const find = (companyId: string, id: string) =>
  Effect.flatMap(CampaignsRepo.use((repo) => repo.get(companyId, id)), orRefuse(() => notFound(id)))

/**
 * Applies `change` to a campaign that is still editable; when it moved on
 * meanwhile (a concurrent send), the 400 names the status it is in now.
 */
const applyChange = (companyId: string, campaign: CampaignRecord, change: CampaignChange, action: string) =>
  Effect.gen(function*() {
    yield* checkEditable(campaign.status, action)
    const now = yield* currentDate
    const updated = yield* CampaignsRepo.use((repo) => repo.update(companyId, campaign.id, change, editable, now))
    if (updated._tag === "Some") return updated.value
    const current = yield* find(companyId, campaign.id)
    yield* checkEditable(current.status, action)
    return yield* Effect.fail(notFound(campaign.id))
  })

/**
 * Saves `document` as the next body version of a draft or scheduled campaign
 * (400 in another status, 404 when it is not the company's). The one way a
 * body changes: PATCH, restore and the design chat all come through here.
 */
export const saveBodyVersion = Effect.fn("Campaigns.saveBodyVersion")(function*(
  companyId: string,
  campaignId: string,
  document: BodyDocument,
  source: VersionSource
) {
  const campaign = yield* find(companyId, campaignId)
  return yield* applyChange(companyId, campaign, { body: { document, source } }, "change the body of")
})

/** 404 unless `listId` (when given) is a contact list of the company. */
const checkList = (companyId: string, listId: string | null | undefined) =>
  listId === undefined || listId === null
    ? Effect.void
    : Effect.flatMap(ListsRepo.use((repo) => repo.get(companyId, listId)), orRefuse(() => new RecipientListNotFound({ id: listId })))

/** A new draft campaign of `companyId`, made by `userId`: a body given is its version 1. */
export const newDraft = (
  companyId: string,
  userId: string | null,
  input: Omit<typeof NewCampaign.Type, "companyId">,
  now: Date
): CampaignRecord => ({
  id: newId("cpg"),
  companyId,
  userId,
  name: input.name,
  subject: input.subject,
  fromName: input.fromName ?? null,
  fromEmail: input.fromEmail ?? null,
  replyTo: input.replyTo ?? null,
  listId: input.listId ?? null,
  smartListId: null,
  status: "draft",
  bodyDocument: input.bodyDocument ?? { html: "" },
  bodyVersion: input.bodyDocument === undefined ? 0 : 1,
  scheduledAt: null,
  startedAt: null,
  completedAt: null,
  errorMessage: null,
  createdAt: now,
  updatedAt: now
})

export const create = Effect.fn("Campaigns.create")(function*(input: typeof NewCampaign.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(input.companyId)
  yield* checkList(principal.companyId, input.listId)
  yield* checkSender(principal.companyId, input.fromEmail)
  const now = yield* currentDate
  const created = yield* CampaignsRepo.use((repo) =>
    repo.create(newDraft(principal.companyId, principal.userId, input, now), "api")
  )
  return toCampaign(created)
})

export const list = Effect.fn("Campaigns.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  const { rows, total } = yield* CampaignsRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toCampaign), total, request)
})

export const get = Effect.fn("Campaigns.get")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:read")
  return toCampaign(yield* find(principal.companyId, id))
})

export const update = Effect.fn("Campaigns.update")(function*(id: string, patch: typeof CampaignPatch.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(patch.companyId)
  const campaign = yield* find(principal.companyId, id)
  yield* checkList(principal.companyId, patch.listId)
  yield* checkSender(principal.companyId, patch.fromEmail)
  const { companyId: _, bodyDocument, ...fields } = patch
  const change: CampaignChange = {
    ...fields,
    body: bodyDocument === undefined ? undefined : { document: bodyDocument, source: "api" }
  }
  if (Object.values(change).every((value) => value === undefined)) {
    yield* checkEditable(campaign.status, "change")
    return toCampaign(campaign)
  }
  return toCampaign(yield* applyChange(principal.companyId, campaign, change, "change"))
})

export const remove = Effect.fn("Campaigns.remove")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:write")
  const campaign = yield* find(principal.companyId, id)
  yield* checkEditable(campaign.status, "delete", ["draft"])
  const removed = yield* CampaignsRepo.use((repo) => repo.remove(principal.companyId, id, ["draft"]))
  if (!removed) {
    const current = yield* find(principal.companyId, id)
    return yield* checkEditable(current.status, "delete", ["draft"]).pipe(Effect.andThen(Effect.fail(notFound(id))))
  }
  return toCampaign(campaign)
})

const { page: versionPage, find: findVersion } = versionReads({
  find,
  versions: (_, id, window) => CampaignsRepo.use((repo) => repo.versions(id, window)),
  version: (_, id, version) => CampaignsRepo.use((repo) => repo.version(id, version)),
  versionNotFound: (id, version) => new VersionNotFound({ id, version })
})

export const listVersions = Effect.fn("Campaigns.listVersions")(function*(id: string, request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  return yield* versionPage(principal.companyId, id, request, answeredVersion)
})

export const getVersion = Effect.fn("Campaigns.getVersion")(function*(id: string, version: number) {
  const { principal } = yield* Authorized("campaigns:read")
  return answeredVersion(yield* findVersion(principal.companyId, id, version)) satisfies typeof CampaignVersion.Type
})

export const restoreVersion = Effect.fn("Campaigns.restoreVersion")(function*(
  id: string,
  version: number,
  body: { readonly companyId?: string | undefined } | null
) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(body?.companyId)
  const found = yield* findVersion(principal.companyId, id, version)
  return toCampaign(yield* saveBodyVersion(principal.companyId, id, found.bodyDocument, "restore"))
})
