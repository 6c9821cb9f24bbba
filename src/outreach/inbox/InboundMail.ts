import { Data, Effect } from "effect"
import libmime from "libmime"
import { type AddressObject, type Attachment, type ParsedMail, simpleParser } from "mailparser"
import { createHash } from "node:crypto"

/**
 * An inbound message, read with a real MIME parser (`mailparser`): who sent
 * it to whom, its threading headers, its text, whether a machine sent it,
 * and — for a delivery status notification (RFC 3464) — which of our
 * messages bounced and how.
 */

export interface Bounce {
  /** The bounced message's Message-ID, from the returned headers. */
  readonly originalMessageId: string | undefined
  readonly recipient: string | undefined
  /** A permanent failure (status 5.x.x): the address is suppressed; else (4.x.x given up) the message only is marked. */
  readonly hard: boolean
  readonly status: string
  readonly diagnostic: string
}

export interface InboundMail {
  readonly messageId: string
  /** `In-Reply-To`, then `References` newest first, then a bounced message's Message-ID: what it may answer. */
  readonly references: ReadonlyArray<string>
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
  readonly html: string | null
  readonly date: Date | undefined
  /** Sent by a machine (auto-reply, list mail, bounce): it must never be answered automatically. */
  readonly automatic: boolean
  readonly bounce: Bounce | undefined
}

/** Why a message cannot be taken. */
export class UnreadableMail extends Data.TaggedError("UnreadableMail")<{ readonly message: string }> {}

/** Text kept of a body: more is cut (the raw message is not kept). */
const maxTextLength = 200_000
/** HTML longer than this is not converted to text (mailparser's own cap; the work grows with it). */
const maxHtmlToParse = 2_000_000
const maxReferences = 50

/** Header values may carry line breaks from folding or forgery: one line, no control characters. */
const oneLine = (value: string, max = 998) => value.replace(/[\u0000-\u001f\u007f]+/g, " ").trim().slice(0, max)

const addresses = (value: AddressObject | Array<AddressObject> | undefined): Array<string> =>
  (value === undefined ? [] : Array.isArray(value) ? value : [value])
    .flatMap((object) => object.value)
    .flatMap((entry) => (entry.address === undefined ? [] : [oneLine(entry.address, 320).toLowerCase()]))

const messageIdsIn = (value: string | Array<string> | undefined): Array<string> =>
  (value === undefined ? [] : Array.isArray(value) ? value : [value])
    .flatMap((item) => item.match(/<[^<>\s]{1,500}>/g) ?? [])

const headerText = (mail: ParsedMail, name: string) => {
  const value = mail.headers.get(name)
  return typeof value === "string" ? value.toLowerCase() : ""
}

/** RFC 3834 `Auto-Submitted`, `Precedence: bulk/junk/list`, mailing-list and auto-responder headers, mailer daemons. */
const isAutomatic = (mail: ParsedMail, from: string, isReport: boolean) =>
  isReport ||
  (headerText(mail, "auto-submitted") !== "" && headerText(mail, "auto-submitted") !== "no") ||
  /^(bulk|junk|list|auto_reply)$/.test(headerText(mail, "precedence")) ||
  mail.headers.has("list-id") || mail.headers.has("x-autoreply") || mail.headers.has("x-autorespond") ||
  mail.headers.has("x-auto-response-suppress") ||
  /^(mailer-daemon|postmaster|no-?reply)@/.test(from)

const firstValue = (fields: Record<string, Array<string> | string | undefined>, name: string) => {
  const value = fields[name]
  return oneLine((Array.isArray(value) ? value[0] : value) ?? "")
}

/** `rfc822;ada@example.com` → `ada@example.com` */
const addressField = (value: string) => value.replace(/^[^;]*;/, "").trim().toLowerCase()

