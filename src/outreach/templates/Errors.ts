import { refusal } from "../../platform/Refusal.ts"

/** No campaign template with this id in the caller's company. */
export class TemplateNotFound extends refusal(
  "NotFound",
  "TemplateNotFound",
  ({ id }: { readonly id: string }) => `Campaign template ${id} not found`
) {}
