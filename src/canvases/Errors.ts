import { refusal } from "../platform/Refusal.ts"

/** No canvas with this id in the caller's company. */
export class CanvasNotFound extends refusal("NotFound", "CanvasNotFound", ({ id }: { readonly id: string }) => `Canvas ${id} not found`) {}
