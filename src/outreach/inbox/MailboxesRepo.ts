import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { leasedClaim } from "../../storage/LeasedClaim.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

/** One server of a mailbox as stored: the password apart, sealed. */
export const ServerRecord = Schema.Struct({ host: Schema.String, port: Schema.Number, secure: Schema.Boolean, user: Schema.String })
export type ServerRecord = typeof ServerRecord.Type

export const MailboxRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  email: Schema.String,
  emailKey: Schema.String,
  displayName: Schema.NullOr(Schema.String),
  imap: ServerRecord,
  /** Sealed (`Secrets`). */
  imapPassword: Schema.String,
  smtp: ServerRecord,
  smtpPassword: Schema.String,
  dailyLimit: Schema.NullOr(Schema.Number),
  status: Schema.Literals(["connecting", "ok", "error"]),
  lastError: Schema.NullOr(Schema.String),
  /** The IMAP folder's UIDVALIDITY when `lastUid` was read; null before the first look. */
  uidValidity: Schema.NullOr(NumberColumn),
  lastUid: NumberColumn,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type MailboxRecord = typeof MailboxRecord.Type

export interface MailboxChange {
  readonly displayName?: string | null | undefined
  readonly imap?: { readonly server: ServerRecord; readonly password: string } | undefined
  readonly smtp?: { readonly server: ServerRecord; readonly password: string } | undefined
  readonly dailyLimit?: number | null | undefined
}

/** A poller's claim on a mailbox. */
export interface MailboxClaim {
  readonly mailbox: MailboxRecord
  readonly token: string
}

/** What taking one of a day's sends from a set of mailboxes came to. */
export type DailySlot =
  | { readonly _tag: "Taken"; readonly mailbox: MailboxRecord }
  /** Every one of them is at its daily limit. */
  | { readonly _tag: "Full" }
  /** None of them exists (any more). */
  | { readonly _tag: "Gone" }

const MailboxRow = fromColumns(MailboxRecord)

/** The columns the API shows and the poller reads (everything but the lease). */
const columns = `id, company_id, email, email_key, display_name, imap, imap_password, smtp, smtp_password, daily_limit,
  status, last_error, uid_validity, last_uid, created_at, updated_at`

