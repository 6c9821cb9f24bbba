import { Effect } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { CampaignRecipient, RecipientMetrics, RecipientPage, RecipientsQuery } from "./Api.ts"
import { find } from "./Campaigns.ts"
import type { RecipientRecord } from "./RecipientRecord.ts"
import type { RecipientMetricCounts } from "./RecipientsRepo.ts"
import { RecipientsRepo } from "./RecipientsRepo.ts"

/** The spec's recipients page size default. */
export const defaultRecipientsPageSize = 25

/**
 * The most recipients the legacy unpaginated answer lists (the most recent
 * ones; `total` still counts every match): enough for any campaign that
 * client was written for, and a bound on one request's work.
 */
export const legacyRecipientsLimit = 10_000

const isoOrNull = (date: Date | null) => (date === null ? null : date.toISOString())

export const toRecipient = (record: RecipientRecord): typeof CampaignRecipient.Type => ({
  id: record.id,
  campaignId: record.campaignId,
  listRowId: record.listRowId,
  email: record.email,
  status: record.status,
  sentAt: isoOrNull(record.sentAt),
  errorMessage: record.errorMessage,
  opened: record.opened,
  clicked: record.clicked,
  firstOpenedDate: isoOrNull(record.firstOpenedAt),
  lastOpenedDate: isoOrNull(record.lastOpenedAt),
  firstClickedDate: isoOrNull(record.firstClickedAt),
  lastClickedDate: isoOrNull(record.lastClickedAt),
  openCount: record.openCount,
  clickCount: record.clickCount,
  repliedDate: isoOrNull(record.repliedAt),
  bouncedDate: isoOrNull(record.bouncedAt),
  created_date: record.createdAt.toISOString(),
  updated_date: record.updatedAt.toISOString()
})

/** Rates are fractions of the recipients sent (0 to 1), 0 while none was sent. */
export const toMetrics = (counts: RecipientMetricCounts): typeof RecipientMetrics.Type => ({
  ...counts,
  openRate: counts.sent === 0 ? 0 : counts.opened / counts.sent,
  clickRate: counts.sent === 0 ? 0 : counts.clicked / counts.sent,
  replyRate: counts.sent === 0 ? 0 : counts.replied / counts.sent
})

/**
 * `GET /marketing-campaigns/{campaignId}/recipients`: without `page` nor
 * `pageSize` the legacy unpaginated result (every match, up to
 * `legacyRecipientsLimit`); with either, one page (`page` default 1,
 * `pageSize` default 25).
 */
export const list = Effect.fn("Recipients.list")(function*(campaignId: string, query: typeof RecipientsQuery.Type) {
  yield* Authorized("campaigns:read")
  const principal = yield* requireCompany(query.companyId)
  yield* find(principal.companyId, campaignId)
  const paged = query.page !== undefined || query.pageSize !== undefined
  const window = paged
    ? windowOf({ page: query.page ?? 1, pageSize: query.pageSize ?? defaultRecipientsPageSize })
    : { offset: 0, limit: legacyRecipientsLimit }
  const page = yield* RecipientsRepo.use((repo) => repo.page(campaignId, query.search, window))
  return { items: page.rows.map(toRecipient), total: page.total, metrics: toMetrics(page.counts) } satisfies typeof RecipientPage.Type
})
