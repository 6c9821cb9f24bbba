import { Context, Effect, Layer, Schedule, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { createHmac, randomBytes } from "node:crypto"
import { InstallationSecrets } from "../../platform/Secrets.ts"
import { fromColumns, NumberColumn } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"

/**
 * Views, distinct visitors and submissions of landing pages per UTC day.
 *
 * A visitor is an HMAC of its address and user agent under a salt derived
 * from an installation secret and the day: the same visitor counts once a
 * day, hashes of two days cannot be linked, and no address is stored.
 *
 * Views are counted in memory and written every `flushMillis` (and when the
 * process stops, and before statistics are read) in one statement for all
 * pages, so that serving a page costs no database write; a crash loses at
 * most the last interval's views. A view only notes its visitor; each
 * distinct visitor of the interval is hashed once, when it is written.
 * Submissions are written with the lead, in its transaction.
 */

const flushMillis = 1_000

export const DayRecord = Schema.Struct({
  day: Schema.String,
  views: NumberColumn,
  uniqueVisitors: NumberColumn,
  submissions: NumberColumn
})
export type DayRecord = typeof DayRecord.Type

/** The UTC day of `at`, `YYYY-MM-DD`. */
export const dayOf = (at: Date) => at.toISOString().slice(0, 10)

/**
 * The visitor as noted until the next write: address and user agent, cut to
 * lengths no real one reaches, so a client sending huge headers cannot make a
 * second's notes large.
 */
const visitorNote = (address: string, userAgent: string) => `${address.slice(0, 100)}\n${userAgent.slice(0, 1_000)}`

export class PageTraffic extends Context.Service<PageTraffic, {
  /** Counts a view of the page by the visitor at `address` with `userAgent`, on the day of `at`. */
  readonly viewed: (pageId: string, address: string, userAgent: string, at: Date) => Effect.Effect<void>
  /** Counts a submission (in the caller's transaction). */
  readonly submitted: (pageId: string, at: Date) => Effect.Effect<void>
  /** Writes the views counted so far. */
  readonly flush: Effect.Effect<void>
  /** The page's days from `from` to `to` (inclusive, `YYYY-MM-DD`) that have any traffic, oldest first. */
  readonly days: (pageId: string, from: string, to: string) => Effect.Effect<ReadonlyArray<DayRecord>>
}>()("pages/PageTraffic") {
  static readonly layer = Layer.effect(PageTraffic, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Read on first use: the layer is built before the migrations have run.
    const secrets = yield* InstallationSecrets
    const secret = yield* Effect.cached(secrets.getOrCreate("landing-page-visitors", randomBytes(32).toString("base64url")))
    const salts = new Map<string, Buffer>()
    const saltOf = (day: string) =>
      Effect.map(secret, (key) => {
        let salt = salts.get(day)
        if (salt === undefined) {
          salts.clear()
          salt = createHmac("sha256", key).update(`visitors:${day}`).digest()
          salts.set(day, salt)
        }
        return salt
      })
    let pending = new Map<string, { readonly pageId: string; readonly day: string; views: number; readonly visitors: Set<string> }>()
    /** The day of `at`, worked out once a day rather than per view. */
    let today = { from: 0, until: 0, day: "" }
    const dayAt = (at: Date) => {
      const millis = at.getTime()
      if (millis < today.from || millis >= today.until) {
        const from = millis - (millis % 86_400_000)
        today = { from, until: from + 86_400_000, day: dayOf(at) }
      }
      return today.day
    }

    const write = (rows: ReadonlyArray<{ readonly page_id: string; readonly day: string; readonly views: number; readonly visitors: ReadonlyArray<string> }>) =>
      sql`
        WITH input AS (
          SELECT i.* FROM jsonb_to_recordset(${jsonParam(rows)}::jsonb) AS i(page_id text, day date, views int, visitors jsonb)
          WHERE EXISTS (SELECT 1 FROM landing_pages p WHERE p.id = i.page_id)
        ), new_visitors AS (
          INSERT INTO landing_page_visitors (page_id, day, visitor)
          SELECT i.page_id, i.day, v FROM input i CROSS JOIN jsonb_array_elements_text(i.visitors) AS v
          ON CONFLICT DO NOTHING
          RETURNING page_id, day
        )
        INSERT INTO landing_page_days AS d (page_id, day, views, unique_visitors)
        SELECT i.page_id, i.day, i.views, (SELECT count(*) FROM new_visitors n WHERE n.page_id = i.page_id AND n.day = i.day)
        FROM input i
        ON CONFLICT (page_id, day) DO UPDATE SET
          views = d.views + excluded.views,
          unique_visitors = d.unique_visitors + excluded.unique_visitors`

    const flush = Effect.suspend(() => {
      if (pending.size === 0) return Effect.void
      const entries = [...pending.values()]
      pending = new Map()
      return Effect.forEach(entries, (entry) =>
        Effect.map(saltOf(entry.day), (salt) => ({
          page_id: entry.pageId,
          day: entry.day,
          views: entry.views,
          visitors: Array.from(entry.visitors, (visitor) => createHmac("sha256", salt).update(visitor).digest("base64url").slice(0, 22))
        }))).pipe(
          Effect.flatMap(write),
          Effect.asVoid,
          Effect.catchCause((cause) => Effect.logWarning("Landing page views could not be written", cause))
        )
    })

    yield* Effect.forkScoped(Effect.repeat(flush, Schedule.spaced(flushMillis)))
    yield* Effect.addFinalizer(() => flush)

    const days = SqlSchema.findAll({
      Request: Schema.Struct({ pageId: Schema.String, from: Schema.String, to: Schema.String }),
      Result: fromColumns(DayRecord),
      execute: ({ pageId, from, to }) =>
        sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, views, unique_visitors, submissions FROM landing_page_days
          WHERE page_id = ${pageId} AND day BETWEEN ${from}::date AND ${to}::date ORDER BY day`
    })

    return {
      viewed: (pageId, address, userAgent, at) =>
        Effect.sync(() => {
          const day = dayAt(at)
          const key = `${pageId}/${day}`
          let entry = pending.get(key)
          if (entry === undefined) {
            entry = { pageId, day, views: 0, visitors: new Set() }
            pending.set(key, entry)
          }
          entry.views += 1
          entry.visitors.add(visitorNote(address, userAgent))
        }),
      submitted: (pageId, at) =>
        sql`INSERT INTO landing_page_days AS d (page_id, day, submissions) VALUES (${pageId}, ${dayOf(at)}::date, 1)
          ON CONFLICT (page_id, day) DO UPDATE SET submissions = d.submissions + 1`.pipe(Effect.asVoid, Effect.orDie),
      flush,
      days: (pageId, from, to) => Effect.orDie(days({ pageId, from, to }))
    }
  })).pipe(Layer.provide(InstallationSecrets.layer))
}