export class MailboxesRepo extends Context.Service<MailboxesRepo, {
  /** None when the company has a mailbox of that address already. */
  readonly create: (mailbox: MailboxRecord) => Effect.Effect<Option.Option<MailboxRecord>>
  readonly list: (companyId: string, window: Window) => Effect.Effect<{ readonly rows: ReadonlyArray<MailboxRecord>; readonly total: number }>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<MailboxRecord>>
  /** New server settings start the poller over: status `connecting`, the folder read afresh. */
  readonly update: (companyId: string, id: string, change: MailboxChange, now: Date) => Effect.Effect<Option.Option<MailboxRecord>>
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<MailboxRecord>>
  /** Every mailbox of the address (lower-cased), in any company. */
  readonly byAddress: (emailKey: string) => Effect.Effect<ReadonlyArray<MailboxRecord>>
  /**
   * Takes one send of `day` (`YYYY-MM-DD`) from the least-used of the company's mailboxes `ids` still under
   * its `dailyLimit` (none: no limit). Each take is one conditional upsert of the mailbox's count for the
   * day, so concurrent takers in any process never pass a limit; inside a transaction it is undone with it.
   */
  readonly takeDailySlot: (companyId: string, ids: ReadonlyArray<string>, day: string) => Effect.Effect<DailySlot>
  /** Claims up to `limit` mailboxes whose lease is free or expired; concurrent callers never get the same one. */
  readonly claim: (now: Date, leaseUntil: Date, limit: number) => Effect.Effect<ReadonlyArray<MailboxClaim>>
  readonly renew: (claim: MailboxClaim, leaseUntil: Date) => Effect.Effect<boolean>
  readonly release: (claim: MailboxClaim) => Effect.Effect<void>
  /** The poller's state, shown on the mailbox; only while the lease is held. */
  readonly setStatus: (claim: MailboxClaim, status: "connecting" | "ok" | "error", lastError: string | null, now: Date) => Effect.Effect<boolean>
  /** The last UID ingested, only while the lease is held: false when it was lost (another poller owns the mailbox). */
  readonly advance: (claim: MailboxClaim, uidValidity: number, lastUid: number) => Effect.Effect<boolean>
}>()("inbox/MailboxesRepo") {
  static readonly layer = Layer.effect(MailboxesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const records = readerOf(MailboxRow)
    const selected = sql.literal(columns)
    return {
      create: (mailbox) =>
        records.first(sql`
          INSERT INTO mailboxes (id, company_id, email, email_key, display_name, imap, imap_password, smtp, smtp_password,
            daily_limit, status, last_error, uid_validity, last_uid, created_at, updated_at)
          VALUES (${mailbox.id}, ${mailbox.companyId}, ${mailbox.email}, ${mailbox.emailKey}, ${mailbox.displayName},
            ${jsonParam(mailbox.imap)}::jsonb, ${mailbox.imapPassword}, ${jsonParam(mailbox.smtp)}::jsonb, ${mailbox.smtpPassword},
            ${mailbox.dailyLimit}, ${mailbox.status}, ${mailbox.lastError}, NULL, 0, ${mailbox.createdAt}, ${mailbox.updatedAt})
          ON CONFLICT (company_id, email_key) DO NOTHING
          RETURNING ${selected}`).pipe(Effect.orDie),
      list: (companyId, window) =>
        selectRecords(MailboxRow, sql, "mailboxes", sql`company_id = ${companyId}`, window).pipe(Effect.orDie),
      get: (companyId, id) =>
        records.first(sql`SELECT ${selected} FROM mailboxes WHERE company_id = ${companyId} AND id = ${id}`).pipe(Effect.orDie),
      update: (companyId, id, change, now) => {
        const servers = change.imap !== undefined || change.smtp !== undefined
        return records.first(sql`
          UPDATE mailboxes SET
            display_name = ${change.displayName === undefined ? sql`display_name` : sql`${change.displayName}`},
            daily_limit = ${change.dailyLimit === undefined ? sql`daily_limit` : sql`${change.dailyLimit}`},
            imap = ${change.imap === undefined ? sql`imap` : sql`${jsonParam(change.imap.server)}::jsonb`},
            imap_password = ${change.imap === undefined ? sql`imap_password` : sql`${change.imap.password}`},
            smtp = ${change.smtp === undefined ? sql`smtp` : sql`${jsonParam(change.smtp.server)}::jsonb`},
            smtp_password = ${change.smtp === undefined ? sql`smtp_password` : sql`${change.smtp.password}`},
            ${servers ? sql`status = 'connecting', last_error = NULL, lease_token = NULL, lease_expires_at = NULL,` : sql``}
            ${change.imap === undefined ? sql`` : sql`uid_validity = NULL, last_uid = 0,`}
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING ${selected}`).pipe(Effect.orDie)
      },
      remove: (companyId, id) =>
        records.first(sql`DELETE FROM mailboxes WHERE company_id = ${companyId} AND id = ${id} RETURNING ${selected}`).pipe(Effect.orDie),
      byAddress: (emailKey) =>
        records.all(sql`SELECT ${selected} FROM mailboxes WHERE email_key = ${emailKey} ORDER BY id`).pipe(Effect.orDie),
      takeDailySlot: (companyId, ids, day) =>
        Effect.gen(function*() {
          if (ids.length === 0) return { _tag: "Gone" } as const
          const mailboxes = yield* records.all(sql`SELECT ${selected} FROM mailboxes WHERE company_id = ${companyId} AND id IN ${sql.in(ids)}`)
          if (mailboxes.length === 0) return { _tag: "Gone" } as const
          const counts = yield* sql<{ readonly mailbox_id: string; readonly sent: number }>`SELECT mailbox_id, sent FROM mailbox_daily_sends
            WHERE mailbox_id IN ${sql.in(mailboxes.map((mailbox) => mailbox.id))} AND day = ${day}::date`
          const sentToday = new Map(counts.map((row) => [row.mailbox_id, Number(row.sent)]))
          const used = (mailbox: MailboxRecord) => sentToday.get(mailbox.id) ?? 0
          // Least used today first: consecutive sends rotate through the mailboxes.
          const open = mailboxes
            .filter((mailbox) => mailbox.dailyLimit === null || used(mailbox) < mailbox.dailyLimit)
            .toSorted((a, b) => used(a) - used(b) || a.id.localeCompare(b.id))
          for (const mailbox of open) {
            const taken = yield* sql`INSERT INTO mailbox_daily_sends (mailbox_id, day, sent) VALUES (${mailbox.id}, ${day}::date, 1)
              ON CONFLICT (mailbox_id, day) DO UPDATE SET sent = mailbox_daily_sends.sent + 1
              ${mailbox.dailyLimit === null ? sql`` : sql`WHERE mailbox_daily_sends.sent < ${mailbox.dailyLimit}`}
              RETURNING sent`
            if (taken.length > 0) return { _tag: "Taken", mailbox } as const
          }
          return { _tag: "Full" } as const
        }).pipe(Effect.orDie),
      claim: (now, leaseUntil, limit) =>
        Effect.gen(function*() {
          const token = crypto.randomUUID()
          const mailboxes = yield* records.all(leasedClaim(sql, {
            table: "mailboxes",
            where: sql`lease_expires_at IS NULL OR lease_expires_at < ${now}`,
            orderBy: sql`id`,
            limit,
            lease: { token, until: leaseUntil },
            returning: selected
          }))
          return mailboxes.map((mailbox) => ({ mailbox, token }))
        }).pipe(Effect.orDie),
      renew: (claim, leaseUntil) =>
        Effect.map(
          sql`UPDATE mailboxes SET lease_expires_at = ${leaseUntil} WHERE id = ${claim.mailbox.id} AND lease_token = ${claim.token} RETURNING id`,
          (rows) => rows.length > 0
        ).pipe(Effect.orDie),
      release: (claim) =>
        sql`UPDATE mailboxes SET lease_token = NULL, lease_expires_at = NULL WHERE id = ${claim.mailbox.id} AND lease_token = ${claim.token}`
          .pipe(Effect.asVoid, Effect.orDie),
      setStatus: (claim, status, lastError, now) =>
        Effect.map(
          sql`UPDATE mailboxes SET status = ${status}, last_error = ${lastError},
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE id = ${claim.mailbox.id} AND lease_token = ${claim.token} RETURNING id`,
          (rows) => rows.length > 0
        ).pipe(Effect.orDie),
      advance: (claim, uidValidity, lastUid) =>
        Effect.map(
          sql`UPDATE mailboxes SET uid_validity = ${uidValidity}, last_uid = ${lastUid}
            WHERE id = ${claim.mailbox.id} AND lease_token = ${claim.token} RETURNING id`,
          (rows) => rows.length > 0
        ).pipe(Effect.orDie)
    }
  }))
}
