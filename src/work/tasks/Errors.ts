import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** No scheduled task with this id in the caller's company. */
export class TaskNotFound extends refusal(
  "NotFound",
  "TaskNotFound",
  ({ id }: { readonly id: string }) => `Scheduled task ${id} not found`
) {}

/** A task the caller can see but neither owns nor manages. */
export class TaskNotChangeable extends refusal(
  "Denied",
  "TaskNotChangeable",
  ({ id }: { readonly id: string }) => `Only the owner of scheduled task ${id} or a company owner or admin can change it`
) {}

/** A schedule, employee or state that does not allow what was asked; the message names which. */
export class InvalidTask extends plainRefusal("Invalid", "InvalidTask") {}
