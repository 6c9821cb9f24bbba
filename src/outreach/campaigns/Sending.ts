import { Effect, Option, Result } from "effect"
import { CampaignNotFound, CannotSend, ScheduleInPast } from "./Errors.ts"
import { RecipientListNotFound } from "../lists/Errors.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { checkSender } from "../domains/Senders.ts"
import { Authorized } from "../../auth/Policy.ts"
import { ListsRepo } from "../lists/ListsRepo.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import type { CampaignStatus, ScheduleBody, SendBody } from "./Api.ts"
import { find, toCampaign } from "./Campaigns.ts"
import { checkMove, moveNotAllowed, sourcesOf } from "./CampaignStates.ts"
import { type CampaignRecord, CampaignsRepo, type MoveChange } from "./CampaignsRepo.ts"
import { smartListOf } from "../leads/SmartLists.ts"
import { SmartListsRepo } from "../leads/SmartListsRepo.ts"
import { parseTemplates } from "../messages/Message.ts"
import { type Recipients, RecipientsRepo } from "./RecipientsRepo.ts"

/**
 * Starting, scheduling, pausing, resuming and cancelling campaigns. Every
 * move is a compare-and-set on the status in the repository, so two
 * concurrent moves never both win; the loser gets the 400 naming the status
 * the campaign is in by then.
 */

type CompanyBody = { readonly companyId?: string | undefined } | null

const cannotSend = (reason: string) => new CannotSend({ reason })

/** The 400 of a lost race: the campaign moved on (or the 404 when it was deleted meanwhile). */
const lostRace = (companyId: string, id: string, to: CampaignStatus) =>
  Effect.flatMap(find(companyId, id), (current) =>
    Effect.andThen(checkMove(current.status, to), Effect.fail(new CampaignNotFound({ id }))))

/** Whom to send to: at most one of a contact list and a smart list, given here or named by the campaign. */
type Audience = { readonly listId?: string | undefined; readonly smartListId?: string | undefined } | null | undefined

/** The source the body names, else the campaign's; with the smart list's decoded filter. */
const sourceOf = (campaign: CampaignRecord, audience: Audience) =>
  Effect.gen(function*() {
    const listId = audience?.listId
    const smartListId = audience?.smartListId
    if (listId !== undefined && smartListId !== undefined) return yield* cannotSend("give listId or smartListId, not both")
    const smart = smartListId ?? (listId === undefined ? campaign.smartListId : null)
    if (smart !== null) {
      const { filter } = yield* smartListOf(campaign.companyId, smart)
      const now = yield* currentDate
      const first = yield* SmartListsRepo.use((repo) => repo.leads(campaign.companyId, filter, now, { offset: 0, limit: 1 }))
      if (first.rows.length === 0) return yield* cannotSend(`smart list ${smart} matches no lead`)
      return { source: { listId: null, smartListId: smart }, filter } satisfies Recipients
    }
    const chosen = listId ?? campaign.listId
    if (chosen === null) return yield* cannotSend("it has no list; give listId or smartListId")
    const list = yield* Effect.flatMap(
      ListsRepo.use((repo) => repo.get(campaign.companyId, chosen)),
      orRefuse(() => new RecipientListNotFound({ id: chosen }))
    )
    if (list.rowCount === 0) return yield* cannotSend(`list ${chosen} has no rows`)
    return { source: { listId: chosen, smartListId: null }, filter: null } satisfies Recipients
  })

/**
 * What a send needs, checked before it starts or is scheduled: a list of the
 * company with rows (or a smart list matching a lead), a subject, a body,
 * well-formed spintax and merge fields in both, and a sender the company may
 * send as. Answers whom to send to.
 */
export const readyToSend = (campaign: CampaignRecord, audience: Audience) =>
  Effect.gen(function*() {
    const recipients = yield* sourceOf(campaign, audience)
    if (campaign.subject.trim() === "") return yield* cannotSend("its subject is empty")
    if (campaign.bodyDocument.html.trim() === "") return yield* cannotSend("its bodyDocument.html is empty")
    const templates = parseTemplates(campaign.subject, campaign.bodyDocument.html)
    if (Result.isFailure(templates)) return yield* cannotSend(templates.failure)
    yield* Effect.mapError(checkSender(campaign.companyId, campaign.fromEmail), (refused) => cannotSend(refused.message))
    return recipients
  })

/** Starts sending `campaign` now (from its current status): its recipients are made in the same transaction. */
export const startSending = (campaign: CampaignRecord, recipients: Recipients, change: MoveChange = {}) =>
  Effect.gen(function*() {
    const now = yield* currentDate
    const started = yield* RecipientsRepo.use((repo) =>
      repo.startSending(campaign, [campaign.status], recipients, change, now)
    )
    if (Option.isSome(started)) return started.value
    return yield* lostRace(campaign.companyId, campaign.id, "sending")
  })

export const send = Effect.fn("Sending.send")(function*(id: string, body: typeof SendBody.Type | null) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(body?.companyId)
  const campaign = yield* find(principal.companyId, id)
  yield* checkMove(campaign.status, "sending")
  return toCampaign(yield* startSending(campaign, yield* readyToSend(campaign, body)))
})

export const schedule = Effect.fn("Sending.schedule")(function*(id: string, body: typeof ScheduleBody.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(body.companyId)
  const campaign = yield* find(principal.companyId, id)
  yield* checkMove(campaign.status, "scheduled")
  const now = yield* currentDate
  if (body.scheduledAt.getTime() <= now.getTime()) {
    return yield* new ScheduleInPast({})
  }
  const { source } = yield* readyToSend(campaign, body)
  return toCampaign(yield* move(campaign, "scheduled", { source, scheduledAt: body.scheduledAt }))
})

/** Moves the campaign from its current status to `to`, if the machine allows it. */
const move = (campaign: CampaignRecord, to: CampaignStatus, change: MoveChange = {}) =>
  Effect.gen(function*() {
    yield* checkMove(campaign.status, to)
    const now = yield* currentDate
    const moved = yield* CampaignsRepo.use((repo) =>
      repo.move(campaign.companyId, campaign.id, [campaign.status], to, change, now)
    )
    if (Option.isSome(moved)) return moved.value
    return yield* lostRace(campaign.companyId, campaign.id, to)
  })

/** Pause and resume: a move from exactly one status. */
const simpleMove = (from: CampaignStatus, to: CampaignStatus) => (id: string, body: CompanyBody) =>
  Effect.gen(function*() {
    yield* Authorized("campaigns:write")
    const principal = yield* requireCompany(body?.companyId)
    const campaign = yield* find(principal.companyId, id)
    if (campaign.status !== from) return yield* moveNotAllowed(campaign.status, to)
    return toCampaign(yield* move(campaign, to))
  })

export const pause = simpleMove("sending", "paused")

export const resume = simpleMove("paused", "sending")

export const cancel = Effect.fn("Sending.cancel")(function*(id: string, body: CompanyBody) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(body?.companyId)
  const campaign = yield* find(principal.companyId, id)
  yield* checkMove(campaign.status, "cancelled")
  const now = yield* currentDate
  const cancelled = yield* RecipientsRepo.use((repo) =>
    repo.cancel(principal.companyId, id, sourcesOf("cancelled"), now)
  )
  if (Option.isSome(cancelled)) return toCampaign(cancelled.value)
  return yield* lostRace(principal.companyId, id, "cancelled")
})
