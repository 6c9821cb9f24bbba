import { compile } from "html-to-text"
import type { SendMailOptions } from "nodemailer"
import addressparser from "nodemailer/lib/addressparser"
import { randomUUID } from "node:crypto"
import type { DkimSettings } from "./MailConfig.ts"

/**
 * One e-mail to one recipient, what it becomes for nodemailer, and how the
 * mail server's answer reads as a typed outcome.
 */

export interface OutgoingMessage {
  /** `Name <address>` or an address; default: `MAIL_FROM`. */
  readonly from?: string | undefined
  /** One recipient: `Name <address>` or an address. */
  readonly to: string
  readonly replyTo?: string | undefined
  readonly subject: string
  readonly html: string
  /** The plain-text part; default: derived from `html`. */
  readonly text?: string | undefined
  /** Extra headers, e.g. `listUnsubscribeHeaders(url)`. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** `<unique@domain>`; default: a fresh one at the sender's domain (see `newMessageId`). */
  readonly messageId?: string | undefined
  /** Signs the message with this key (the sender's verified domain's) instead of the configured `DKIM_*` one. */
  readonly dkim?: DkimSettings | undefined
}

/** What became of a message. It never fails: every problem is one of these. */
export type SendOutcome =
  /** The server took the message; `response` is its final reply (`250 …`), or the .eml file written. */
  | { readonly _tag: "Accepted"; readonly messageId: string; readonly response: string }
  /**
   * Try again later: a 4xx reply, or no usable reply (connection refused,
   * timeout, TLS or login failure — a problem of ours or of the server, not
   * of the address). `code` is the reply code when there was one.
   */
  | { readonly _tag: "TemporaryFailure"; readonly messageId: string; readonly code: number | null; readonly response: string }
  /**
   * A 5xx reply: do not retry. `hardBounce` when the server refused the
   * recipient itself (at RCPT TO, or an enhanced status 5.1.x such as "no such
   * user"): the address should be suppressed.
   */
  | {
    readonly _tag: "PermanentFailure"
    readonly messageId: string
    readonly code: number
    readonly response: string
    readonly hardBounce: boolean
  }

/** RFC 2369 / RFC 8058: the unsubscribe link mail clients show, and its one-click POST. */
export const listUnsubscribeHeaders = (url: string): Record<string, string> => ({
  "List-Unsubscribe": `<${url}>`,
  "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"
})

/** The address part of `Name <address>` (or of a bare address). */
export const addressOf = (mailbox: string): string => {
  const [first] = addressparser(mailbox, { flatten: true })
  return first?.address ?? mailbox
}

/** `"Name" <address>` of a sender with its own name and address, either unset: `MAIL_FROM`'s address, with its name if it has one. */
export const senderOf = (
  sender: { readonly fromName: string | null; readonly fromEmail: string | null },
  mailFrom: string
): string => {
  if (sender.fromEmail === null && sender.fromName === null) return mailFrom
  const address = sender.fromEmail ?? addressOf(mailFrom)
  return sender.fromName === null ? address : `"${sender.fromName.replace(/["\\]/g, "\\$&")}" <${address}>`
}

/** A globally unique Message-ID at the sender's domain. */
export const newMessageId = (from: string): string => {
  const domain = addressOf(from).split("@")[1] || "localhost"
  return `<${randomUUID()}@${domain}>`
}

/**
 * Plain text of an HTML body, as a mail client without HTML would want it. Compiled once: `convert` builds
 * its selector tree anew on every call, which cost more than the conversion of a campaign's body.
 */
export const textOf: (html: string) => string = compile({
  wordwrap: 78,
  selectors: [
    { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
    { selector: "img", format: "skip" }
  ]
})

/** The nodemailer message: both parts, the headers, and the Message-ID fixed before sending (unsigned: the `Mailer` signs). */
export const toMailOptions = (message: OutgoingMessage, defaultFrom: string) => {
  const from = message.from ?? defaultFrom
  const messageId = message.messageId ?? newMessageId(from)
  const options: SendMailOptions = {
    from,
    to: message.to,
    ...(message.replyTo === undefined ? {} : { replyTo: message.replyTo }),
    subject: message.subject,
    html: message.html,
    text: message.text ?? textOf(message.html),
    headers: { ...message.headers },
    messageId
  }
  return { options, messageId }
}

interface SmtpFailure {
  readonly code?: string
  readonly responseCode?: number
  readonly response?: string
  readonly command?: string
  readonly message?: string
}

/** Reads a nodemailer failure as an outcome (see `SendOutcome`). */
export const failureOutcome = (messageId: string, error: unknown): SendOutcome => {
  const failure: SmtpFailure = typeof error === "object" && error !== null ? error : {}
  const response = failure.response ?? failure.message ?? String(error)
  const code = failure.responseCode
  // A 5xx answer to our login is our configuration, not the recipient's fault: retry, do not bounce.
  if (code !== undefined && code >= 500 && code < 600 && failure.code !== "EAUTH") {
    const hardBounce = failure.command === "RCPT TO" || /\b5\.1\.\d+\b/.test(response)
    return { _tag: "PermanentFailure", messageId, code, response, hardBounce }
  }
  return { _tag: "TemporaryFailure", messageId, code: code ?? null, response }
}
