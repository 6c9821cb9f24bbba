import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { Count, Email, IsoDate, NonEmpty, Text } from "../../platform/Schemas.ts"

export const ExecutionStatus = Schema.Literals(["draft", "approved", "sent", "failed", "skipped", "uncertain"])

/** The most steps of one sequence, executions named by one approve or regenerate call, and rows of one enrolment. */
export const maxSteps = 20
export const maxExecutionIds = 1_000
export const maxRowIds = 10_000
export const maxMailboxes = 50

export const SequenceStep = Schema.Struct({
  type: Schema.Literal("email"),
  /** Instructions for the model, or a template with merge fields (`{{firstName}}`) and spintax. */
  subject: Text(1_000),
  body: Text(20_000),
  /** Days after the previous step was sent; for the first step, after enrolment. */
  delayDays: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 365 }))
}).annotate({ identifier: "SequenceStep" })

const Steps = Schema.Array(SequenceStep).check(Schema.isMinLength(1), Schema.isMaxLength(maxSteps))

export const Sequence = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The creating user; null for a sequence made with a company API key. */
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  steps: Schema.Array(SequenceStep),
  listId: Schema.NullOr(Schema.String),
  /** A contact who replies leaves the sequence (absence notices and bounces are not replies). */
  stopOnReply: Schema.Boolean,
  /** The sender; null: `MAIL_FROM`'s name and address. */
  fromName: Schema.NullOr(Schema.String),
  fromEmail: Schema.NullOr(Schema.String),
  /** The company's mailboxes it sends through, rotating within their daily limits; empty: the platform's mailer (`fromName`/`fromEmail`). */
  mailboxIds: Schema.Array(Schema.String),
  created_date: IsoDate,
  updated_date: IsoDate
}).annotate({ identifier: "Sequence" })

const companyId = { companyId: Schema.optional(Schema.String) }

/** An address on a verified sending domain of the company, or `MAIL_FROM`'s (docs/domains.md). */
const sender = {
  fromName: Schema.optional(Schema.NullOr(NonEmpty)),
  fromEmail: Schema.optional(Schema.NullOr(Email)),
  /** Mailboxes of the company (docs/inbox.md) to send through instead; `[]` goes back to the platform's mailer. */
  mailboxIds: Schema.optional(Schema.Array(NonEmpty).check(Schema.isMaxLength(maxMailboxes)))
}

export const NewSequence = Schema.Struct({
  ...companyId,
  name: NonEmpty,
  steps: Steps,
  listId: Schema.optional(NonEmpty),
  ...sender,
  /** Default true. */
  stopOnReply: Schema.optional(Schema.Boolean)
})
  .annotate({
    examples: [{
      name: "Welcome",
      steps: [
        { type: "email", subject: "Welcome, {{firstName}}", body: "Greet {{firstName}} and offer a call.", delayDays: 0 },
        { type: "email", subject: "Following up", body: "A short, friendly reminder.", delayDays: 3 }
      ]
    }]
  })

/** Every field optional: only those supplied change. New steps apply to executions made from then on. */
export const SequencePatch = Schema.Struct({
  ...companyId,
  name: Schema.optional(NonEmpty),
  steps: Schema.optional(Steps),
  listId: Schema.optional(NonEmpty),
  stopOnReply: Schema.optional(Schema.Boolean),
  ...sender
})

/** Exactly one of `listId` (every row of that list) and `rowIds` (chosen rows of the company's lists). */
export const EnrollBody = Schema.Struct({
  ...companyId,
  listId: Schema.optional(NonEmpty),
  /** The leads a smart list matches now. */
  smartListId: Schema.optional(NonEmpty),
  rowIds: Schema.optional(Schema.Array(NonEmpty).check(Schema.isMinLength(1), Schema.isMaxLength(maxRowIds)))
})

/** Exactly one of `rowIds` (list rows) and `emails` (addresses, any case). */
export const UnenrollBody = Schema.Struct({
  ...companyId,
  rowIds: Schema.optional(Schema.Array(NonEmpty).check(Schema.isMinLength(1), Schema.isMaxLength(maxRowIds))),
  emails: Schema.optional(Schema.Array(Text(320)).check(Schema.isMinLength(1), Schema.isMaxLength(maxRowIds)))
}).annotate({ examples: [{ emails: ["ada@example.com"] }] })

