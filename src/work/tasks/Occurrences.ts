import { Cron, DateTime, Option, Result } from "effect"

/**
 * When a task runs: the schedule arithmetic, in the task's IANA time zone
 * (DST-correct through `effect`'s `Cron` and `DateTime`). Pure functions.
 */

export type ScheduleType = "one_time" | "recurring" | "heartbeat"

/** `{cron}` (recurring only) or `{intervalMinutes}` (recurring or heartbeat). */
export interface RecurringConfig {
  readonly cron?: string | undefined
  readonly intervalMinutes?: number | undefined
}

export interface ScheduleSpec {
  readonly scheduleType: ScheduleType
  readonly scheduledAt: Date | null
  readonly recurringConfig: RecurringConfig | null
  readonly timezone: string
}

/** An IANA zone name (`Europe/Berlin`, `UTC`); fixed offsets such as `+02:00` are not zone names. */
export const isIanaZone = (zone: string): boolean =>
  /^[A-Za-z]/.test(zone) && Option.isSome(DateTime.zoneMakeNamed(zone))

/** A standard 5-field cron expression (minute hour day-of-month month day-of-week). */
export const isFiveFieldCron = (expression: string): boolean =>
  expression.trim().split(/\s+/).length === 5 && Result.isSuccess(Cron.parse(expression))

const nextCron = (expression: string, timezone: string, after: Date): Date | null => {
  try {
    return Cron.next(Cron.parseUnsafe(expression, timezone), after)
  } catch {
    // `Cron.next` throws when the expression never matches (e.g. 30 February).
    return null
  }
}

/** The first instant `anchor + k·interval` (k ≥ 1) strictly after `after`. */
const nextOnGrid = (anchor: Date, minutes: number, after: Date): Date => {
  const step = minutes * 60_000
  const steps = Math.max(1, Math.floor((after.getTime() - anchor.getTime()) / step) + 1)
  return new Date(anchor.getTime() + steps * step)
}

/** The first run of a newly created, rescheduled or resumed task at `now`; null when it never runs. */
export const firstRun = (spec: ScheduleSpec, now: Date): Date | null => {
  if (spec.scheduleType === "one_time") return spec.scheduledAt
  const config = spec.recurringConfig
  if (config?.cron !== undefined) return nextCron(config.cron, spec.timezone, now)
  if (config?.intervalMinutes !== undefined) return new Date(now.getTime() + config.intervalMinutes * 60_000)
  return null
}

/**
 * The first occurrence strictly after `after`, for the run that follows the
 * occurrence `handled`. Interval grids stay anchored at the handled
 * occurrence; occurrences missed while nothing ran are skipped, so that a
 * task runs once after downtime, not once per missed slot. Null for one-time tasks.
 */
export const occurrenceAfter = (spec: ScheduleSpec, handled: Date, after: Date): Date | null => {
  if (spec.scheduleType === "one_time") return null
  const config = spec.recurringConfig
  if (config?.cron !== undefined) return nextCron(config.cron, spec.timezone, after)
  if (config?.intervalMinutes !== undefined) return nextOnGrid(handled, config.intervalMinutes, after)
  return null
}

const zoned = (instant: Date, timezone: string) => DateTime.makeZonedUnsafe(instant, { timeZone: timezone })

/** The local calendar day of `instant` in the zone, `YYYY-MM-DD`: the key of the daily log and limit. */
export const localDay = (instant: Date, timezone: string): string => DateTime.formatIsoDate(zoned(instant, timezone))

/** Local midnight at the start of the day after `instant`'s, in the zone. */
export const startOfNextDay = (instant: Date, timezone: string): Date =>
  DateTime.toDate(DateTime.add(DateTime.startOf(zoned(instant, timezone), "day"), { days: 1 }))

/**
 * Where a task goes when it stopped for the day: its first occurrence from
 * the next local midnight on (a one-time task runs at that midnight).
 */
export const firstRunNextDay = (spec: ScheduleSpec, handled: Date, now: Date): Date | null => {
  const midnight = startOfNextDay(now, spec.timezone)
  if (spec.scheduleType === "one_time") return midnight
  return occurrenceAfter(spec, handled, new Date(midnight.getTime() - 1))
}
