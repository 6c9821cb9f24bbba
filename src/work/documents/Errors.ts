import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** A file the converter refuses (too large, unsupported, encrypted, corrupt…); `reason` completes the sentence. */
export class DocumentRefused extends refusal(
  "Invalid",
  "DocumentRefused",
  ({ name, reason }: { readonly name: string; readonly reason: string }) => `File "${name}" ${reason}`
) {}

/** No document with this id in the caller's company. */
export class DocumentNotFound extends refusal(
  "NotFound",
  "DocumentNotFound",
  ({ id }: { readonly id: string }) => `Document ${id} not found`
) {}

/** A knowledge-base request the service cannot carry out as asked (no file, a bad tag, a search mode not configured). */
export class KnowledgeRequestInvalid extends plainRefusal("Invalid", "KnowledgeRequestInvalid") {}
