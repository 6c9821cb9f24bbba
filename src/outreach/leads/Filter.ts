import { Result, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { containing, jsonParam } from "../../storage/Rows.ts"
import { fieldNamePattern } from "./Addresses.ts"
import { ActivityType, LeadStatus } from "./Api.ts"
import { InvalidFilter } from "./Errors.ts"

/**
 * The smart lists' filter language (docs/leads.md): `{all: [...]}` or
 * `{any: [...]}`, nestable, over conditions on lead fields
 * (`{field, op, value}`) and on the timeline (`{activity, op: "within" |
 * "not_within", days, campaignId?, sequenceId?}`). Each node is decoded with
 * the Effect Schema of its kind, so a bad one is refused with the path of the
 * condition (`filter.all[2].op`); the decoded filter compiles to a
 * parameterised SQL fragment over `leads`, values always bound as parameters.
 */

/** Nesting of `all`/`any` groups a filter may have, and conditions in all. */
export const maxFilterDepth = 8
export const maxFilterConditions = 100

const FieldOp = Schema.Literals(["eq", "neq", "contains", "in", "exists", "before", "after"])
const Scalar = Schema.Union([Schema.String.check(Schema.isMaxLength(1_000)), Schema.Finite, Schema.Boolean])

const FieldCondition = Schema.Struct({
  field: Schema.String,
  op: FieldOp,
  value: Schema.optional(Schema.Union([Scalar, Schema.Array(Scalar).check(Schema.isMinLength(1), Schema.isMaxLength(100))]))
})
export type FieldCondition = typeof FieldCondition.Type

const ActivityCondition = Schema.Struct({
  activity: ActivityType,
  op: Schema.Literals(["within", "not_within"]),
  days: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3650 })),
  campaignId: Schema.optional(Schema.String.check(Schema.isMaxLength(200))),
  sequenceId: Schema.optional(Schema.String.check(Schema.isMaxLength(200)))
})
export type ActivityCondition = typeof ActivityCondition.Type

const Group = Schema.Union([
  Schema.Struct({ all: Schema.Array(Schema.Unknown) }),
  Schema.Struct({ any: Schema.Array(Schema.Unknown) })
])

export type LeadFilter =
  | { readonly all: ReadonlyArray<LeadFilter> }
  | { readonly any: ReadonlyArray<LeadFilter> }
  | ({ readonly kind: "field" } & FieldCondition)
  | ({ readonly kind: "activity" } & ActivityCondition)

/** The lead columns a condition may name, with the ops each takes. */
const textColumns: Record<string, string> = {
  email: "email",
  firstName: "first_name",
  lastName: "last_name",
  company: "company",
  title: "title",
  phone: "phone",
  website: "website",
  linkedinUrl: "linkedin_url"
}
const dateColumns: Record<string, string> = { createdAt: "created_at", updatedAt: "updated_at" }
const knownFields = [...Object.keys(textColumns), "status", "tags", ...Object.keys(dateColumns), "fields.<name>"]

const strict = { onExcessProperty: "error" } as const
const decodeField = Schema.decodeUnknownResult(FieldCondition, strict)
const decodeActivity = Schema.decodeUnknownResult(ActivityCondition, strict)
const decodeGroup = Schema.decodeUnknownResult(Group, strict)

