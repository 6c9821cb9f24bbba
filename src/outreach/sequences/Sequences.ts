import { Effect, Result } from "effect"
import { EnrollRowNotFound, InvalidSequence, SequenceNotFound } from "./Errors.ts"
import { RecipientListNotFound } from "../lists/Errors.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { checkSender } from "../domains/Senders.ts"
import { MailboxNotFound } from "../inbox/Errors.ts"
import { MailboxesRepo } from "../inbox/MailboxesRepo.ts"
import { Authorized } from "../../auth/Policy.ts"
import { parse } from "../../work/content/Spintax.ts"
import { emailKey, mergeValuesOf } from "../lists/Contacts.ts"
import { type ContactRowRecord, ListsRepo } from "../lists/ListsRepo.ts"
import { asContactRow } from "../leads/Leads.ts"
import type { LeadRecord } from "../leads/LeadsRepo.ts"
import { smartListOf } from "../leads/SmartLists.ts"
import { SmartListsRepo } from "../leads/SmartListsRepo.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { EnrollBody, Enrollment, NewSequence, Sequence, SequencePatch, UnenrollBody, Unenrollment } from "./Api.ts"
import type { ExecutionRecord, SequenceRecord, SequenceStep } from "./SequenceRecords.ts"
import { SequencesRepo } from "./SequencesRepo.ts"

/**
 * Sequences and enrolment (docs/sequences.md). Enrolling makes, per contact,
 * the first step's execution; the sending worker makes each next one when
 * the previous was sent.
 */

export const toSequence = (record: SequenceRecord): typeof Sequence.Type => ({
  id: record.id,
  companyId: record.companyId,
  userId: record.userId,
  name: record.name,
  steps: record.steps,
  listId: record.listId,
  stopOnReply: record.stopOnReply,
  fromName: record.fromName,
  fromEmail: record.fromEmail,
  mailboxIds: record.mailboxIds,
  created_date: record.createdAt,
  updated_date: record.updatedAt
})

/** The company's sequence, else 404. */
export const find = (companyId: string, id: string) =>
  Effect.flatMap(
    SequencesRepo.use((repo) => repo.get(companyId, id)),
    orRefuse(() => new SequenceNotFound({ id }))
  )

const requireList = (companyId: string, listId: string) =>
  Effect.flatMap(ListsRepo.use((repo) => repo.get(companyId, listId)), orRefuse(() => new RecipientListNotFound({ id: listId })))

/** 404 for a mailbox that is not the company's. */
const checkMailboxes = (companyId: string, mailboxIds: ReadonlyArray<string> | undefined) =>
  Effect.forEach(new Set(mailboxIds), (mailboxId) =>
    Effect.flatMap(MailboxesRepo.use((repo) => repo.get(companyId, mailboxId)), orRefuse(() => new MailboxNotFound({ id: mailboxId }))), { discard: true })

/** 400 naming the step field whose spintax or merge fields are malformed. */
const checkSteps = (steps: ReadonlyArray<SequenceStep>) =>
  Effect.forEach(steps, (step, index) =>
    Effect.forEach(["subject", "body"] as const, (field) => {
      const parsed = parse(step[field])
      return Result.isFailure(parsed)
        ? Effect.fail(new InvalidSequence({
          message: `steps[${index}].${field}: ${parsed.failure.message} at line ${parsed.failure.line}, column ${parsed.failure.column}`
        }))
        : Effect.void
    }), { discard: true })

