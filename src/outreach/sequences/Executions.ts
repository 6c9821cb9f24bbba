import { Effect } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { pageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { Approval, Execution, ExecutionIdsBody, ExecutionsQuery, RegenerateBody, Regeneration } from "./Api.ts"
import { find } from "./Sequences.ts"
import type { ExecutionRecord } from "./SequenceRecords.ts"
import { SequencesRepo } from "./SequencesRepo.ts"

/** Listing, approving and regenerating a sequence's executions (docs/sequences.md). */

export const toExecution = (record: ExecutionRecord): typeof Execution.Type => ({
  id: record.id,
  sequenceId: record.sequenceId,
  stepIndex: record.stepIndex,
  listRowId: record.listRowId,
  email: record.email,
  status: record.status,
  drafted: record.draftedAt !== null,
  subject: record.subject,
  body: record.body,
  errorMessage: record.errorMessage,
  dueAt: record.dueAt,
  approvedAt: record.approvedAt,
  sentAt: record.sentAt,
  mailboxId: record.mailboxId,
  openCount: record.openCount,
  clickCount: record.clickCount,
  firstOpenedDate: record.firstOpenedAt,
  firstClickedDate: record.firstClickedAt,
  created_date: record.createdAt,
  updated_date: record.updatedAt
})

export const list = Effect.fn("Executions.list")(function*(sequenceId: string, query: typeof ExecutionsQuery.Type) {
  yield* Authorized("sequences:read")
  const principal = yield* requireCompany(query.companyId)
  yield* find(principal.companyId, sequenceId)
  const request = pageRequest(query)
  const page = yield* SequencesRepo.use((repo) => repo.executions(sequenceId, query.status, windowOf(request)))
  return toPage(page.rows.map(toExecution), page.total, request)
})

const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? "" : "s"}`

/** "skipped N (a not in this sequence, b not failed)": why each id left out was left out. */
const skippedText = (ids: ReadonlyArray<string>, found: ReadonlyArray<ExecutionRecord>, done: ReadonlyArray<string>, notEligible: string) => {
  const unique = new Set(ids)
  const skipped = unique.size - done.length
  if (skipped === 0) return { skipped, text: "skipped 0" }
  const reasons = [
    [unique.size - found.length, "not an execution of this sequence"],
    [found.length - done.length, notEligible]
  ] as const
  const why = reasons.filter(([count]) => count > 0).map(([count, reason]) => `${count} ${reason}`).join(", ")
  return { skipped, text: `skipped ${skipped} (${why})` }
}

/** The sequence (404 otherwise), the unique listed executions found in it, and the ids `change` moved. */
const changeListed = (
  sequenceId: string,
  body: typeof ExecutionIdsBody.Type,
  change: (ids: ReadonlyArray<string>, now: Date) => Effect.Effect<ReadonlyArray<string>, never, SequencesRepo>
) =>
  Effect.gen(function*() {
    yield* Authorized("sequences:write")
    const principal = yield* requireCompany(body.companyId)
    yield* find(principal.companyId, sequenceId)
    const ids = [...new Set(body.executionIds)]
    const found = yield* SequencesRepo.use((repo) => repo.executionsByIds(sequenceId, ids))
    const done = yield* change(found.map((execution) => execution.id), yield* currentDate)
    return { ids, found, done }
  })

export const approve = Effect.fn("Executions.approve")(function*(sequenceId: string, body: typeof ExecutionIdsBody.Type) {
  const { ids, found, done } = yield* changeListed(sequenceId, body, (ids, now) =>
    SequencesRepo.use((repo) => repo.approve(sequenceId, ids, now)))
  const { skipped, text } = skippedText(ids, found, done, "not a written, unapproved draft")
  return { approved: done.length, skipped, msg: `Approved ${plural(done.length, "execution")}; ${text}.` } satisfies typeof Approval.Type
})

export const regenerate = Effect.fn("Executions.regenerate")(function*(sequenceId: string, body: typeof RegenerateBody.Type) {
  const includeUncertain = body.includeUncertain === true
  const { ids, found, done } = yield* changeListed(sequenceId, body, (ids, now) =>
    SequencesRepo.use((repo) => repo.regenerate(sequenceId, ids, includeUncertain, now)))
  const { text } = skippedText(ids, found, done, includeUncertain ? "not failed nor uncertain" : "not failed")
  return { msg: `Regenerated ${plural(done.length, "execution")} as unapproved drafts; ${text}.` } satisfies typeof Regeneration.Type
})
