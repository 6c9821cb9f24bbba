import { refusal } from "../../platform/Refusal.ts"

/** An unknown project, another company's, or somebody else's private one. */
export class ProjectNotFound extends refusal(
  "NotFound",
  "ProjectNotFound",
  ({ id }: { readonly id: string }) => `Project ${id} not found`
) {}

/** A project the caller can see but neither owns nor manages. */
export class ProjectNotChangeable extends refusal(
  "Denied",
  "ProjectNotChangeable",
  ({ id }: { readonly id: string }) => `Only the owner of project ${id} or a company owner or admin can change it`
) {}