export const create = Effect.fn("Sequences.create")(function*(input: typeof NewSequence.Type) {
  const { principal } = yield* Authorized("sequences:write")
  yield* requireCompany(input.companyId)
  yield* checkSteps(input.steps)
  if (input.listId !== undefined) yield* requireList(principal.companyId, input.listId)
  yield* checkSender(principal.companyId, input.fromEmail)
  yield* checkMailboxes(principal.companyId, input.mailboxIds)
  const now = yield* currentDate
  const created = yield* SequencesRepo.use((repo) =>
    repo.create({
      id: newId("seq"),
      companyId: principal.companyId,
      organizationId: principal.organizationId,
      userId: principal.userId,
      name: input.name,
      steps: input.steps,
      listId: input.listId ?? null,
      stopOnReply: input.stopOnReply ?? true,
      fromName: input.fromName ?? null,
      fromEmail: input.fromEmail ?? null,
      mailboxIds: [...new Set(input.mailboxIds ?? [])],
      createdAt: now,
      updatedAt: now
    })
  )
  return toSequence(created)
})

export const list = Effect.fn("Sequences.list")(function*(query: { readonly companyId?: string | undefined }, request: PageRequest) {
  yield* Authorized("sequences:read")
  const principal = yield* requireCompany(query.companyId)
  const page = yield* SequencesRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(page.rows.map(toSequence), page.total, request)
})

export const get = Effect.fn("Sequences.get")(function*(id: string, query: { readonly companyId?: string | undefined }) {
  yield* Authorized("sequences:read")
  const principal = yield* requireCompany(query.companyId)
  return toSequence(yield* find(principal.companyId, id))
})

export const update = Effect.fn("Sequences.update")(function*(id: string, patch: typeof SequencePatch.Type) {
  yield* Authorized("sequences:write")
  const principal = yield* requireCompany(patch.companyId)
  const sequence = yield* find(principal.companyId, id)
  if (patch.steps !== undefined) yield* checkSteps(patch.steps)
  if (patch.listId !== undefined) yield* requireList(principal.companyId, patch.listId)
  yield* checkSender(principal.companyId, patch.fromEmail)
  yield* checkMailboxes(principal.companyId, patch.mailboxIds)
  const { companyId: _, ...given } = patch
  const change = { ...given, mailboxIds: given.mailboxIds === undefined ? undefined : [...new Set(given.mailboxIds)] }
  if (Object.values(change).every((value) => value === undefined)) return toSequence(sequence)
  const now = yield* currentDate
  const updated = yield* SequencesRepo.use((repo) => repo.update(principal.companyId, id, change, now))
  return toSequence(yield* orRefuse(() => new SequenceNotFound({ id }))(updated))
})

export const remove = Effect.fn("Sequences.remove")(function*(id: string, query: { readonly companyId?: string | undefined }) {
  yield* Authorized("sequences:write")
  const principal = yield* requireCompany(query.companyId)
  const now = yield* currentDate
  const removed = yield* SequencesRepo.use((repo) => repo.remove(principal.companyId, id, now))
  return toSequence(yield* orRefuse(() => new SequenceNotFound({ id }))(removed))
})

export const unenroll = Effect.fn("Sequences.unenroll")(function*(id: string, body: typeof UnenrollBody.Type) {
  yield* Authorized("sequences:write")
  const principal = yield* requireCompany(body.companyId)
  yield* find(principal.companyId, id)
  const contacts = body.rowIds !== undefined && body.emails === undefined
    ? { rowIds: body.rowIds }
    : body.emails !== undefined && body.rowIds === undefined
    ? { emails: body.emails }
    : undefined
  if (contacts === undefined) return yield* new InvalidSequence({ message: "Give exactly one of rowIds and emails" })
  const now = yield* currentDate
  const unenrolled = yield* SequencesRepo.use((repo) => repo.unenroll(id, contacts, now))
  return { unenrolled } satisfies typeof Unenrollment.Type
})

const dayMs = 86_400_000