/** `Expected …\n  at ["op"]` → `.op` and `Expected …`. */
const issueOf = (message: string) => {
  const lines = message.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  const at = lines.find((line) => line.startsWith("at ")) ?? ""
  const path = [...at.matchAll(/\[("(?:[^"\\]|\\.)*"|\d+)\]/g)]
    .map(([, segment]) => (segment.startsWith("\"") ? `.${JSON.parse(segment)}` : `[${segment}]`)).join("")
  return { path, expected: lines.filter((line) => !line.startsWith("at ")).join("; ") }
}

const refuse = (path: string, problem: string) => Result.fail(new InvalidFilter({ message: `Invalid filter at ${path}: ${problem}` }))

const checked = <A>(path: string, decoded: Result.Result<A, Schema.SchemaError>) =>
  Result.mapError(decoded, (error) => {
    const { path: inner, expected } = issueOf(error.message)
    return new InvalidFilter({ message: `Invalid filter at ${path}${inner}: ${expected.replace("Expected no excess property", "unknown field")}` })
  })

const isDate = (value: unknown) => typeof value === "string" && !Number.isNaN(Date.parse(value)) && /^\d{4}-\d{2}-\d{2}/.test(value)

/** What is wrong with a decoded field condition (its op and value for its field), if anything. */
const fieldProblem = (condition: FieldCondition): readonly [string, string] | undefined => {
  const { field, op, value } = condition
  const custom = field.startsWith("fields.")
  if (custom && !fieldNamePattern.test(field.slice(7))) return [".field", `"${field}" does not name a custom field`]
  if (!custom && !(field in textColumns) && !(field in dateColumns) && field !== "status" && field !== "tags") {
    return [".field", `unknown field "${field}"; one of ${knownFields.join(", ")}`]
  }
  const dated = field in dateColumns
  if ((op === "before" || op === "after") !== dated && !(custom && (op === "before" || op === "after"))) {
    return [".op", dated ? `"${field}" takes before or after` : `"${op}" applies to createdAt, updatedAt or a custom field`]
  }
  if (op === "exists") return value === undefined || typeof value === "boolean" ? undefined : [".value", "exists takes true, false or nothing"]
  if (value === undefined) return [".value", `"${op}" needs a value`]
  if (op === "in" ? !Array.isArray(value) : Array.isArray(value)) return [".value", op === "in" ? "in takes an array" : "an array is only for in"]
  const values = Array.isArray(value) ? value : [value]
  if ((op === "before" || op === "after") && !values.every(isDate)) return [".value", "must be an ISO 8601 date"]
  if (op === "contains" && typeof value !== "string") return [".value", "contains takes a string"]
  if (field === "status" && !values.every((v) => (LeadStatus.literals as ReadonlyArray<unknown>).includes(v))) {
    return [".value", `a status is one of ${LeadStatus.literals.join(", ")}`]
  }
  if (!custom && !values.every((v) => typeof v === "string")) return [".value", `"${field}" compares with strings`]
  return undefined
}

/** Decodes a filter, or refuses it naming the path of the first bad node. */
export const decodeFilter = (input: unknown): Result.Result<LeadFilter, InvalidFilter> => {
  let conditions = 0
  const node = (value: unknown, path: string, depth: number): Result.Result<LeadFilter, InvalidFilter> => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return refuse(path, "expected an object")
    if ("all" in value || "any" in value) {
      if (depth >= maxFilterDepth) return refuse(path, `groups nest at most ${maxFilterDepth} levels deep`)
      const group = checked(path, decodeGroup(value))
      if (Result.isFailure(group)) return Result.fail(group.failure)
      const [key, members] = "all" in group.success ? ["all", group.success.all] as const : ["any", group.success.any] as const
      if (members.length === 0) return refuse(`${path}.${key}`, "a group needs at least one condition")
      const decoded: Array<LeadFilter> = []
      for (const [i, member] of members.entries()) {
        const result = node(member, `${path}.${key}[${i}]`, depth + 1)
        if (Result.isFailure(result)) return result
        decoded.push(result.success)
      }
      return Result.succeed(key === "all" ? { all: decoded } : { any: decoded })
    }
    if (++conditions > maxFilterConditions) return refuse(path, `a filter holds at most ${maxFilterConditions} conditions`)
    if ("activity" in value) return Result.map(checked(path, decodeActivity(value)), (c) => ({ kind: "activity" as const, ...c }))
    if (!("field" in value)) return refuse(path, "expected {all: [...]}, {any: [...]}, {field, op, value} or {activity, op, days}")
    const condition = checked(path, decodeField(value))
    if (Result.isFailure(condition)) return Result.fail(condition.failure)
    const problem = fieldProblem(condition.success)
    return problem === undefined ? Result.succeed({ kind: "field" as const, ...condition.success }) : refuse(`${path}${problem[0]}`, problem[1])
  }
  return node(input, "filter", 0)
}

/** The SQL condition over `leads` (aliased `leads`) of company `companyId` of a decoded filter, evaluated at `now`. */
export const compileFilter = (
  sql: SqlClient.SqlClient,
  companyId: string,
  filter: LeadFilter,
  now: Date
): Statement.Fragment => {
  if ("all" in filter) return sql.and(filter.all.map((member) => compileFilter(sql, companyId, member, now)))
  if ("any" in filter) return sql.or(filter.any.map((member) => compileFilter(sql, companyId, member, now)))
  if (filter.kind === "activity") {
    const since = new Date(now.getTime() - filter.days * 86_400_000)
    // The company's recent activities of the type, read once and hashed, rather than probed lead by lead. `IS TRUE`
    // (a no-op: ids are never null) keeps the IN a hashed filter at the top of a WHERE too, where the planner would
    // otherwise make it a join driven by every recent activity: a page could then no longer stop at its last lead.
    const recent = sql`SELECT a.lead_id FROM lead_activities a WHERE ${
      sql.and([
        sql`a.company_id = ${companyId}`,
        sql`a.type = ${filter.activity}`,
        sql`a.at >= ${since}`,
        ...(filter.campaignId === undefined ? [] : [sql`a.campaign_id = ${filter.campaignId}`]),
        ...(filter.sequenceId === undefined ? [] : [sql`a.sequence_id = ${filter.sequenceId}`])
      ])
    }`
    return filter.op === "within" ? sql`(leads.id IN (${recent})) IS TRUE` : sql`leads.id NOT IN (${recent})`
  }
  return fieldCondition(sql, filter)
}

const fieldCondition = (sql: SqlClient.SqlClient, { field, op, value }: FieldCondition): Statement.Fragment => {
  const values = (Array.isArray(value) ? value : [value]) as ReadonlyArray<string | number | boolean>
  if (field === "tags") {
    const has = (tag: unknown) => sql`leads.tags @> ${jsonParam([tag])}::jsonb`
    switch (op) {
      case "eq":
        return has(value)
      case "neq":
        return sql`NOT ${has(value)}`
      case "in":
        return sql.or(values.map(has))
      case "contains":
        return sql`EXISTS (SELECT 1 FROM jsonb_array_elements_text(leads.tags) AS t WHERE lower(t) LIKE ${containing(String(value).toLowerCase())})`
      default:
        return value === false ? sql`leads.tags = '[]'::jsonb` : sql`leads.tags <> '[]'::jsonb`
    }
  }
  if (field in dateColumns) {
    const column = sql(`leads.${dateColumns[field]}`)
    return op === "before" ? sql`${column} < ${new Date(String(value))}` : sql`${column} > ${new Date(String(value))}`
  }
  const custom = field.startsWith("fields.")
  const name = field.slice(7)
  const text = custom ? sql`(leads.fields ->> ${name})` : sql(`leads.${field === "status" ? "status" : textColumns[field]}`)
  const folded = field === "status" ? text : sql`lower(${text})`
  const fold = (v: unknown) => (field === "status" ? String(v) : String(v).toLowerCase())
  /** A custom field's number or boolean compares as JSON; strings compare ignoring case. */
  const equals = (v: string | number | boolean) =>
    custom && typeof v !== "string" ? sql`(leads.fields -> ${name}) = ${jsonParam(v)}::jsonb` : sql`${folded} = ${fold(v)}`
  switch (op) {
    case "eq":
      return equals(values[0])
    case "neq":
      return sql`NOT coalesce(${equals(values[0])}, false)`
    case "in":
      return sql.or(values.map(equals))
    case "contains":
      return sql`${folded} LIKE ${containing(fold(value))}`
    case "before":
      return sql`${text} < ${new Date(String(value)).toISOString()}`
    case "after":
      return sql`${text} > ${new Date(String(value)).toISOString()}`
    case "exists": {
      const present = custom ? sql`(leads.fields -> ${name}) IS NOT NULL` : sql`coalesce(${text}, '') <> ''`
      return value === false ? sql`NOT ${present}` : present
    }
  }
}
