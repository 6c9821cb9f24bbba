import { Effect, Option, Schema } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import { type LlmRequest, type LlmResponse, ModelCatalog } from "../../models/llm/Llm.ts"
import { Mailer } from "../mail/Mailer.ts"
import { MailConfig } from "../mail/MailConfig.ts"
import { newMessageId, toMailOptions } from "../mail/Message.ts"
import { newId } from "../../platform/Ids.ts"
import { currentDate } from "../../platform/Time.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"
import { escapeHtml } from "../messages/MergeFields.ts"
import { OutreachConfig } from "../messages/OutreachConfig.ts"
import { replyAddressOf } from "../messages/ReplyAddresses.ts"
import { TrackingSecret } from "../messages/TrackingSecret.ts"
import type { ReplyBody } from "./Api.ts"
import { DraftFailed, ReplyNotSent, ReplyRefused } from "./Errors.ts"
import { sendThroughMailbox } from "./MailboxSmtp.ts"
import { MailboxesRepo } from "./MailboxesRepo.ts"
import { findThread, toMessage } from "./Threads.ts"
import { type MessageRecord, ThreadsRepo } from "./ThreadsRepo.ts"

/**
 * Answering a thread: a person's reply, sent with the threading headers
 * (`In-Reply-To`, `References`) through the thread's mailbox's SMTP server,
 * else through the platform's `Mailer`; and a draft the model writes
 * (billed under `campaigns`) that nothing sends. The platform itself never
 * answers inbound mail automatically.
 */

const maxReferences = 20

const replySubject = (subject: string) => (/^\s*re\s*:/i.test(subject) ? subject : `Re: ${subject}`).replace(/[\r\n]+/g, " ")

/** The thread's messages' Message-IDs for `References`, oldest first, and the last inbound one for `In-Reply-To`. */
const threadingHeaders = (messages: ReadonlyArray<MessageRecord>): Record<string, string> => {
  const lastInbound = messages.findLast((message) => message.direction === "inbound") ?? messages.at(-1)
  const references = messages.map((message) => message.messageId).slice(-maxReferences)
  return lastInbound === undefined ? {} : { "In-Reply-To": lastInbound.messageId, References: references.join(" ") }
}

export const reply = Effect.fn("Replies.reply")(function*(threadId: string, body: typeof ReplyBody.Type) {
  const principal = yield* requireCompany(body.companyId)
  const thread = yield* findThread(principal.companyId, threadId)
  if (yield* Suppressions.use((suppressions) => suppressions.isSuppressed(thread.companyId, thread.contactEmail))) {
    return yield* new ReplyRefused({ message: `${thread.contactEmail} is on the suppression list` })
  }
  const repo = yield* ThreadsRepo
  const messages = yield* repo.messages(thread.id)
  const mailbox = thread.mailboxId === null ? Option.none() : yield* MailboxesRepo.use((mailboxes) => mailboxes.get(thread.companyId, thread.mailboxId!))
  const mail = yield* MailConfig
  const from = Option.match(mailbox, {
    onNone: () => mail.from,
    onSome: (box) => box.displayName === null ? box.email : `"${box.displayName.replace(/["\\]/g, "")}" <${box.email}>`
  })
  const html = body.html ?? `<p>${escapeHtml(body.text).replace(/\n/g, "<br>")}</p>`
  // Through the platform's mailer the contact's answer comes back to an issued address naming the thread
  // (MAIL_FROM's own mail may go elsewhere); a mailbox receives its answers itself.
  const { replyDomain } = yield* OutreachConfig
  const { key } = yield* TrackingSecret
  const replyTo = Option.isSome(mailbox)
    ? undefined
    : Option.getOrUndefined(Option.map(replyDomain, (domain) => replyAddressOf(key, domain, thread.companyId, thread.id)))
  const outgoing = {
    from,
    replyTo,
    to: thread.contactEmail,
    subject: replySubject(thread.subject),
    html,
    text: body.text,
    headers: threadingHeaders(messages),
    messageId: newMessageId(from)
  }
  const sent = Option.isSome(mailbox)
    ? yield* sendThroughMailbox(mailbox.value, toMailOptions(outgoing, mail.from))
    : yield* Mailer.use((mailer) => mailer.send(outgoing))
  if (sent._tag !== "Accepted") return yield* new ReplyNotSent({ message: `The mail server did not take the reply: ${sent.response}` })
  const now = yield* currentDate
  const record: MessageRecord = {
    id: newId("msg"),
    companyId: thread.companyId,
    threadId: thread.id,
    direction: "outbound",
    messageId: sent.messageId,
    fromAddress: Option.match(mailbox, { onNone: () => mail.from, onSome: (box) => box.email }),
    toAddresses: [thread.contactEmail],
    subject: outgoing.subject,
    textBody: body.text,
    htmlBody: html,
    receivedAt: now,
    automatic: false,
    classification: null
  }
  yield* repo.addMessages([{ message: record }])
  return toMessage(record)
})

