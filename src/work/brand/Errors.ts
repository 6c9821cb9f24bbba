import { refusal } from "../../platform/Refusal.ts"

/** A `logoFileId` that names no file of the caller's company. */
export class UnknownLogoFile extends refusal(
  "Invalid",
  "UnknownLogoFile",
  ({ id }: { readonly id: string }) => `logoFileId: no file ${id} in this company`
) {}
