import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { Count, Email, IsoDate, NonBlankText, NonEmpty, Text } from "../../platform/Schemas.ts"

export const MailboxStatus = Schema.Literals(["connecting", "ok", "error"])
export const ThreadStatus = Schema.Literals(["open", "archived"])
export const Classification = Schema.Literals(["interested", "not_interested", "out_of_office", "unsubscribe", "bounce", "other"])
export type Classification = typeof Classification.Type

/** A host name or an IP literal (IPv6 in brackets or bare). */
const Host = Schema.String.check(
  Schema.isPattern(/^(\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+|[A-Za-z0-9]([A-Za-z0-9-]{0,62}\.?)*)$/, {
    description: "a host name or IP address",
    message: "must be a host name or IP address"
  }),
  Schema.isMaxLength(253)
)

const Port = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65_535 }))

/** How to reach one of the mailbox's servers, as shown: never the password. */
export const ServerSettings = Schema.Struct({ host: Schema.String, port: Port, secure: Schema.Boolean, user: Schema.String })
  .annotate({ identifier: "MailServerSettings" })

const NewServerSettings = Schema.Struct({ host: Host, port: Port, secure: Schema.Boolean, user: NonEmpty, password: NonBlankText(1_000) })

export const Mailbox = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  email: Schema.String,
  displayName: Schema.NullOr(Schema.String),
  imap: ServerSettings,
  smtp: ServerSettings,
  dailyLimit: Schema.NullOr(Schema.Int),
  status: MailboxStatus,
  lastError: Schema.NullOr(Schema.String),
  created_date: IsoDate,
  updated_date: IsoDate
}).annotate({ identifier: "Mailbox" })

const companyId = { companyId: Schema.optional(Schema.String) }
const DailyLimit = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000 }))

export const NewMailbox = Schema.Struct({
  ...companyId,
  email: Email,
  displayName: Schema.optional(NonEmpty),
  imap: NewServerSettings,
  smtp: NewServerSettings,
  dailyLimit: Schema.optional(DailyLimit)
}).annotate({
  examples: [{
    email: "sales@example.com",
    displayName: "Sales",
    imap: { host: "imap.example.com", port: 993, secure: true, user: "sales@example.com", password: "app-password" },
    smtp: { host: "smtp.example.com", port: 465, secure: true, user: "sales@example.com", password: "app-password" },
    dailyLimit: 50
  }]
})

/** Only the fields given change; a server's settings are replaced whole (password included). */
export const MailboxPatch = Schema.Struct({
  ...companyId,
  displayName: Schema.optional(Schema.NullOr(NonEmpty)),
  imap: Schema.optional(NewServerSettings),
  smtp: Schema.optional(NewServerSettings),
  dailyLimit: Schema.optional(Schema.NullOr(DailyLimit))
})

export const InboxMessage = Schema.Struct({
  id: Schema.String,
  direction: Schema.Literals(["inbound", "outbound"]),
  from: Schema.String,
  to: Schema.Array(Schema.String),
  subject: Schema.String,
  text: Schema.String,
  html: Schema.NullOr(Schema.String),
  receivedAt: IsoDate,
  messageId: Schema.String,
  /** An inbound reply's class; null for what we sent. */
  classification: Schema.NullOr(Classification)
}).annotate({ identifier: "InboxMessage" })

const threadFields = {
  id: Schema.String,
  companyId: Schema.String,
  mailboxId: Schema.NullOr(Schema.String),
  subject: Schema.String,
  contactEmail: Schema.String,
  status: ThreadStatus,
  classification: Schema.NullOr(Classification),
  unread: Schema.Boolean,
  leadId: Schema.NullOr(Schema.String),
  campaignId: Schema.NullOr(Schema.String),
  campaignRecipientId: Schema.NullOr(Schema.String),
  sequenceId: Schema.NullOr(Schema.String),
  sequenceExecutionId: Schema.NullOr(Schema.String),
  messageCount: Count,
  lastMessageAt: IsoDate,
  created_date: IsoDate,
  updated_date: IsoDate
}

export const Thread = Schema.Struct(threadFields).annotate({ identifier: "InboxThread" })
export const ThreadWithMessages = Schema.Struct({ ...threadFields, messages: Schema.Array(InboxMessage) })
  .annotate({ identifier: "InboxThreadWithMessages" })

export const ThreadsQuery = {
  ...companyId,
  ...PageQuery,
  status: Schema.optional(ThreadStatus),
  classification: Schema.optional(Classification),
  leadId: Schema.optional(NonEmpty),
  mailboxId: Schema.optional(NonEmpty),
  unread: Schema.optional(Schema.Literals(["true", "false"]))
}

export const ThreadPatch = Schema.Struct({ ...companyId, status: Schema.optional(ThreadStatus), read: Schema.optional(Schema.Boolean) })

