import { refusal } from "../../platform/Refusal.ts"

/** No memory of the caller's with this id in the company. */
export class MemoryNotFound extends refusal("NotFound", "MemoryNotFound", ({ id }: { readonly id: string }) => `Memory ${id} not found`) {}
