import { Effect, type Schema } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { pageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { InboxMessage, Thread, ThreadPatch, ThreadsQuery } from "./Api.ts"
import { ThreadNotFound } from "./Errors.ts"
import { type MessageRecord, type ThreadRecord, ThreadsRepo } from "./ThreadsRepo.ts"

export const toThread = (record: ThreadRecord): typeof Thread.Type => ({
  id: record.id,
  companyId: record.companyId,
  mailboxId: record.mailboxId,
  subject: record.subject,
  contactEmail: record.contactEmail,
  status: record.status,
  classification: record.classification,
  unread: record.unread,
  leadId: record.leadId,
  campaignId: record.campaignId,
  campaignRecipientId: record.campaignRecipientId,
  sequenceId: record.sequenceId,
  sequenceExecutionId: record.sequenceExecutionId,
  messageCount: record.messageCount,
  lastMessageAt: record.lastMessageAt,
  created_date: record.createdAt,
  updated_date: record.updatedAt
})

export const toMessage = (record: MessageRecord): typeof InboxMessage.Type => ({
  id: record.id,
  direction: record.direction,
  from: record.fromAddress,
  to: record.toAddresses,
  subject: record.subject,
  text: record.textBody,
  html: record.htmlBody,
  receivedAt: record.receivedAt,
  messageId: record.messageId,
  classification: record.classification
})

/** The company's thread `id`, or `ThreadNotFound`. */
export const findThread = (companyId: string, id: string) =>
  Effect.flatMap(ThreadsRepo.use((repo) => repo.get(companyId, id)), orRefuse(() => new ThreadNotFound({ id })))

export const list = Effect.fn("Threads.list")(function*(query: Schema.Struct.Type<typeof ThreadsQuery>) {
  const principal = yield* requireCompany(query.companyId)
  const request = pageRequest(query)
  const filter = {
    status: query.status,
    classification: query.classification,
    leadId: query.leadId,
    mailboxId: query.mailboxId,
    unread: query.unread === undefined ? undefined : query.unread === "true"
  }
  const page = yield* ThreadsRepo.use((repo) => repo.list(principal.companyId, filter, windowOf(request)))
  return toPage(page.rows.map(toThread), page.total, request)
})

export const get = Effect.fn("Threads.get")(function*(id: string, query: { readonly companyId?: string | undefined }) {
  const principal = yield* requireCompany(query.companyId)
  const thread = yield* findThread(principal.companyId, id)
  const messages = yield* ThreadsRepo.use((repo) => repo.messages(thread.id))
  return { ...toThread(thread), messages: messages.map(toMessage) }
})

export const update = Effect.fn("Threads.update")(function*(id: string, patch: typeof ThreadPatch.Type) {
  const principal = yield* requireCompany(patch.companyId)
  const now = yield* currentDate
  const change = { status: patch.status, unread: patch.read === undefined ? undefined : !patch.read }
  const updated = yield* ThreadsRepo.use((repo) => repo.update(principal.companyId, id, change, now))
  return toThread(yield* orRefuse(() => new ThreadNotFound({ id }))(updated))
})