export const ReplyBody = Schema.Struct({ ...companyId, text: NonBlankText(100_000), html: Schema.optional(Text(500_000)) })

export const Draft = Schema.Struct({ subject: Schema.String, text: Schema.String }).annotate({ identifier: "InboxDraft" })

const mailboxId = { mailboxId: Schema.String }
const threadId = { threadId: Schema.String }

export class InboxApi extends HttpApiGroup.make("inbox")
  .annotateMerge(OpenApi.annotations({
    description: "The inbox: the company's mailboxes, the replies and bounces its outreach receives, classified and threaded, and answers to them.",
    override: { "x-displayName": "Inbox" }
  })).add(
    HttpApiEndpoint.post("createMailbox", "/inbox/mailboxes", {
      payload: NewMailbox,
      success: Mailbox.pipe(HttpApiSchema.status(201)),
      error: [BadRequest, Forbidden, NotFound]
    }).pipe(described({
      summary: "Connect a mailbox",
      does: "Adds a mailbox (its IMAP and SMTP settings; passwords are sealed at rest and never shown again). Only its fields are checked: a host that is an internal address not allowed by OUTBOUND_ALLOWED_HOSTS → 400. The poller then connects and shows its state in `status`. The same address twice in a company → 400.",
      who: "campaigns:write"
    })),
    HttpApiEndpoint.get("listMailboxes", "/inbox/mailboxes", { query: { ...companyId, ...PageQuery }, success: Page(Mailbox), error: [BadRequest, Forbidden] })
      .pipe(described({ summary: "List mailboxes", does: "The company's mailboxes, newest first.", who: "campaigns:read" })),
    HttpApiEndpoint.get("getMailbox", "/inbox/mailboxes/:mailboxId", { params: mailboxId, query: companyId, success: Mailbox, error: [Forbidden, NotFound] })
      .pipe(described({ summary: "Get a mailbox", does: "One mailbox with its poller's state; another company's → 404.", who: "campaigns:read" })),
    HttpApiEndpoint.patch("updateMailbox", "/inbox/mailboxes/:mailboxId", {
      params: mailboxId,
      payload: MailboxPatch,
      success: Mailbox,
      error: [BadRequest, Forbidden, NotFound]
    }).pipe(described({
      summary: "Change a mailbox",
      does: "Changes the fields given; new server settings replace the old whole (password included) and the poller reconnects.",
      who: "campaigns:write"
    })),
    HttpApiEndpoint.delete("deleteMailbox", "/inbox/mailboxes/:mailboxId", { params: mailboxId, query: companyId, success: Mailbox, error: [Forbidden, NotFound] })
      .pipe(described({ summary: "Remove a mailbox", does: "Stops polling it and removes it; its threads stay.", who: "campaigns:write" })),
    HttpApiEndpoint.get("listThreads", "/inbox/threads", { query: ThreadsQuery, success: Page(Thread), error: [BadRequest, Forbidden] })
      .pipe(described({
        summary: "List threads",
        does: "The company's conversations, latest message first, filtered by status, classification, lead, mailbox or unread.",
        who: "campaigns:read"
      })),
    HttpApiEndpoint.get("getThread", "/inbox/threads/:threadId", { params: threadId, query: companyId, success: ThreadWithMessages, error: [Forbidden, NotFound] })
      .pipe(described({ summary: "Read a thread", does: "A thread with its messages, oldest first.", who: "campaigns:read" })),
    HttpApiEndpoint.patch("updateThread", "/inbox/threads/:threadId", {
      params: threadId,
      payload: ThreadPatch,
      success: Thread,
      error: [BadRequest, Forbidden, NotFound]
    }).pipe(described({ summary: "Archive or mark a thread", does: "Sets its status (open, archived) and whether it is read.", who: "campaigns:write" })),
    HttpApiEndpoint.post("reply", "/inbox/threads/:threadId/reply", {
      params: threadId,
      payload: ReplyBody,
      success: InboxMessage.pipe(HttpApiSchema.status(201)),
      error: [BadRequest, Forbidden, NotFound]
    }).pipe(described({
      summary: "Answer a thread",
      does: "Sends the reply to the thread's contact with In-Reply-To and References set, through the thread's mailbox's SMTP server, else through the platform's mailer; answers the message sent. A contact on the suppression list → 400.",
      who: "campaigns:write"
    })),
    HttpApiEndpoint.post("draft", "/inbox/threads/:threadId/draft", {
      params: threadId,
      payload: Schema.Struct({ ...companyId, instructions: Schema.optional(Text(2_000)) }),
      success: Draft,
      error: [BadRequest, Forbidden, NotFound]
    }).pipe(described({
      summary: "Draft an answer",
      does: "The model writes an answer to the thread (billed under campaigns); nothing is sent.",
      who: "campaigns:write"
    }))
  ).middleware(Authentication).prefix("/api/v0") {}
