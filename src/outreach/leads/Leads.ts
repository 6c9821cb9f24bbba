import { Context, Effect, Layer, Option } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import { type Activity, type ActivityType, type Lead, type LeadPatch, LeadStatus, type NewLead } from "./Api.ts"
import { DuplicateLead, LeadNotFound } from "./Errors.ts"
import { type LeadFilter, type LeadRecord, LeadsRepo, type LeadUpsert } from "./LeadsRepo.ts"
import { type ActivityRecord, addressKey, type NewActivity, type StatusMove } from "./Timeline.ts"

/** Leads of the caller's company, and the `Leads` service other areas tell what happened. Decisions in docs/leads.md. */

export const toLead = (record: LeadRecord): typeof Lead.Type => ({
  id: record.id,
  email: record.email,
  firstName: record.firstName,
  lastName: record.lastName,
  company: record.company,
  title: record.title,
  phone: record.phone,
  website: record.website,
  linkedinUrl: record.linkedinUrl,
  tags: record.tags,
  status: record.status,
  fields: record.fields,
  created_date: record.createdAt.toISOString(),
  updated_date: record.updatedAt.toISOString()
})

const toActivity = (record: ActivityRecord): typeof Activity.Type => ({
  id: record.id,
  type: record.type,
  at: record.at.toISOString(),
  ...(record.campaignId === null ? {} : { campaignId: record.campaignId }),
  ...(record.sequenceId === null ? {} : { sequenceId: record.sequenceId }),
  ...(record.threadId === null ? {} : { threadId: record.threadId }),
  ...(record.pageId === null ? {} : { pageId: record.pageId }),
  detail: record.detail
})

/** What is known of a person besides the address; absent values leave a lead's as they are. */
export interface LeadContact {
  readonly email: string
  readonly firstName?: string | null | undefined
  readonly lastName?: string | null | undefined
  readonly company?: string | null | undefined
  readonly title?: string | null | undefined
  readonly phone?: string | null | undefined
  readonly website?: string | null | undefined
  readonly linkedinUrl?: string | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly fields?: Readonly<Record<string, unknown>> | undefined
}

/** A lead as a contact of a list: its names and company, and its custom fields that are strings as merge fields. */
export const asContactRow = (lead: LeadRecord) => ({
  id: lead.id,
  email: lead.email,
  firstName: lead.firstName,
  lastName: lead.lastName,
  company: lead.company,
  fields: Object.fromEntries(Object.entries(lead.fields).filter((entry): entry is [string, string] => typeof entry[1] === "string")),
  createdAt: lead.createdAt
})

const uniqueTags = (tags: ReadonlyArray<string> | undefined) => [...new Set((tags ?? []).map((tag) => tag.trim()))]

export const toUpsert = (companyId: string, contact: LeadContact): LeadUpsert => ({
  id: newId("lead"),
  companyId,
  email: contact.email.trim(),
  firstName: contact.firstName ?? null,
  lastName: contact.lastName ?? null,
  company: contact.company ?? null,
  title: contact.title ?? null,
  phone: contact.phone ?? null,
  website: contact.website ?? null,
  linkedinUrl: contact.linkedinUrl ?? null,
  tags: uniqueTags(contact.tags),
  fields: contact.fields ?? {}
})

/** Something that happened to the person of `email` in company `companyId`. */
export interface LeadEvent {
  readonly companyId: string
  readonly type: Exclude<ActivityType, "status_changed">
  readonly at: Date
  readonly contact: LeadContact
  readonly campaignId?: string | undefined
  readonly sequenceId?: string | undefined
  readonly threadId?: string | undefined
  readonly pageId?: string | undefined
  readonly detail?: Readonly<Record<string, unknown>> | undefined
  /** The status the lead takes whatever it had, instead of the event's own move (a reply classified `interested`). */
  readonly status?: LeadStatus | undefined
}

const allStatuses = LeadStatus.literals

/** How an event moves a lead's status: to `to`, only from the statuses it may overrule. */
const moveOf: Partial<Record<LeadEvent["type"], { readonly to: LeadStatus; readonly from: ReadonlyArray<LeadStatus> }>> = {
  sent: { to: "contacted", from: ["new"] },
  replied: { to: "replied", from: ["new", "contacted"] },
  bounced: { to: "bounced", from: ["new", "contacted", "replied", "interested", "not_interested"] },
  unsubscribed: { to: "unsubscribed", from: allStatuses.filter((status) => status !== "unsubscribed") }
}

/** When one batch moves a lead twice, the later stage wins. */
const stage: ReadonlyArray<LeadStatus> = ["contacted", "replied", "bounced", "unsubscribed"]

/**
 * Events gathered while a batch of work runs (a sender's claim of messages)
 * and written together at its end: one transaction per batch instead of one
 * per message on the sending path.
 */
export interface LeadJournal {
  readonly note: (event: LeadEvent) => Effect.Effect<void>
  /** Writes what was noted so far (and forgets it). */
  readonly flush: Effect.Effect<void>
}

/**
 * The port other areas (lists, campaigns, sequences, the inbox, landing pages)
 * call; leads import none of them.
 */
