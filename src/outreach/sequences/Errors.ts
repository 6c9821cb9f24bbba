import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** No sequence with this id in the caller's company. */
export class SequenceNotFound extends refusal(
  "NotFound",
  "SequenceNotFound",
  ({ id }: { readonly id: string }) => `Sequence ${id} not found`
) {}

/** A row to enroll that is not one of the company's list rows. */
export class EnrollRowNotFound extends refusal("NotFound", "EnrollRowNotFound", ({ id }: { readonly id: string }) => `Row ${id} not found`) {}

/** Steps or an enrollment that do not fit; the message names the field. */
export class InvalidSequence extends plainRefusal("Invalid", "InvalidSequence") {}