export const Unenrollment = Schema.Struct({
  /** Contacts whose unsent executions of this sequence were skipped. */
  unenrolled: Count
}).annotate({ identifier: "SequenceUnenrollment" })

export const Enrollment = Schema.Struct({
  /** Contacts whose first execution was made now. */
  enrolled: Count,
  /** Contacts on the suppression list, left out. */
  suppressed: Count,
  /** Contacts already in the sequence. */
  alreadyEnrolled: Count
}).annotate({ identifier: "SequenceEnrollment" })

export const Execution = Schema.Struct({
  id: Schema.String,
  sequenceId: Schema.String,
  stepIndex: Schema.Int,
  listRowId: Schema.String,
  email: Schema.String,
  status: ExecutionStatus,
  /** False while the model has not written this draft yet. */
  drafted: Schema.Boolean,
  subject: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String),
  /** Why it failed or was skipped. */
  errorMessage: Schema.NullOr(Schema.String),
  /** Not sent before this time. */
  dueAt: IsoDate,
  approvedAt: Schema.NullOr(IsoDate),
  sentAt: Schema.NullOr(IsoDate),
  /** The mailbox that sent it; for a step not sent yet, the one the contact's previous step went through (it is kept). */
  mailboxId: Schema.NullOr(Schema.String),
  openCount: Count,
  clickCount: Count,
  firstOpenedDate: Schema.NullOr(IsoDate),
  firstClickedDate: Schema.NullOr(IsoDate),
  created_date: IsoDate,
  updated_date: IsoDate
}).annotate({ identifier: "SequenceExecution" })

export const ExecutionsQuery = Schema.Struct({ ...companyId, ...PageQuery, status: Schema.optional(ExecutionStatus) })

export const ExecutionIdsBody = Schema.Struct({
  ...companyId,
  executionIds: Schema.Array(Text(500)).check(Schema.isMaxLength(maxExecutionIds))
})

/** Regenerate also takes `includeUncertain`: uncertain executions (maybe delivered) are skipped unless it is true. */
export const RegenerateBody = Schema.Struct({ ...ExecutionIdsBody.fields, includeUncertain: Schema.optional(Schema.Boolean) })
  .annotate({ examples: [{ executionIds: ["sqx_…"] }, { executionIds: ["sqx_…"], includeUncertain: true }] })

export const Approval = Schema.Struct({ approved: Count, skipped: Count, msg: Schema.String })
  .annotate({ identifier: "SequenceApproval" })

export const Regeneration = Schema.Struct({ msg: Schema.String }).annotate({ identifier: "SequenceRegeneration" })

const sequenceId = { sequenceId: Schema.String }
const errors = [BadRequest, Forbidden, NotFound]

