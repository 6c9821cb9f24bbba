import { Option } from "effect"
import { emailKey } from "../lists/Contacts.ts"
import { contactRowsTable } from "../lists/ListsRepoMemory.ts"
import { suppressionsTable } from "../lists/Suppressions.ts"
import { newId } from "../platform/Ids.ts"
import { MemoryStore, memoryTable, type Tables } from "../storage/MemoryStore.ts"
import { movedForward } from "../storage/Windows.ts"
import { type CampaignRecord, campaignsTable } from "./CampaignsRepo.ts"
import { cancelledReason } from "./CampaignStates.ts"
import type { RecipientRecord, RecipientsRepository } from "./RecipientsRepo.ts"

interface StoredRecipient extends RecipientRecord {
  readonly leaseToken: string | null
  readonly leaseExpiresAt: Date | null
}

/** The memory backend's recipients, by campaign id then recipient id (ascending). */
export const campaignRecipientsTable = memoryTable(
  "campaignRecipients",
  (): Map<string, Map<string, StoredRecipient>> => new Map()
)

const recipientsOf = (tables: Tables, campaignId: string): Map<string, StoredRecipient> => {
  const all = tables(campaignRecipientsTable)
  let found = all.get(campaignId)
  if (found === undefined) {
    found = new Map()
    all.set(campaignId, found)
  }
  return found
}

const withoutLease = ({ leaseToken: _, leaseExpiresAt: __, ...recipient }: StoredRecipient): RecipientRecord => recipient

const leaseFree = (recipient: StoredRecipient, now: Date) =>
  recipient.leaseExpiresAt === null || recipient.leaseExpiresAt.getTime() <= now.getTime()

const sendingCampaigns = (tables: Tables) =>
  [...tables(campaignsTable).values()].filter((campaign) => campaign.status === "sending")

const stringFields = (fields: Readonly<Record<string, string | null>>): Record<string, string> =>
  Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== null))

