import { plainRefusal } from "../platform/Refusal.ts"

/** Content the tools cannot take (too long, over the worker's time or memory); the message names why. */
export class ContentRefused extends plainRefusal("Invalid", "ContentRefused") {}
