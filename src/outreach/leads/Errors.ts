import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** No lead with this id in the caller's company. */
export class LeadNotFound extends refusal(
  "NotFound",
  "LeadNotFound",
  ({ id }: { readonly id: string }) => `Lead ${id} not found`
) {}

/** Another lead of the company already has this address (ignoring case). */
export class DuplicateLead extends refusal(
  "Invalid",
  "DuplicateLead",
  ({ email, id }: { readonly email: string; readonly id: string }) => `A lead with e-mail ${email} already exists (${id})`
) {}

/** No smart list with this id in the caller's company. */
export class SmartListNotFound extends refusal(
  "NotFound",
  "SmartListNotFound",
  ({ id }: { readonly id: string }) => `Smart list ${id} not found`
) {}

/** A smart-list filter that cannot be evaluated; the message names the path of the bad condition. */
export class InvalidFilter extends plainRefusal("Invalid", "InvalidFilter") {}

/** A CSV file that cannot be imported; the message names why. */
export class InvalidCsv extends plainRefusal("Invalid", "InvalidCsv") {}