export class Leads extends Context.Service<Leads, {
  /** Creates the leads of these contacts, or fills in what existing ones lack. */
  readonly upsert: (
    companyId: string,
    contacts: ReadonlyArray<LeadContact>
  ) => Effect.Effect<{ readonly created: number; readonly updated: number }>
  /** Writes each event to its lead's timeline (making the lead if needed) and moves its status as the event does. */
  readonly record: (events: ReadonlyArray<LeadEvent>) => Effect.Effect<void>
  /** A journal for one batch of work; its events are written by `flush` (an unflushed journal writes nothing). */
  readonly journal: Effect.Effect<LeadJournal>
  /** Sets a lead's status (making the lead if needed); a change writes `status_changed`. */
  readonly setStatus: (
    companyId: string,
    contact: LeadContact,
    status: LeadStatus,
    detail?: Readonly<Record<string, unknown>>
  ) => Effect.Effect<void>
}>()("leads/Leads") {
  static readonly layer = Layer.effect(Leads, Effect.gen(function*() {
    const repo = yield* LeadsRepo
    const apply = (
      contacts: ReadonlyArray<LeadUpsert>,
      moves: ReadonlyArray<StatusMove>,
      activities: ReadonlyArray<NewActivity>
    ) => Effect.flatMap(currentDate, (now) => repo.record(contacts, moves, activities, now))
    const record = (events: ReadonlyArray<LeadEvent>) => {
      const activities = events.map((event): NewActivity => ({
        id: newId("act"),
        companyId: event.companyId,
        email: event.contact.email.trim(),
        type: event.type,
        at: event.at,
        campaignId: event.campaignId ?? null,
        sequenceId: event.sequenceId ?? null,
        threadId: event.threadId ?? null,
        pageId: event.pageId ?? null,
        detail: event.detail ?? {}
      }))
      const moves = new Map<string, StatusMove>()
      for (const event of events) {
        const move = event.status === undefined ? moveOf[event.type] : { to: event.status, from: allStatuses }
        if (move === undefined) continue
        const key = addressKey(event.companyId, event.contact.email)
        const earlier = moves.get(key)
        if (event.status === undefined && earlier !== undefined && stage.indexOf(earlier.to) >= stage.indexOf(move.to)) continue
        moves.set(key, {
          companyId: event.companyId,
          email: event.contact.email.trim(),
          ...move,
          at: event.at,
          activityId: newId("act"),
          detail: event.status === undefined || event.threadId === undefined ? {} : { threadId: event.threadId }
        })
      }
      return apply(events.map((event) => toUpsert(event.companyId, event.contact)), [...moves.values()], activities)
    }
    return {
      upsert: (companyId, contacts) =>
        Effect.flatMap(currentDate, (now) => repo.upsert(contacts.map((contact) => toUpsert(companyId, contact)), "fill", now)),
      record,
      journal: Effect.sync(() => {
        let noted: Array<LeadEvent> = []
        return {
          note: (event) => Effect.sync(() => void noted.push(event)),
          flush: Effect.suspend(() => {
            const events = noted
            noted = []
            return record(events)
          })
        }
      }),
      setStatus: (companyId, contact, status, detail) =>
        Effect.flatMap(currentDate, (now) =>
          apply(
            [toUpsert(companyId, contact)],
            [{
              companyId,
              email: contact.email.trim(),
              to: status,
              from: allStatuses,
              at: now,
              activityId: newId("act"),
              detail: detail ?? {}
            }],
            []
          ))
    }
  }))

  /** Over its own repository: what the area lists among its repositories. */
  static readonly live = Leads.layer.pipe(Layer.provide(LeadsRepo.layer))
}

const leadNotFound = (id: string) => orRefuse(() => new LeadNotFound({ id }))

export const create = Effect.fn("Leads.create")(function*(input: typeof NewLead.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(input.companyId)
  const now = yield* currentDate
  const created = yield* LeadsRepo.use((repo) =>
    repo.create({ ...toUpsert(principal.companyId, input), status: input.status ?? "new", createdAt: now, updatedAt: now })
  )
  if (Option.isSome(created)) return toLead(created.value)
  const existing = yield* LeadsRepo.use((repo) => repo.findByEmail(principal.companyId, input.email))
  return yield* new DuplicateLead({ email: input.email.trim(), id: Option.match(existing, { onNone: () => "", onSome: (lead) => lead.id }) })
})

export const list = Effect.fn("Leads.list")(function*(request: PageRequest, filter: LeadFilter) {
  const { principal } = yield* Authorized("campaigns:read")
  const { rows, total } = yield* LeadsRepo.use((repo) =>
    repo.list(principal.companyId, { ...filter, search: filter.search?.trim() }, windowOf(request))
  )
  return toPage(rows.map(toLead), total, request)
})

export const get = Effect.fn("Leads.get")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:read")
  return toLead(yield* leadNotFound(id)(yield* LeadsRepo.use((repo) => repo.get(principal.companyId, id))))
})

export const update = Effect.fn("Leads.update")(function*(id: string, patch: typeof LeadPatch.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(patch.companyId)
  const { companyId: _, ...change } = patch
  const now = yield* currentDate
  const updated = yield* leadNotFound(id)(
    yield* LeadsRepo.use((repo) =>
      repo.update(
        principal.companyId,
        id,
        { ...change, email: change.email?.trim(), tags: change.tags === undefined ? undefined : uniqueTags(change.tags) },
        now,
        newId("act")
      )
    )
  )
  if (updated === "conflict") {
    const existing = yield* LeadsRepo.use((repo) => repo.findByEmail(principal.companyId, change.email ?? ""))
    return yield* new DuplicateLead({ email: change.email ?? "", id: Option.match(existing, { onNone: () => "", onSome: (lead) => lead.id }) })
  }
  return toLead(updated)
})

export const remove = Effect.fn("Leads.remove")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:write")
  return toLead(yield* leadNotFound(id)(yield* LeadsRepo.use((repo) => repo.remove(principal.companyId, id))))
})

export const activities = Effect.fn("Leads.activities")(function*(id: string, request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  yield* leadNotFound(id)(yield* LeadsRepo.use((repo) => repo.get(principal.companyId, id)))
  const { rows, total } = yield* LeadsRepo.use((repo) => repo.activities(principal.companyId, id, windowOf(request)))
  return toPage(rows.map(toActivity), total, request)
})
