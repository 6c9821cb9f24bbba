import { refusal } from "../platform/Refusal.ts"

/** No agent with this id in the caller's company. */
export class AgentNotFound extends refusal("NotFound", "AgentNotFound", ({ id }: { readonly id: string }) => `Agent ${id} not found`) {}

/** No employee with this id in the caller's company. */
export class EmployeeNotFound extends refusal(
  "NotFound",
  "EmployeeNotFound",
  ({ id }: { readonly id: string }) => `Employee ${id} not found`
) {}
