import { Context, Effect, Option } from "effect"
import { Forbidden, NotFound } from "../platform/Errors.ts"
import { CurrentPrincipal, type Principal } from "./Principal.ts"
import { PrincipalLookup } from "./PrincipalLookup.ts"
import type { CompanyRole, OrgRole } from "./Roles.ts"

/**
 * Who may do what: one declarative table (documented in docs/authorization.md).
 *
 * Authorization is a type: an operation that needs a permission requires
 * `Authorized<P>` in its environment, and only `authorize(P)` (or
 * `authorizeInOrganization`) provides it, after the check passed. A handler
 * that forgets the check does not compile.
 */

/** Features each plan includes; a company user's `allowedFeatures` can narrow them further. */
export const planFeatures: Record<string, ReadonlyArray<string>> = {
  free: ["chat", "content", "projects", "tasks", "memories", "agents"],
  pro: ["chat", "content", "projects", "tasks", "memories", "agents", "campaigns", "sequences", "jobs", "documents", "integrations", "images", "audio"],
  enterprise: ["chat", "content", "projects", "tasks", "memories", "agents", "campaigns", "sequences", "jobs", "documents", "integrations", "images", "audio"]
}

const everyone: ReadonlyArray<CompanyRole> = ["owner", "admin", "member", "viewer"]
const contributors: ReadonlyArray<CompanyRole> = ["owner", "admin", "member"]
const managers: ReadonlyArray<CompanyRole> = ["owner", "admin"]

interface CompanyRule {
  readonly roles: ReadonlyArray<CompanyRole>
  readonly feature?: string
  readonly description: string
}

/** Company-scoped permissions: the caller's company role (a company key has its creator's) and plan feature. */
export const companyPermissions = {
  "apiKeys:manage": { roles: managers, description: "manage the company's API keys" },
  "companyUsers:read": { roles: everyone, description: "list the company's users" },
  "companyUsers:manage": { roles: managers, description: "add, change or remove company users" },
  "projects:read": { roles: everyone, feature: "projects", description: "read projects" },
  "projects:write": { roles: contributors, feature: "projects", description: "create and change projects" },
  "memories:use": { roles: contributors, feature: "memories", description: "keep memories" },
  "agents:read": { roles: everyone, feature: "agents", description: "read agents and employees" },
  "agents:write": { roles: managers, feature: "agents", description: "create and change agents and employees" },
  "agents:chat": { roles: contributors, feature: "agents", description: "talk to agents and employees" },
  "tasks:read": { roles: everyone, feature: "tasks", description: "read scheduled tasks" },
  "tasks:write": { roles: contributors, feature: "tasks", description: "create and run scheduled tasks" },
  "chat:use": { roles: contributors, feature: "chat", description: "call models" },
  "content:use": { roles: contributors, feature: "content", description: "use the content tools" },
  "brandKit:read": { roles: everyone, feature: "content", description: "read the brand kit" },
  "brandKit:write": { roles: managers, feature: "content", description: "change the brand kit" },
  "jobs:search": { roles: contributors, feature: "jobs", description: "search job listings" },
  "images:use": { roles: contributors, feature: "images", description: "generate and transform images" },
  "audio:use": { roles: contributors, feature: "audio", description: "synthesize speech" },
  "canvases:read": { roles: everyone, feature: "content", description: "read canvases and their chat threads" },
  "canvases:write": { roles: contributors, feature: "content", description: "create and change canvases and threads" },
  "documents:convert": { roles: contributors, feature: "documents", description: "convert documents" },
  "documents:read": { roles: everyone, feature: "documents", description: "read and search the knowledge base" },
  "documents:write": { roles: contributors, feature: "documents", description: "add and delete knowledge base documents" },
  "campaigns:read": {
    roles: everyone,
    feature: "campaigns",
    description: "read campaigns, contact lists, templates, the suppression list and sending domains"
  },
  "campaigns:write": {
    roles: contributors,
    feature: "campaigns",
    description: "create and change campaigns, contact lists, templates, the suppression list and sending domains"
  },
  "sequences:read": { roles: everyone, feature: "sequences", description: "read sequences and their executions" },
  "sequences:write": {
    roles: contributors,
    feature: "sequences",
    description: "create and change sequences, enroll contacts, approve and regenerate executions"
  },
  "landingPages:read": { roles: everyone, feature: "campaigns", description: "read landing pages and their statistics" },
  "landingPages:write": {
    roles: contributors,
    feature: "campaigns",
    description: "create, change, publish and design landing pages"
  },
  "webhooks:manage": { roles: managers, feature: "integrations", description: "manage webhooks and read their deliveries" }
} as const satisfies Record<string, CompanyRule>

