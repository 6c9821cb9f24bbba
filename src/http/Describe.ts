import { Context, type Schema } from "effect"
import { OpenApi } from "effect/http-api"
import {
  type CompanyPermission,
  companyPermissions,
  type OrganizationPermission,
  organizationPermissions
} from "../auth/Policy.ts"

/**
 * Who may call an operation: a company permission (the caller's company role
 * and plan feature), the owner of the resource or a company manager, an
 * organization permission, any valid key, a personal access key only, the
 * operator (`ADMIN_API_KEY`), or anyone.
 */
export type Caller =
  | CompanyPermission
  | OrganizationPermission
  | { readonly owner: CompanyPermission }
  | "anyKey"
  | "personalKey"
  | "operator"
  | "public"

type Status = 400 | 401 | 403 | 404 | 429 | 500

/** What an operation's error statuses mean for it, where it says more than the default. */
export type ErrorNotes = Partial<Record<Status, string>>

const companyKeys =
  "a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`"

const isCompanyPermission = (caller: Caller): caller is CompanyPermission =>
  typeof caller === "string" && caller in companyPermissions

const isOrganizationPermission = (caller: Caller): caller is OrganizationPermission =>
  typeof caller === "string" && caller in organizationPermissions

const either = (items: ReadonlyArray<string>) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`

const inPlan = (permission: CompanyPermission) => {
  const rule = companyPermissions[permission]
  return "feature" in rule ? `, in a plan with the \`${rule.feature}\` feature` : ""
}

/** The "Who: …" sentence, from the permission table (`auth/Policy.ts`). */
export const whoMay = (caller: Caller): string => {
  if (isCompanyPermission(caller)) {
    const roles = companyPermissions[caller].roles
    const role = roles.length === 4 ? "with any company role" : `whose company role is ${either(roles)}`
    return `Who: ${companyKeys}, ${role}${inPlan(caller)}.`
  }
  if (isOrganizationPermission(caller)) {
    const roles = either(organizationPermissions[caller].roles)
    return `Who: an organization ${roles} (a personal access key, or a company key whose creator is one).`
  }
  if (typeof caller === "object") return `Who: its owner, or a company owner or admin${inPlan(caller.owner)}.`
  switch (caller) {
    case "anyKey":
      return "Who: any valid key."
    case "personalKey":
      return "Who: a personal access key (a company key cannot)."
    case "operator":
      return "Who: the operator (`ADMIN_API_KEY`)."
    case "public":
      return "Who: anyone, without a key."
  }
}

/**
 * The statuses the caller's authentication adds to every operation, beyond its
 * declared errors: a key can be refused (401), name a company it cannot reach
 * (404) or exceed the rate limit (429); the operator's routes are hidden (404)
 * unless configured. Any call may fail with 500, which goes without saying.
 */
const authenticationStatuses = (caller: Caller): ReadonlyArray<Status> =>
  caller === "public" ? [] : caller === "operator" ? [401, 404] : [401, 404, 429]

const defaultNote = (status: Status, caller: Caller): string => {
  switch (status) {
    case 400:
      return "naming the invalid field"
    case 401:
      return caller === "operator" ? "with a wrong key" : "when the key is missing, malformed, unknown, revoked or expired"
    case 403:
      return isCompanyPermission(caller)
        ? "naming the missing role or feature"
        : caller === "personalKey"
        ? "for a company key"
        : typeof caller === "object"
        ? "for other people"
        : caller === "anyKey"
        ? "when the key may not do it"
        : "for other roles"
    case 404:
      return caller === "operator"
        ? "unless `ADMIN_API_KEY` is set"
        : caller === "public"
        ? "when nothing matches the path"
        : "for an id of another company"
    case 429:
      return "over the rate limit"
    case 500:
      return "when the service fails"
  }
}

const statusOf = (schema: Schema.Top): Status | undefined =>
  (schema.ast.annotations as { readonly httpApiStatus?: Status } | undefined)?.httpApiStatus

interface Describable {
  readonly error: ReadonlySet<Schema.Top>
  annotateMerge<I>(annotations: Context.Context<I>): this
}

/**
 * An operation's OpenAPI summary and description, derived: what it does, then
 * who may call it (from the permission table) and what each status it can
 * answer means (its declared errors plus what its caller's authentication
 * adds), each worded once here unless `errors` says more.
 */
export const described = (doc: {
  readonly summary: string
  readonly does: string
  readonly who: Caller
  readonly errors?: ErrorNotes
}) =>
<E extends Describable>(endpoint: E): E => {
  const declared = [...endpoint.error].map(statusOf).filter((status) => status !== undefined)
  const statuses = [...new Set([...declared, ...authenticationStatuses(doc.who)])].sort((a, b) => a - b)
  const notes: ErrorNotes = doc.errors ?? {}
  const errors = statuses
    .filter((status) => status !== 500 || notes[500] !== undefined)
    .map((status) => `${status} ${notes[status] ?? defaultNote(status, doc.who)}`)
  const description = [doc.does, whoMay(doc.who), ...(errors.length === 0 ? [] : [`Errors: ${errors.join("; ")}.`])]
    .join(" ")
  return endpoint.annotateMerge(
    Context.make(OpenApi.Summary, doc.summary).pipe(Context.add(OpenApi.Description, description))
  )
}
