import { Effect } from "effect"
import { InvalidTransition } from "./Errors.ts"
import type { CampaignStatus } from "./Api.ts"

/**
 * The campaign's state machine (docs/campaigns.md): draft → scheduled →
 * sending ⇄ paused → sent, or cancelled / failed. A scheduled campaign may be
 * scheduled again (a new time); sent, cancelled and failed are final.
 */
const moves: Record<CampaignStatus, ReadonlyArray<CampaignStatus>> = {
  draft: ["scheduled", "sending"],
  scheduled: ["scheduled", "sending", "cancelled", "failed"],
  sending: ["paused", "sent", "cancelled", "failed"],
  paused: ["sending", "cancelled"],
  sent: [],
  cancelled: [],
  failed: []
}

const statuses = Object.keys(moves) as ReadonlyArray<CampaignStatus>

/** The statuses a campaign may move to `to` from. */
export const sourcesOf = (to: CampaignStatus): ReadonlyArray<CampaignStatus> =>
  statuses.filter((from) => moves[from].includes(to))

/** Statuses in which the campaign's fields and body may change. */
export const editable: ReadonlyArray<CampaignStatus> = ["draft", "scheduled"]

/** The 400 of a move the current status does not allow, naming both statuses. */
export const moveNotAllowed = (from: CampaignStatus, to: CampaignStatus) =>
  new InvalidTransition({ message: `Campaign status cannot move from ${from} to ${to}` })

/** Succeeds when `from` may move to `to`; the 400 naming both otherwise. */
export const checkMove = (from: CampaignStatus, to: CampaignStatus): Effect.Effect<void, InvalidTransition> =>
  moves[from].includes(to) ? Effect.void : Effect.fail(moveNotAllowed(from, to))

/** Succeeds when a campaign in `status` may be changed or deleted (`action`); 400 naming the status otherwise. */
export const checkEditable = (
  status: CampaignStatus,
  action: string,
  allowed: ReadonlyArray<CampaignStatus> = editable
): Effect.Effect<void, InvalidTransition> =>
  allowed.includes(status)
    ? Effect.void
    : Effect.fail(new InvalidTransition({ message: `Cannot ${action} a ${status} campaign: only ${allowed.join(" or ")} campaigns` }))

/** The error message of the recipients a cancel skipped. */
export const cancelledReason = "Campaign cancelled"

/** The error message of a recipient whose sending process died while the mail server was receiving it. */
export const uncertainReason =
  "The sending process stopped while handing this message to the mail server: it may or may not have been delivered; not sent again"
