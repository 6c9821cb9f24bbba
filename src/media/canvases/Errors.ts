import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** No canvas with this id in the caller's company. */
export class CanvasNotFound extends refusal("NotFound", "CanvasNotFound", ({ id }: { readonly id: string }) => `Canvas ${id} not found`) {}

/** No such version of the caller's canvas. */
export class CanvasVersionNotFound extends refusal(
  "NotFound",
  "CanvasVersionNotFound",
  ({ canvasId, version }: { readonly canvasId: string; readonly version: number }) => `Version ${version} of canvas ${canvasId} not found`
) {}

/** No chat thread with this id on the caller's canvas. */
export class CanvasThreadNotFound extends refusal(
  "NotFound",
  "CanvasThreadNotFound",
  ({ id }: { readonly id: string }) => `Canvas thread ${id} not found`
) {}

/** A render the sandbox refused or stopped: too many pixels, too many bytes, scripts past their time, a page out of memory. */
export class CanvasRenderRefused extends plainRefusal("Invalid", "CanvasRenderRefused") {}

/** Every browser is busy and the queue is full. */
export class CanvasRenderBusy extends plainRefusal("Limited", "CanvasRenderBusy") {}

/** The renderer itself failed (no Chromium, no ffmpeg): the operator's to fix. */
export class CanvasRenderFailed extends plainRefusal("Failed", "CanvasRenderFailed") {}