/** Organization-scoped permissions: the caller's organization role by the spec's resolution rule. */
export const organizationPermissions = {
  "usage:read": { roles: ["owner", "admin"], description: "read the organization's usage" },
  "companies:create": { roles: ["owner", "admin"], description: "create companies in the organization" }
} as const satisfies Record<string, { readonly roles: ReadonlyArray<OrgRole>; readonly description: string }>

export type CompanyPermission = keyof typeof companyPermissions
export type OrganizationPermission = keyof typeof organizationPermissions
export type Permission = CompanyPermission | OrganizationPermission

/** Proof that the current principal passed the check for `P`. */
export interface Authorized<P extends Permission> {
  readonly permission: P
  readonly principal: Principal
}

const tags = new Map<Permission, Context.Service<any, any>>()

export const Authorized = <P extends Permission>(permission: P): Context.Service<Authorized<P>, Authorized<P>> => {
  let tag = tags.get(permission)
  if (tag === undefined) {
    tag = Context.Service<Authorized<P>>(`auth/Authorized/${permission}`)
    tags.set(permission, tag)
  }
  return tag
}

/** The principal's role allows `permission` and its plan and allowed features include the feature. */
export const check = (principal: Principal, permission: CompanyPermission): string | undefined => {
  const rule: CompanyRule = companyPermissions[permission]
  if (!rule.roles.includes(principal.role)) {
    return `Your role (${principal.role}) cannot ${rule.description}; it needs one of: ${rule.roles.join(", ")}`
  }
  if (rule.feature !== undefined) {
    const inPlan = (planFeatures[principal.plan] ?? planFeatures.free).includes(rule.feature)
    if (!inPlan) return `The ${principal.plan} plan does not include the ${rule.feature} feature`
    if (principal.allowedFeatures.length > 0 && !principal.allowedFeatures.includes(rule.feature)) {
      return `Your access does not include the ${rule.feature} feature`
    }
  }
  return undefined
}

/** Runs `effect` only if the current principal holds the company permission `P`; 403 otherwise. */
export const authorize = <P extends CompanyPermission>(permission: P) =>
<A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | Forbidden, Exclude<R, Authorized<P>> | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal): Effect.Effect<A, E | Forbidden, Exclude<R, Authorized<P>>> => {
    const denied = check(principal, permission)
    return denied === undefined
      ? Effect.provideService(effect, Authorized(permission), { permission, principal })
      : Effect.fail(new Forbidden({ error: denied }))
  })

/**
 * Runs `effect` only if the caller's user holds `permission` in the
 * organization. A caller with no record in it gets 404, so that existence is
 * not revealed; a record with too small a role gets 403.
 */
export const authorizeInOrganization = <P extends OrganizationPermission>(permission: P, organizationId: string) =>
<A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | Forbidden | NotFound, Exclude<R, Authorized<P>> | CurrentPrincipal | PrincipalLookup> =>
  Effect.flatMap(CurrentPrincipal, (principal) =>
    Effect.flatMap(
      PrincipalLookup.use((lookup) => lookup.organizationRole(organizationId, principal.userId)),
      (role): Effect.Effect<A, E | Forbidden | NotFound, Exclude<R, Authorized<P>>> => {
        if (Option.isNone(role)) return Effect.fail(new NotFound({ error: `Organization ${organizationId} not found` }))
        const allowed: ReadonlyArray<OrgRole> = organizationPermissions[permission].roles
        return allowed.includes(role.value)
          ? Effect.provideService(effect, Authorized(permission), { permission, principal })
          : Effect.fail(
            new Forbidden({
              error: `Your organization role (${role.value}) cannot ${organizationPermissions[permission].description}; it needs one of: ${allowed.join(", ")}`
            })
          )
      }
    ))

/**
 * Who may change or delete a resource the caller can already see: the user
 * who owns it, or a company owner or admin. A company key acts as its creator.
 */
export const ownsOrManages = (principal: Principal, ownerUserId: string | null): boolean =>
  principal.userId === ownerUserId || managers.includes(principal.role)
