import { refusal } from "../platform/Refusal.ts"

/** A file the converter refuses (too large, unsupported, encrypted, corrupt…); `reason` completes the sentence. */
export class DocumentRefused extends refusal(
  "Invalid",
  "DocumentRefused",
  ({ name, reason }: { readonly name: string; readonly reason: string }) => `File "${name}" ${reason}`
) {}