/** The execution of step `stepIndex` of `sequence` for a contact, due `delayDays` after `from`. */
export const executionFor = (
  sequence: SequenceRecord,
  stepIndex: number,
  contact: {
    readonly listRowId: string
    readonly email: string
    readonly fields: Readonly<Record<string, string>>
    /** The mailbox the contact's previous step went through: the next one keeps to it. */
    readonly mailboxId?: string | null
  },
  from: Date,
  now: Date
): ExecutionRecord => ({
  id: newId("sqx"),
  sequenceId: sequence.id,
  companyId: sequence.companyId,
  organizationId: sequence.organizationId,
  listRowId: contact.listRowId,
  email: contact.email,
  fields: contact.fields,
  stepIndex,
  status: "draft",
  subject: null,
  body: null,
  errorMessage: null,
  dueAt: new Date(from.getTime() + sequence.steps[stepIndex].delayDays * dayMs),
  attempts: 0,
  draftedAt: null,
  approvedAt: null,
  sendStartedAt: null,
  sentAt: null,
  messageId: null,
  mailboxId: contact.mailboxId ?? null,
  openCount: 0,
  clickCount: 0,
  firstOpenedAt: null,
  firstClickedAt: null,
  createdAt: now,
  updatedAt: now
})

/** Rows read and enrolled per round of a list enrolment. */
const enrollBatch = 1_000

export const enroll = Effect.fn("Sequences.enroll")(function*(id: string, body: typeof EnrollBody.Type) {
  yield* Authorized("sequences:write")
  const principal = yield* requireCompany(body.companyId)
  const sequence = yield* find(principal.companyId, id)
  if ([body.listId, body.smartListId, body.rowIds].filter((given) => given !== undefined).length !== 1) {
    return yield* new InvalidSequence({ message: "Give exactly one of listId, smartListId and rowIds" })
  }
  const suppressions = yield* Suppressions
  const repo = yield* SequencesRepo
  const lists = yield* ListsRepo
  const result = { enrolled: 0, suppressed: 0, alreadyEnrolled: 0 }
  const enrollRows = (rows: ReadonlyArray<ContactRowRecord>) =>
    Effect.gen(function*() {
      const suppressed = yield* suppressions.suppressedAmong(principal.companyId, rows.map((row) => row.email))
      const now = yield* currentDate
      const executions = rows
        .filter((row) => !suppressed.has(emailKey(row.email)))
        .map((row) => executionFor(sequence, 0, { listRowId: row.id, email: row.email, fields: mergeValuesOf(row) }, now, now))
      const added = yield* repo.enroll(executions)
      result.enrolled += added
      result.suppressed += rows.length - executions.length
      result.alreadyEnrolled += executions.length - added
    })
  if (body.rowIds !== undefined) {
    const rows = yield* lists.rowsByIds(principal.companyId, [...new Set(body.rowIds)])
    if (rows.length < new Set(body.rowIds).size) {
      const known = new Set(rows.map((row) => row.id))
      const missing = body.rowIds.find((rowId) => !known.has(rowId))
      return yield* new EnrollRowNotFound({ id: String(missing) })
    }
    yield* enrollRows(rows)
  } else if (body.smartListId !== undefined) {
    const smartListId = body.smartListId
    const { filter } = yield* smartListOf(principal.companyId, smartListId)
    const now = yield* currentDate
    const smartLists = yield* SmartListsRepo
    let after: string | null = null
    while (true) {
      const leads: ReadonlyArray<LeadRecord> = yield* smartLists.leadsAfter(principal.companyId, filter, now, after, enrollBatch)
      if (leads.length === 0) break
      yield* enrollRows(leads.map((lead) => ({ ...asContactRow(lead), listId: smartListId })))
      after = leads[leads.length - 1].id
    }
  } else if (body.listId !== undefined) {
    const listId = body.listId
    yield* requireList(principal.companyId, listId)
    let after: string | null = null
    while (true) {
      const rows: ReadonlyArray<ContactRowRecord> = yield* lists.rowsAfter(principal.companyId, listId, after, enrollBatch)
      if (rows.length === 0) break
      yield* enrollRows(rows)
      after = rows[rows.length - 1].id
    }
  }
  return result satisfies typeof Enrollment.Type
})

