import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** No campaign with this id in the caller's company. */
export class CampaignNotFound extends refusal(
  "NotFound",
  "CampaignNotFound",
  ({ id }: { readonly id: string }) => `Campaign ${id} not found`
) {}

/** No saved body version with this number. */
export class VersionNotFound extends refusal(
  "NotFound",
  "VersionNotFound",
  ({ id, version }: { readonly id: string; readonly version: number }) => `Version ${version} of campaign ${id} not found`
) {}

/** A move or action the campaign's status does not allow; the message names both. */
export class InvalidTransition extends plainRefusal("Invalid", "InvalidTransition") {}

/** A campaign missing what sending needs (a list with rows, a subject, a body). */
export class CannotSend extends refusal(
  "Invalid",
  "CannotSend",
  ({ reason }: { readonly reason: string }) => `The campaign cannot be sent: ${reason}`
) {}

/** A start time that is not in the future. */
export class ScheduleInPast extends refusal("Invalid", "ScheduleInPast", (_: {}) => "scheduledAt must be in the future") {}
