import { plainRefusal, refusal } from "../../platform/Refusal.ts"

export class MailboxNotFound extends refusal("NotFound", "MailboxNotFound", ({ id }: { readonly id: string }) => `Mailbox ${id} not found`) {}

export class ThreadNotFound extends refusal("NotFound", "ThreadNotFound", ({ id }: { readonly id: string }) => `Thread ${id} not found`) {}

/** A mailbox whose settings cannot be used: an internal host, an address the company has already. */
export class InvalidMailbox extends plainRefusal("Invalid", "InvalidMailbox") {}

/** An answer that may not be sent (a suppressed contact, a thread with no address to answer). */
export class ReplyRefused extends plainRefusal("Invalid", "ReplyRefused") {}

/** The model could not draft an answer. */
export class DraftFailed extends plainRefusal("Failed", "DraftFailed") {}

/** The mail server did not take an answer. */
export class ReplyNotSent extends plainRefusal("Failed", "ReplyNotSent") {}
