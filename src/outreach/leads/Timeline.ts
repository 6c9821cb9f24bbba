import { Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { JsonObject, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { ActivityType, type LeadStatus } from "./Api.ts"

/**
 * A lead's timeline as stored, and the statement that writes a batch of
 * events to it (activities and status moves). Part of `LeadsRepo`.
 */

/** A lead's identity within the platform: its company and address, ignoring case. */
export const addressKey = (companyId: string, email: string) => `${companyId}\u0000${email.trim().toLowerCase()}`

export const ActivityRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  leadId: Schema.String,
  type: ActivityType,
  at: Timestamp,
  campaignId: Schema.NullOr(Schema.String),
  sequenceId: Schema.NullOr(Schema.String),
  threadId: Schema.NullOr(Schema.String),
  pageId: Schema.NullOr(Schema.String),
  detail: JsonObject
})
export type ActivityRecord = typeof ActivityRecord.Type

/** One lead's status move within a batch of events: to `to`, when its status is one of `from`. */
export interface StatusMove {
  readonly companyId: string
  readonly email: string
  readonly to: LeadStatus
  readonly from: ReadonlyArray<LeadStatus>
  readonly at: Date
  /** The id of the `status_changed` activity, should the status change. */
  readonly activityId: string
  /** Joins `from` and `to` in that activity's detail (e.g. the reply that classified the lead). */
  readonly detail: Readonly<Record<string, unknown>>
}

/** An activity to store for the lead of `email` (which exists by then). */
export type NewActivity = Omit<ActivityRecord, "leadId"> & { readonly email: string }

/** A lead the batch's upsert created in the status of its move (so the move is written here as from `new`). */
export interface StartedMoved {
  readonly id: string
  readonly move: StatusMove
}

/**
 * In the caller's transaction, after the batch's leads were upserted: each move whose lead's status is one of
 * its `from` sets it, every status change (and each lead created moved) writes a `status_changed` activity
 * and its `lead.status_changed` event (`statusEvents`, a CTE over the changed rows), then the activities.
 */
export const timelineWrite = (
  sql: SqlClient.SqlClient,
  { activities, moves, startedMoved, statusEvents }: {
    readonly moves: ReadonlyArray<StatusMove>
    readonly activities: ReadonlyArray<NewActivity>
    readonly startedMoved: ReadonlyArray<StartedMoved>
    readonly statusEvents: (changed: Statement.Fragment) => Statement.Fragment
  }
) => {
  const moved = moves.map((move) => ({
    company_id: move.companyId,
    email: move.email,
    status: move.to,
    from_statuses: move.from,
    at: move.at.toISOString(),
    activity_id: move.activityId,
    detail: move.detail
  }))
  const added = activities.map((activity) => ({
    id: activity.id,
    company_id: activity.companyId,
    email: activity.email,
    type: activity.type,
    at: activity.at.toISOString(),
    campaign_id: activity.campaignId,
    sequence_id: activity.sequenceId,
    thread_id: activity.threadId,
    page_id: activity.pageId,
    detail: activity.detail
  }))
  const createdMoved = startedMoved.map(({ id, move }) => ({
    id,
    at: move.at.toISOString(),
    activity_id: move.activityId,
    detail: move.detail
  }))
  return sql`
    WITH move AS (
      SELECT DISTINCT ON (m.company_id, lower(m.email)) m.*
      FROM jsonb_to_recordset(${jsonParam(moved)}::jsonb) AS m(company_id text, email text, status text,
        from_statuses jsonb, at timestamptz, activity_id text, detail jsonb)
      ORDER BY m.company_id, lower(m.email)
    ), old AS (
      SELECT l.id, l.company_id, l.status AS was, move.status, move.at, move.activity_id, move.detail
      FROM leads l JOIN move ON l.company_id = move.company_id AND lower(l.email) = lower(move.email)
      WHERE l.status <> move.status AND move.from_statuses ? l.status
      FOR UPDATE OF l
    ), updated AS (
      UPDATE leads l SET status = old.status,
        updated_at = greatest(old.at, l.updated_at + interval '1 millisecond')
      FROM old WHERE l.id = old.id AND l.status = old.was
      RETURNING l.id, l.company_id, l.email, old.was, old.status, old.at, old.activity_id, old.detail
    ), changed AS (
      SELECT * FROM updated
      UNION ALL
      SELECT l.id, l.company_id, l.email, 'new', l.status, s.at, s.activity_id, s.detail
      FROM jsonb_to_recordset(${jsonParam(createdMoved)}::jsonb) AS s(id text, at timestamptz, activity_id text, detail jsonb)
      JOIN leads l ON l.id = s.id
    ), noted AS (
      INSERT INTO lead_activities (id, company_id, lead_id, type, at, detail)
      SELECT activity_id, company_id, id, 'status_changed', at,
        coalesce(detail, '{}'::jsonb) || jsonb_build_object('from', was, 'to', status)
      FROM changed
    ), ${statusEvents(sql`SELECT id, company_id, email, was, status FROM changed`)}
    INSERT INTO lead_activities (id, company_id, lead_id, type, at, campaign_id, sequence_id, thread_id, page_id,
      detail)
    SELECT a.id, a.company_id, l.id, a.type, a.at, a.campaign_id, a.sequence_id, a.thread_id, a.page_id,
      coalesce(a.detail, '{}'::jsonb)
    FROM jsonb_to_recordset(${jsonParam(added)}::jsonb) AS a(id text, company_id text, email text, type text,
      at timestamptz, campaign_id text, sequence_id text, thread_id text, page_id text, detail jsonb)
    JOIN leads l ON l.company_id = a.company_id AND lower(l.email) = lower(a.email)`
}
