import { Schema } from "effect"
import { fromColumns } from "../../storage/Columns.ts"

/** Sequences and their executions as stored, and what the workers claim and record (src/outreach/sequences/SequencesRepo.ts). */

export const SequenceStep = Schema.Struct({
  type: Schema.Literal("email"),
  /** Instructions for the model, or a template with merge fields. */
  subject: Schema.String,
  body: Schema.String,
  /** Days after the previous step was sent (for the first step: after enrolment). */
  delayDays: Schema.Number
})
export type SequenceStep = typeof SequenceStep.Type

export const SequenceRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** Who pays for drafting. */
  organizationId: Schema.String,
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  steps: Schema.Array(SequenceStep),
  listId: Schema.NullOr(Schema.String),
  /** A contact who replies leaves the sequence (the inbox hears the reply). */
  stopOnReply: Schema.Boolean,
  /** The sender's name and address; null: `MAIL_FROM`'s. */
  fromName: Schema.NullOr(Schema.String),
  fromEmail: Schema.NullOr(Schema.String),
  /** The company's mailboxes it sends through, rotating within their daily limits; empty: the platform's mailer. */
  mailboxIds: Schema.Array(Schema.String),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type SequenceRecord = typeof SequenceRecord.Type
export const decodeSequences = Schema.decodeUnknownEffect(Schema.Array(fromColumns(SequenceRecord)))

export interface SequenceChange {
  readonly name?: string | undefined
  readonly steps?: ReadonlyArray<SequenceStep> | undefined
  readonly listId?: string | undefined
  readonly stopOnReply?: boolean | undefined
  /** Null clears it. */
  readonly fromName?: string | null | undefined
  readonly fromEmail?: string | null | undefined
  readonly mailboxIds?: ReadonlyArray<string> | undefined
}

export const ExecutionStatus = Schema.Literals(["draft", "approved", "sent", "failed", "skipped", "uncertain"])
export type ExecutionStatus = typeof ExecutionStatus.Type

export const ExecutionRecord = Schema.Struct({
  id: Schema.String,
  sequenceId: Schema.String,
  companyId: Schema.String,
  organizationId: Schema.String,
  listRowId: Schema.String,
  email: Schema.String,
  /** The contact's merge fields, copied at enrolment. */
  fields: Schema.Record(Schema.String, Schema.String),
  stepIndex: Schema.Number,
  status: ExecutionStatus,
  subject: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String),
  errorMessage: Schema.NullOr(Schema.String),
  /** Not sent before this time. */
  dueAt: Schema.Date,
  /** Temporary SMTP failures so far. */
  attempts: Schema.Number,
  /** When the model wrote the current draft; null while it has not. */
  draftedAt: Schema.NullOr(Schema.Date),
  approvedAt: Schema.NullOr(Schema.Date),
  sendStartedAt: Schema.NullOr(Schema.Date),
  sentAt: Schema.NullOr(Schema.Date),
  messageId: Schema.NullOr(Schema.String),
  /** The mailbox that sent it, or (for a step not sent yet) the one that sent the contact's previous step. */
  mailboxId: Schema.NullOr(Schema.String),
  openCount: Schema.Number,
  clickCount: Schema.Number,
  firstOpenedAt: Schema.NullOr(Schema.Date),
  firstClickedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type ExecutionRecord = typeof ExecutionRecord.Type
export const decodeExecutions = Schema.decodeUnknownEffect(Schema.Array(fromColumns(ExecutionRecord)))

/** Executions claimed by one worker poll under one lease token. */
export interface ExecutionClaim {
  readonly token: string
  readonly executions: ReadonlyArray<ExecutionRecord>
}

export type DraftOutcome =
  | { readonly _tag: "Drafted"; readonly subject: string; readonly body: string }
  | { readonly _tag: "Failed"; readonly error: string }

export type SendResult =
  | { readonly _tag: "Sent"; readonly messageId: string; readonly next: ExecutionRecord | undefined }
  | { readonly _tag: "Retry"; readonly at: Date; readonly error: string }
  | { readonly _tag: "Failed"; readonly error: string }