/** The per-recipient blocks of a `message/delivery-status` part (RFC 3464 §2): the first failed one, else the first. */
const bounceOf = (status: Attachment, original: Attachment | undefined): Bounce | undefined => {
  const blocks = status.content.toString("utf8").replace(/\r\n/g, "\n").split(/\n\s*\n/).slice(1)
    .map((block) => libmime.decodeHeaders(block))
    .filter((fields) => fields["final-recipient"] !== undefined || fields["action"] !== undefined)
  const chosen = blocks.find((fields) => firstValue(fields, "action").toLowerCase() === "failed") ?? blocks[0]
  if (chosen === undefined) return undefined
  const action = firstValue(chosen, "action").toLowerCase()
  const code = firstValue(chosen, "status")
  // A delay notice (`delayed`) or a success report is no bounce: the message may still arrive.
  if (action !== "failed") return undefined
  const originalHeaders = original === undefined ? {} : libmime.decodeHeaders(original.content.toString("utf8").split(/\r?\n\r?\n/)[0] ?? "")
  const recipient = firstValue(chosen, "final-recipient") || firstValue(chosen, "original-recipient")
  return {
    originalMessageId: messageIdsIn(firstValue(originalHeaders, "message-id"))[0],
    recipient: recipient === "" ? undefined : addressField(recipient),
    hard: code.startsWith("5"),
    status: code,
    diagnostic: firstValue(chosen, "diagnostic-code")
  }
}

/** Parses `raw`; fails with `UnreadableMail` naming why when it is not a message. */
export const readInbound = (raw: Buffer): Effect.Effect<InboundMail, UnreadableMail> =>
  Effect.gen(function*() {
    const mail = yield* Effect.tryPromise({
      try: () => simpleParser(raw, { keepDeliveryStatus: true, skipImageLinks: true, skipTextToHtml: true, maxHtmlLengthToParse: maxHtmlToParse }),
      catch: (error) => new UnreadableMail({ message: `Malformed message: ${error instanceof Error ? error.message : String(error)}` })
    })
    const from = addresses(mail.from)[0]
    if (from === undefined && mail.headers.size === 0) return yield* Effect.fail(new UnreadableMail({ message: "Malformed message: no headers" }))
    const status = mail.attachments.find((part) => part.contentType === "message/delivery-status")
    const original = mail.attachments.find((part) => part.contentType === "message/rfc822" || part.contentType === "text/rfc822-headers")
    const bounce = status === undefined ? undefined : bounceOf(status, original)
    const references = [
      ...messageIdsIn(mail.inReplyTo),
      ...messageIdsIn(mail.references).reverse(),
      ...(bounce?.originalMessageId === undefined ? [] : [bounce.originalMessageId])
    ]
    const sender = from ?? ""
    const messageId = messageIdsIn(mail.messageId)[0]
    return {
      messageId: messageId ?? `<${rawDigest(raw)}@inbound.invalid>`,
      references: [...new Set(references)].slice(0, maxReferences),
      from: sender,
      to: [...addresses(mail.to), ...addresses(mail.cc)].slice(0, 100),
      subject: oneLine(mail.subject ?? ""),
      text: (mail.text ?? "").slice(0, maxTextLength),
      html: typeof mail.html === "string" ? mail.html.slice(0, maxTextLength) : null,
      date: mail.date,
      automatic: isAutomatic(mail, sender, status !== undefined),
      bounce
    } satisfies InboundMail
  })

/**
 * Whether `raw` begins with a header field (`Name: value`): what inbound SMTP checks before it accepts a message,
 * which is parsed only later. What passes and still cannot be read is quarantined then.
 */
export const hasHeaders = (raw: Buffer) => /^[\x21-\x39\x3b-\x7e]+[ \t]*:/.test(raw.subarray(0, 1_000).toString("latin1"))

/** A stable stand-in Message-ID for a message without one: the same bytes give the same id, so it is still kept once. */
const rawDigest = (raw: Buffer) => createHash("sha256").update(raw).digest("hex").slice(0, 40)
