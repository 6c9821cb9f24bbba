import { plainRefusal } from "../../platform/Refusal.ts"

/** A page that cannot be extracted: a URL the outbound guard refuses, a timeout, a page past the byte cap, an action that failed. */
export class BrowserRefused extends plainRefusal("Invalid", "BrowserRefused") {}

/** Every browser is busy and the queue is full. */
export class BrowserBusy extends plainRefusal("Limited", "BrowserBusy") {}

/** The browser itself could not run: the operator's to fix. */
export class BrowserUnavailable extends plainRefusal("Failed", "BrowserUnavailable") {}