const system = "You draft a reply to the last message of an e-mail conversation, for a person to review before sending. " +
  "Be brief, friendly and specific to what the contact wrote; never invent facts, prices or dates. Plain text. " +
  "Answer with the write_reply tool."

const DraftAnswer = Schema.Struct({ text: Schema.NonEmptyString })

/** What the offline model drafts: a polite acknowledgement of the contact's last message. */
const fallbackDraft = (contactName: string) =>
  `Hi ${contactName},\n\nThank you for getting back to me. I'll follow up shortly with the details.\n\nBest regards`

const draftRequest = (model: string, messages: ReadonlyArray<MessageRecord>, instructions: string | undefined, fallback: string): LlmRequest => ({
  model,
  system,
  maxTokens: 800,
  messages: [{
    role: "user",
    content: [{
      type: "text",
      text: JSON.stringify({
        instructions: instructions ?? null,
        conversation: messages.slice(-10).map((message) => ({ direction: message.direction, from: message.fromAddress, subject: message.subject, text: message.textBody.slice(0, 4_000) }))
      })
    }]
  }],
  tools: [{
    name: "write_reply",
    description: "The reply's text.",
    inputSchema: { type: "object", properties: { text: { type: "string", default: fallback } }, required: ["text"] }
  }],
  toolChoice: { type: "tool", name: "write_reply" }
})

const draftOf = (response: LlmResponse) => {
  const call = response.content.find((part) => part.type === "tool_call" && part.name === "write_reply")
  if (call !== undefined && call.type === "tool_call") return Schema.decodeUnknownOption(DraftAnswer)(call.input)
  const text = response.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("").trim()
  return text === "" ? Option.none() : Option.some({ text })
}

export const draft = Effect.fn("Replies.draft")(function*(threadId: string, body: { readonly companyId?: string | undefined; readonly instructions?: string | undefined }) {
  const principal = yield* requireCompany(body.companyId)
  const thread = yield* findThread(principal.companyId, threadId)
  const messages = yield* ThreadsRepo.use((repo) => repo.messages(thread.id))
  const model = (yield* ModelCatalog).resolve("balanced")
  if (model === undefined) return yield* new DraftFailed({ message: "No model serves the balanced tier" })
  const fallback = fallbackDraft(thread.contactEmail.split("@")[0] ?? "there")
  const response = yield* BilledLlm.generate(payerOf(principal), "campaigns", draftRequest(model.id, messages, body.instructions, fallback)).pipe(
    Effect.catchTag("LlmError", (error) => Effect.fail(new DraftFailed({ message: `The model failed: ${error.message}` })))
  )
  const answer = draftOf(response)
  if (Option.isNone(answer)) return yield* new DraftFailed({ message: "The model's answer had no text" })
  return { subject: replySubject(thread.subject), text: answer.value.text }
})

