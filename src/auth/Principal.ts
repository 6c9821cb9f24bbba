import { Context, Schema } from "effect"
import type { CompanyRole } from "./Roles.ts"

/** Who a request stands for, resolved once by the authentication middleware. */
export interface Principal {
  readonly keyKind: "company" | "personal"
  readonly keyId: string
  /** SHA-256 of the credential: the rate-limit bucket and cache identity, never the secret. */
  readonly credentialHash: string
  readonly companyId: string
  readonly companyName: string
  readonly organizationId: string
  readonly plan: string
  /** The acting user: a personal key's user, or the user who created a company key. */
  readonly userId: string
  readonly role: CompanyRole
  /** Empty means every feature of the plan. */
  readonly allowedFeatures: ReadonlyArray<string>
}

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("auth/CurrentPrincipal") {}

/** `GET /me`: the principal a credential stands for. */
export const Me = Schema.Struct({
  keyKind: Schema.Literals(["company", "personal"]),
  keyId: Schema.String,
  companyId: Schema.String,
  companyName: Schema.String,
  organizationId: Schema.String,
  plan: Schema.String,
  userId: Schema.String,
  role: Schema.Literals(["owner", "admin", "member", "viewer"]),
  allowedFeatures: Schema.Array(Schema.String)
}).annotate({ identifier: "Me" })

export const toMe = (principal: Principal): typeof Me.Type => ({
  keyKind: principal.keyKind,
  keyId: principal.keyId,
  companyId: principal.companyId,
  companyName: principal.companyName,
  organizationId: principal.organizationId,
  plan: principal.plan,
  userId: principal.userId,
  role: principal.role,
  allowedFeatures: principal.allowedFeatures
})
