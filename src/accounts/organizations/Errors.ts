import { refusal } from "../../platform/Refusal.ts"

/** No organization with this id (or none the caller belongs to). */
export class OrganizationNotFound extends refusal(
  "NotFound",
  "OrganizationNotFound",
  ({ id }: { readonly id: string }) => `Organization ${id} not found`
) {}
