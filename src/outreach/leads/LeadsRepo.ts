import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { fromColumns, readerOf, Timestamp } from "../../storage/Columns.ts"
import type { EventType } from "../../storage/Outbox.ts"
import { containing, jsonParam } from "../../storage/Rows.ts"
import { tableStatistics } from "../../storage/Statistics.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"
import { leadFields, LeadStatus } from "./Api.ts"
import { ActivityRecord, addressKey, type NewActivity, type StartedMoved, type StatusMove, timelineWrite } from "./Timeline.ts"

export const LeadRecord = Schema.Struct({
  ...leadFields,
  companyId: Schema.String,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type LeadRecord = typeof LeadRecord.Type


const LeadRow = fromColumns(LeadRecord)
const ActivityRow = fromColumns(ActivityRecord)

/** A lead's values as an upsert takes them: the address and whatever else is known (null: unknown). */
export type LeadUpsert = Omit<LeadRecord, "status" | "createdAt" | "updatedAt">

/** How an upsert treats a lead that exists: `fill` sets only what it lacks, `overwrite` takes the given values. */
export type UpsertMode = "fill" | "overwrite"


export type LeadChange = Partial<Omit<LeadRecord, "id" | "companyId" | "createdAt" | "updatedAt">>

export interface LeadFilter {
  readonly search?: string | undefined
  readonly status?: LeadStatus | undefined
  readonly tag?: string | undefined
}

/**
 * One upsert per address: repeated addresses merge as consecutive upserts would (`overwrite`: a later
 * value wins; `fill`: an earlier one stays; tags and fields join), since one statement may touch a row once.
 */
const mergeRepeated = (given: ReadonlyArray<LeadUpsert>, mode: UpsertMode): ReadonlyArray<LeadUpsert> => {
  const merged = new Map<string, LeadUpsert>()
  for (const lead of given) {
    const key = addressKey(lead.companyId, lead.email)
    const earlier = merged.get(key)
    if (earlier === undefined) {
      merged.set(key, lead)
      continue
    }
    const [base, over] = mode === "overwrite" ? [earlier, lead] : [lead, earlier]
    const pick = <K extends keyof LeadUpsert>(field: K) => over[field] ?? base[field]
    merged.set(key, {
      ...earlier,
      firstName: pick("firstName"),
      lastName: pick("lastName"),
      company: pick("company"),
      title: pick("title"),
      phone: pick("phone"),
      website: pick("website"),
      linkedinUrl: pick("linkedinUrl"),
      tags: [...new Set([...earlier.tags, ...lead.tags])],
      fields: { ...base.fields, ...over.fields }
    })
  }
  return [...merged.values()]
}

/** Rows per statement of a bulk upsert: one JSON parameter, expanded by `jsonb_to_recordset`. */
const upsertChunk = 5_000

/**
 * Leads and their timelines. Every operation is scoped by company id; an
 * address is matched ignoring case (`lower(email)`, the unique index).
 */
export class LeadsRepo extends Context.Service<LeadsRepo, {
  /** The lead; none when the company already has a lead with that address. */
  readonly create: (lead: LeadRecord) => Effect.Effect<Option.Option<LeadRecord>>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<LeadRecord>>
  readonly findByEmail: (companyId: string, email: string) => Effect.Effect<Option.Option<LeadRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    filter: LeadFilter,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<LeadRecord>; readonly total: number }>
  /**
   * Applies `change`; a new status writes a `status_changed` activity (id `activityId`) in the same
   * statement. None when there is no such lead; `conflict` when the new address is another lead's.
   */
  readonly update: (
    companyId: string,
    id: string,
    change: LeadChange,
    now: Date,
    activityId: string
  ) => Effect.Effect<Option.Option<LeadRecord | "conflict">>
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<LeadRecord>>
  /** Creates or updates the leads of these addresses (the last of repeated addresses wins); answers how many were new. */
  readonly upsert: (
    leads: ReadonlyArray<LeadUpsert>,
    mode: UpsertMode,
    now: Date
  ) => Effect.Effect<{ readonly created: number; readonly updated: number }>
  /**
   * In one transaction: fills in (or creates) the leads of `contacts`, then stores the activities
   * and status moves: each move whose lead's status is one of its `from` sets it and writes a
   * `status_changed` activity.
   */
  readonly record: (
    contacts: ReadonlyArray<LeadUpsert>,
    moves: ReadonlyArray<StatusMove>,
    activities: ReadonlyArray<NewActivity>,
    now: Date
  ) => Effect.Effect<void>
  /** A lead's timeline, newest first. */
  readonly activities: (
    companyId: string,
    leadId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<ActivityRecord>; readonly total: number }>
}>()("leads/LeadsRepo") {
  static readonly layer = Layer.effect(LeadsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const leads = readerOf(LeadRow)
    // The columns smart lists and lists filter on (docs/leads.md, "Numbers").
    const leadStatistics = tableStatistics(sql, "leads", ["company_id", "status", "tags", "fields", "created_at", "updated_at"])
    const activityStatistics = tableStatistics(sql, "lead_activities", ["company_id", "lead_id", "type", "at", "campaign_id", "sequence_id"])
    // Webhook events (src/storage/Outbox.ts) written by the statement that makes the change, as a CTE: they
    // commit with it. `rows` selects the leads concerned (id, company_id, email, and was/status for a move).
    // Only for companies with a webhook subscribed to them: an import of 100,000 leads writes no event nobody reads.
    const outboxed = (name: string, type: EventType, payload: Statement.Fragment, rows: Statement.Fragment, at: Date) =>
      sql`${sql(name)} AS (
        INSERT INTO event_outbox (id, company_id, type, payload, created_at)
        SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), company_id, ${type}, ${payload}, ${at}
        FROM (${rows}) AS concerned
        WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.company_id = concerned.company_id AND w.enabled
          AND w.events ? ${type}))`
    const createdEvents = (rows: Statement.Fragment, at: Date) =>
      outboxed("lead_created_events", "lead.created", sql`jsonb_build_object('leadId', id, 'email', email)`, rows, at)
    const statusEvents = (rows: Statement.Fragment, at: Date) =>
      outboxed(
        "lead_status_events",
        "lead.status_changed",
        sql`jsonb_build_object('leadId', id, 'email', email, 'from', was, 'to', status, 'at', ${at.toISOString()}::text)`,
        rows,
        at
      )
    const filterOf = (companyId: string, filter: LeadFilter): Statement.Fragment =>
      sql.and([
        sql`company_id = ${companyId}`,
        ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
        ...(filter.tag === undefined ? [] : [sql`tags @> ${jsonParam([filter.tag])}::jsonb`]),
        ...(filter.search === undefined || filter.search === ""
          ? []
          : [sql`search_text LIKE ${containing(filter.search.toLowerCase())}`])
      ])
    const keep = (column: string, mode: UpsertMode) =>
      mode === "fill"
        ? sql`coalesce(leads.${sql(column)}, excluded.${sql(column)})`
        : sql`coalesce(excluded.${sql(column)}, leads.${sql(column)})`
    // A fill that would change nothing leaves the row alone: events about known leads (every send) rewrite no row.
    const fillsSomething = sql.or([
      ...["first_name", "last_name", "company", "title", "phone", "website", "linkedin_url"].map((column) =>
        sql`(leads.${sql(column)} IS NULL AND excluded.${sql(column)} IS NOT NULL)`
      ),
      sql`NOT (leads.tags @> excluded.tags)`,
      sql`NOT (leads.fields @> excluded.fields)`
    ])
    /** `startAt`: by `addressKey`, the move whose status a lead created here takes instead of `new`. */
    const upsertChunkOf = (chunk: ReadonlyArray<LeadUpsert>, mode: UpsertMode, now: Date, startAt: ReadonlyMap<string, StatusMove>) =>
      sql<{ readonly id: string; readonly company_id: string; readonly email: string; readonly inserted: boolean }>`
        WITH upserted AS (
        INSERT INTO leads (id, company_id, email, first_name, last_name, company, title, phone, website, linkedin_url,
          tags, fields, status, created_at, updated_at)
        SELECT DISTINCT ON (r.company_id, lower(r.email)) r.id, r.company_id, r.email, r.first_name, r.last_name, r.company, r.title,
          r.phone, r.website, r.linkedin_url, r.tags, r.fields, r.status, ${now}, ${now}
        FROM jsonb_to_recordset(${
        jsonParam(chunk.map((lead, position) => ({
          position,
          status: startAt.get(addressKey(lead.companyId, lead.email))?.to ?? "new",
          id: lead.id,
          company_id: lead.companyId,
          email: lead.email,
          first_name: lead.firstName,
          last_name: lead.lastName,
          company: lead.company,
          title: lead.title,
          phone: lead.phone,
          website: lead.website,
          linkedin_url: lead.linkedinUrl,
          tags: lead.tags,
          fields: lead.fields
        })))
      }::jsonb) AS r(position int, status text, id text, company_id text, email text, first_name text, last_name text, company text, title text,
          phone text, website text, linkedin_url text, tags jsonb, fields jsonb)
        ORDER BY r.company_id, lower(r.email), r.position DESC
        ON CONFLICT (company_id, lower(email)) DO UPDATE SET
          first_name = ${keep("first_name", mode)}, last_name = ${keep("last_name", mode)},
          company = ${keep("company", mode)}, title = ${keep("title", mode)}, phone = ${keep("phone", mode)},
          website = ${keep("website", mode)}, linkedin_url = ${keep("linkedin_url", mode)},
          tags = (SELECT coalesce(jsonb_agg(DISTINCT t), '[]'::jsonb)
            FROM jsonb_array_elements(leads.tags || excluded.tags) AS t),
          fields = ${mode === "fill" ? sql`excluded.fields || leads.fields` : sql`leads.fields || excluded.fields`},
          updated_at = greatest(${now}::timestamptz, leads.updated_at + interval '1 millisecond')
        WHERE ${mode === "overwrite" ? sql`true` : fillsSomething}
        RETURNING id, company_id, email, (xmax = 0) AS inserted
        ), ${createdEvents(sql`SELECT id, company_id, email FROM upserted WHERE inserted`, now)}
        SELECT id, company_id, email, inserted FROM upserted`
    /** Counts, and the leads created in the status of their move in `startAt`. */
    const upsert = (repeating: ReadonlyArray<LeadUpsert>, mode: UpsertMode, now: Date, startAt: ReadonlyMap<string, StatusMove> = new Map()) =>
      Effect.gen(function*() {
        const given = mergeRepeated(repeating, mode)
        let created = 0
        let updated = 0
        const startedMoved: Array<StartedMoved> = []
        for (let start = 0; start < given.length; start += upsertChunk) {
          const rows = yield* upsertChunkOf(given.slice(start, start + upsertChunk), mode, now, startAt)
          for (const row of rows) {
            if (!row.inserted) {
              updated++
              continue
            }
            created++
            const move = startAt.get(addressKey(row.company_id, row.email))
            if (move !== undefined && move.to !== "new") startedMoved.push({ id: row.id, move })
          }
        }
        return { created, updated, startedMoved }
      })
    return {
      create: Effect.fn("LeadsRepo.create")(function*(lead) {
        return yield* leads.first(sql`
          WITH created AS (
          INSERT INTO leads (id, company_id, email, first_name, last_name, company, title, phone, website,
            linkedin_url, tags, status, fields, created_at, updated_at)
          VALUES (${lead.id}, ${lead.companyId}, ${lead.email}, ${lead.firstName}, ${lead.lastName}, ${lead.company},
            ${lead.title}, ${lead.phone}, ${lead.website}, ${lead.linkedinUrl}, ${jsonParam(lead.tags)}::jsonb,
            ${lead.status}, ${jsonParam(lead.fields)}::jsonb, ${lead.createdAt}, ${lead.updatedAt})
          ON CONFLICT (company_id, lower(email)) DO NOTHING
          RETURNING *
          ), ${createdEvents(sql`SELECT id, company_id, email FROM created`, lead.createdAt)}
          SELECT * FROM created`)
      }, Effect.orDie),
      get: Effect.fn("LeadsRepo.get")(function*(companyId, id) {
        return yield* leads.first(sql`SELECT * FROM leads WHERE company_id = ${companyId} AND id = ${id}`)
      }, Effect.orDie),
      findByEmail: Effect.fn("LeadsRepo.findByEmail")(function*(companyId, email) {
        return yield* leads.first(sql`
          SELECT * FROM leads WHERE company_id = ${companyId} AND lower(email) = lower(${email.trim()})`)
      }, Effect.orDie),
      list: Effect.fn("LeadsRepo.list")(function*(companyId, filter, window) {
        return yield* selectRecords(LeadRow, sql, "leads", filterOf(companyId, filter), window)
      }, Effect.orDie),
      update: Effect.fn("LeadsRepo.update")(function*(companyId, id, change, now, activityId) {
        const set = (column: string, value: unknown, json = false) =>
          value === undefined ? [] : [json ? sql`${sql(column)} = ${jsonParam(value)}::jsonb` : sql`${sql(column)} = ${value as string | null}`]
        const assignments = [
          ...set("email", change.email),
          ...set("first_name", change.firstName),
          ...set("last_name", change.lastName),
          ...set("company", change.company),
          ...set("title", change.title),
          ...set("phone", change.phone),
          ...set("website", change.website),
          ...set("linkedin_url", change.linkedinUrl),
          ...set("status", change.status),
          ...set("tags", change.tags, true),
          ...set("fields", change.fields, true),
          sql`updated_at = greatest(${now}::timestamptz, l.updated_at + interval '1 millisecond')`
        ]
        if (change.email !== undefined) {
          const taken = yield* sql`SELECT 1 FROM leads WHERE company_id = ${companyId} AND id <> ${id}
            AND lower(email) = lower(${change.email})`
          if (taken.length > 0) return Option.some("conflict" as const)
        }
        const updated = yield* leads.first(sql`
          WITH old AS (
            SELECT id, status FROM leads WHERE company_id = ${companyId} AND id = ${id} FOR UPDATE
          ), changed AS (
            UPDATE leads l SET ${sql.csv(assignments)} FROM old WHERE l.id = old.id
            RETURNING l.*, old.status AS was
          ), noted AS (
            INSERT INTO lead_activities (id, company_id, lead_id, type, at, detail)
            SELECT ${activityId}, company_id, id, 'status_changed', ${now},
              jsonb_build_object('from', was, 'to', status)
            FROM changed WHERE status <> was
          ), ${statusEvents(sql`SELECT id, company_id, email, was, status FROM changed WHERE status <> was`, now)}
          SELECT * FROM changed`)
        return updated
      }, (effect) => Effect.catchTag(effect, "SqlError", (error) =>
        // A concurrent change took the address between the check and the update.
        String(error.cause).includes("leads_email") ? Effect.succeed(Option.some("conflict" as const)) : Effect.die(error)),
        Effect.orDie),
      remove: Effect.fn("LeadsRepo.remove")(function*(companyId, id) {
        return yield* leads.first(sql`DELETE FROM leads WHERE company_id = ${companyId} AND id = ${id} RETURNING *`)
      }, Effect.orDie),
      upsert: Effect.fn("LeadsRepo.upsert")(function*(given, mode, now) {
        const { created, updated } = yield* upsert(given, mode, now)
        yield* leadStatistics.written(created + updated)
        return { created, updated }
      }, Effect.orDie),
      record: Effect.fn("LeadsRepo.record")(function*(contacts, moves, activities, now) {
        if (moves.length === 0 && activities.length === 0) return
        // A lead the batch creates is created in the status its move takes it to (one row write, not two);
        // its move is still recorded, as from `new`, by the timeline's statement.
        const startAt = new Map(
          moves.filter((move) => move.from.includes("new")).map((move) => [addressKey(move.companyId, move.email), move])
        )
        const counts = yield* sql.withTransaction(
          Effect.tap(upsert(contacts, "fill", now, startAt), ({ startedMoved }) =>
            timelineWrite(sql, { moves, activities, startedMoved, statusEvents: (changed) => statusEvents(changed, now) }))
        )
        yield* leadStatistics.written(counts.created + counts.updated + moves.length)
        yield* activityStatistics.written(activities.length + moves.length)
      }, Effect.orDie),
      activities: Effect.fn("LeadsRepo.activities")(function*(companyId, leadId, window) {
        const where = sql`company_id = ${companyId} AND lead_id = ${leadId}`
        const [rows, count] = yield* Effect.all([
          readerOf(ActivityRow).all(sql`SELECT * FROM lead_activities WHERE ${where}
            ORDER BY at DESC, id DESC LIMIT ${window.limit} OFFSET ${window.offset}`),
          sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM lead_activities WHERE ${where}`
        ])
        return { rows, total: Number(count[0].count) }
      }, Effect.orDie)
    }
  }))
}