/** The memory backend of `RecipientsRepo`: the same rules as the SQL one, over `MemoryStore`. */
export const makeMemoryRecipientsRepo = MemoryStore.useSync((store): RecipientsRepository => {
  const everyRecipient = (tables: Tables) =>
    [...tables(campaignRecipientsTable).values()].flatMap((recipients) => [...recipients.values()])
  const update = (tables: Tables, recipient: StoredRecipient, change: Partial<StoredRecipient>) =>
    recipientsOf(tables, recipient.campaignId).set(recipient.id, { ...recipient, ...change })
  return {
    startSending: (campaign, from, listId, change, now) =>
      store.write((tables) => {
        const current = tables(campaignsTable).get(campaign.id)
        if (current === undefined || current.companyId !== campaign.companyId || !from.includes(current.status)) {
          return Option.none()
        }
        const moved: CampaignRecord = {
          ...current,
          status: "sending",
          listId,
          scheduledAt: change.scheduledAt ?? current.scheduledAt,
          startedAt: now,
          updatedAt: movedForward(current.updatedAt, now)
        }
        tables(campaignsTable).set(campaign.id, moved)
        const suppressed = tables(suppressionsTable).get(campaign.companyId) ?? new Map()
        const seen = new Set<string>()
        const recipients = recipientsOf(tables, campaign.id)
        const prefix = newId("rcp")
        let position = 0
        const rows = [...(tables(contactRowsTable).get(listId)?.values() ?? [])].toSorted((a, b) => a.id.localeCompare(b.id))
        for (const row of rows) {
          position += 1
          const key = emailKey(row.email)
          const suppression = suppressed.get(key)
          const duplicate = seen.has(key)
          seen.add(key)
          const id = `${prefix}${position.toString(16).padStart(8, "0")}`
          recipients.set(id, {
            id,
            campaignId: campaign.id,
            companyId: campaign.companyId,
            listRowId: row.id,
            email: row.email,
            fields: stringFields({
              ...row.fields,
              email: row.email,
              firstName: row.firstName,
              lastName: row.lastName,
              company: row.company
            }),
            status: suppression !== undefined || duplicate ? "skipped" : "pending",
            attempts: 0,
            nextAttemptAt: null,
            messageId: null,
            sentAt: null,
            errorMessage: suppression !== undefined
              ? `Suppressed (${suppression.reason})`
              : duplicate
              ? "Duplicate address"
              : null,
            opened: false,
            openCount: 0,
            firstOpenedAt: null,
            lastOpenedAt: null,
            clicked: false,
            clickCount: 0,
            firstClickedAt: null,
            lastClickedAt: null,
            createdAt: now,
            updatedAt: now,
            leaseToken: null,
            leaseExpiresAt: null
          })
        }
        return Option.some(moved)
      }),
    page: (campaignId, search, window) =>
      store.read((tables) => {
        const all = [...recipientsOf(tables, campaignId).values()]
        const needle = search?.toLowerCase() ?? ""
        const matching = all.filter((recipient) => recipient.email.toLowerCase().includes(needle)).toReversed()
        const rows = matching.slice(window.offset, window.offset + window.limit)
        const count = (keep: (recipient: StoredRecipient) => boolean) => all.filter(keep).length
        return {
          rows: rows.map(withoutLease),
          total: matching.length,
          counts: {
            total: all.length,
            sent: count((r) => r.status === "sent"),
            failed: count((r) => r.status === "failed"),
            skipped: count((r) => r.status === "skipped"),
            opened: count((r) => r.opened),
            clicked: count((r) => r.clicked)
          }
        }
      }),
    cancel: (companyId, id, from, now) =>
      store.write((tables) => {
        const campaign = tables(campaignsTable).get(id)
        if (campaign === undefined || campaign.companyId !== companyId || !from.includes(campaign.status)) {
          return Option.none()
        }
        const cancelled: CampaignRecord = { ...campaign, status: "cancelled", updatedAt: movedForward(campaign.updatedAt, now) }
        tables(campaignsTable).set(id, cancelled)
        for (const recipient of recipientsOf(tables, id).values()) {
          if (recipient.status === "pending") {
            update(tables, recipient, { status: "skipped", errorMessage: cancelledReason, updatedAt: now })
          }
        }
        return Option.some(cancelled)
      }),
    claim: (now, expiresAt, limit) =>
      store.write((tables) => {
        const token = newId("lease")
        const claimed = sendingCampaigns(tables)
          .toSorted((a, b) => a.id.localeCompare(b.id))
          .flatMap((campaign) => [...recipientsOf(tables, campaign.id).values()])
          .filter((r) =>
            r.status === "pending" && leaseFree(r, now) &&
            (r.nextAttemptAt === null || r.nextAttemptAt.getTime() <= now.getTime())
          )
          .slice(0, limit)
        for (const recipient of claimed) update(tables, recipient, { leaseToken: token, leaseExpiresAt: expiresAt })
        return { token, recipients: claimed.map(withoutLease) }
      }),
    renew: (token, expiresAt) =>
      store.write((tables) => {
        const sending = new Set(sendingCampaigns(tables).map((campaign) => campaign.id))
        const held = everyRecipient(tables).filter((r) =>
          r.leaseToken === token && r.status === "pending" && sending.has(r.campaignId)
        )
        for (const recipient of held) update(tables, recipient, { leaseExpiresAt: expiresAt })
        return held.length > 0
      }),
    release: (token) =>
      store.write((tables) => {
        for (const recipient of everyRecipient(tables)) {
          if (recipient.leaseToken === token && recipient.status === "pending") {
            update(tables, recipient, { leaseToken: null, leaseExpiresAt: null })
          }
        }
      }),
    record: (id, token, outcome, maxAttempts, now) =>
      store.write((tables) => {
        const recipient = everyRecipient(tables).find((r) => r.id === id)
        if (recipient === undefined || recipient.leaseToken !== token) return false
        if (outcome._tag !== "Sent" && recipient.status !== "pending") return false
        const done = { leaseToken: null, leaseExpiresAt: null, updatedAt: now }
        if (outcome._tag === "Sent") {
          update(tables, recipient, { ...done, status: "sent", sentAt: now, messageId: outcome.messageId, errorMessage: null })
        } else if (outcome._tag === "Failed") {
          update(tables, recipient, { ...done, status: "failed", errorMessage: outcome.error })
        } else {
          const attempts = recipient.attempts + 1
          update(tables, recipient, {
            ...done,
            attempts,
            status: attempts >= maxAttempts ? "failed" : "pending",
            nextAttemptAt: outcome.at,
            errorMessage: outcome.error
          })
        }
        return true
      }),
    completeFinished: (now) =>
      store.write((tables) => {
        const finished = sendingCampaigns(tables).filter((campaign) =>
          ![...recipientsOf(tables, campaign.id).values()].some((r) => r.status === "pending")
        )
        for (const campaign of finished) {
          tables(campaignsTable).set(campaign.id, {
            ...campaign,
            status: "sent",
            completedAt: now,
            updatedAt: movedForward(campaign.updatedAt, now)
          })
        }
        return finished.map((campaign) => campaign.id)
      }),
    get: (id) =>
      store.read((tables) => Option.map(Option.fromNullishOr(everyRecipient(tables).find((r) => r.id === id)), withoutLease)),
    track: (id, event, now) =>
      store.write((tables) => {
        const recipient = everyRecipient(tables).find((r) => r.id === id)
        if (recipient === undefined) return
        const opened = { opened: true, firstOpenedAt: recipient.firstOpenedAt ?? now, updatedAt: now }
        update(
          tables,
          recipient,
          event === "open"
            ? { ...opened, openCount: recipient.openCount + 1, lastOpenedAt: now }
            : {
              ...opened,
              clicked: true,
              clickCount: recipient.clickCount + 1,
              firstClickedAt: recipient.firstClickedAt ?? now,
              lastClickedAt: now
            }
        )
      })
  }
})