export class SequencesApi extends HttpApiGroup.make("sequences")
  .annotateMerge(OpenApi.annotations({
    description: "Outreach sequences: ordered e-mail steps whose executions the model drafts per contact, a person approves, and the sending worker delivers when due.",
    override: { "x-displayName": "Sequences" }
  })).add(
    HttpApiEndpoint.post("create", "/sequences", {
      payload: NewSequence,
      success: Sequence.pipe(HttpApiSchema.status(201)),
      error: errors
    }).pipe(described({
    summary: "Create a sequence",
    does: `Creates a sequence of 1–${maxSteps} e-mail steps, sent from fromEmail (or MAIL_FROM) or through up to ${maxMailboxes} of the company's mailboxes (mailboxIds), rotating within each one's dailyLimit. A listId or mailbox that is not the company's → 404; malformed spintax or merge fields in a step → 400.`,
    who: "sequences:write"
  })),
    HttpApiEndpoint.get("list", "/sequences", { query: { ...companyId, ...PageQuery }, success: Page(Sequence), error: [Forbidden] })
      .pipe(described({
    summary: "List sequences",
    does: `The company's sequences, newest first, in the generic envelope.`,
    who: "sequences:read"
  })),
    HttpApiEndpoint.get("get", "/sequences/:sequenceId", { params: sequenceId, query: companyId, success: Sequence, error: [Forbidden, NotFound] })
      .pipe(described({
    summary: "Get a sequence",
    does: `One sequence; another company's → 404.`,
    who: "sequences:read"
  })),
    HttpApiEndpoint.patch("update", "/sequences/:sequenceId", {
      params: sequenceId,
      payload: SequencePatch,
      success: Sequence,
      error: errors
    }).pipe(described({
    summary: "Change a sequence",
    does: `Changes the supplied fields; new steps apply to executions made from then on; mailboxIds [] sends through the platform's mailer again. A listId or mailbox that is not the company's → 404.`,
    who: "sequences:write"
  })),
    HttpApiEndpoint.delete("remove", "/sequences/:sequenceId", {
      params: sequenceId,
      query: companyId,
      success: Sequence,
      error: [Forbidden, NotFound]
    }).pipe(described({
      summary: "Delete a sequence",
      does: `Deletes the sequence and stops all its executions: every draft and approved execution not yet handed to the mail server becomes skipped ("The sequence was deleted"); e-mails already sent keep working tracking and unsubscribe links. Answers the deleted sequence; another company's or unknown → 404.`,
      who: "sequences:write"
    })),
    HttpApiEndpoint.post("unenroll", "/sequences/:sequenceId/unenroll", {
      params: sequenceId,
      payload: UnenrollBody,
      success: Unenrollment,
      error: errors
    }).pipe(described({
      summary: "Unenroll contacts",
      does: `Takes contacts out of this sequence, by list row (\`rowIds\`) or by address (\`emails\`, any case): their draft and approved executions not yet being sent become skipped ("The contact was unenrolled"); answers how many contacts left. Exactly one of rowIds and emails (1–${maxRowIds}) → else 400; ids or addresses not in the sequence are ignored.`,
      who: "sequences:write"
    })),
    HttpApiEndpoint.post("enroll", "/sequences/:sequenceId/enroll", {
      params: sequenceId,
      payload: EnrollBody,
      success: Enrollment,
      error: errors
    }).pipe(described({
    summary: "Enroll contacts",
    does: `Makes, per contact of a list (\`listId\`), per lead a smart list matches now (\`smartListId\`) or per chosen row (\`rowIds\`, rows of the company's lists), the first step's execution: an unapproved draft the drafting worker writes. Suppressed addresses are left out; contacts already enrolled are not enrolled twice. Exactly one of listId, smartListId and rowIds → else 400; another company's list or smart list → 404.`,
    who: "sequences:write"
  })),
    HttpApiEndpoint.get("executions", "/sequences/:sequenceId/executions", {
      params: sequenceId,
      query: ExecutionsQuery,
      success: Page(Execution),
      error: [Forbidden, NotFound]
    }).pipe(described({
    summary: "List executions",
    does: `The sequence's executions, newest first, paged, optionally of one status.`,
    who: "sequences:read"
  })),
    HttpApiEndpoint.post("approve", "/sequences/:sequenceId/executions/approve", {
      params: sequenceId,
      payload: ExecutionIdsBody,
      success: Approval,
      error: errors
    }).pipe(described({
    summary: "Approve drafts",
    does: `Approves the listed executions that are written, unapproved drafts of this sequence; the sending worker sends each when due. Others are skipped and counted. At most ${maxExecutionIds} ids → else 400.`,
    who: "sequences:write"
  })),
    HttpApiEndpoint.post("regenerate", "/sequences/:sequenceId/executions/regenerate", {
      params: sequenceId,
      payload: RegenerateBody,
      success: Regeneration,
      error: errors
    }).pipe(described({
    summary: "Regenerate failed executions",
    does: `Each listed execution that is failed in this sequence (or uncertain — maybe delivered by a process that stopped mid-send — with includeUncertain: true) becomes a fresh unapproved draft, written again by the model; the others are skipped, and \`msg\` says how many were regenerated and how many were skipped and why. Missing or non-array executionIds, non-string ids or more than ${maxExecutionIds} ids → 400; an unknown or another company's sequence → 404.`,
    who: "sequences:write"
  }))
  ).middleware(Authentication).prefix("/api/v0") {}
