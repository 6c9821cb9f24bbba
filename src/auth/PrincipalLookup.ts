import { Context, Data, type Effect, type Option } from "effect"
import type { NotFound, Unauthorized } from "../platform/Errors.ts"
import type { Principal } from "./Principal.ts"
import type { OrgRole } from "./Roles.ts"

/** No stored key has this credential (answered as 401 "Invalid API key"). */
export class UnknownCredential extends Data.TaggedError("UnknownCredential") {}

/** A principal and the instant until which it may be reused without a new lookup. */
export interface ResolvedPrincipal {
  readonly principal: Principal
  readonly validUntil: number
}

/**
 * What authentication and authorization need from storage, as a port: the
 * kernel knows no area, the areas that own keys, companies and organizations
 * implement it (`src/accounts/keys/Principals.ts`) and the composition root wires it.
 */
export class PrincipalLookup extends Context.Service<PrincipalLookup, {
  /** The principal a credential stands for, in the company the request named (if it named one). */
  readonly resolve: (
    credential: string,
    requestedCompanyId: string | undefined
  ) => Effect.Effect<ResolvedPrincipal, UnknownCredential | Unauthorized | NotFound>
  /**
   * The principal a user acts as in a company, for work the platform does
   * for them without a request (a scheduled task, `workId`): their current
   * role and plan; none once they are no longer a user of it.
   */
  readonly actingUser: (companyId: string, userId: string, workId: string) => Effect.Effect<Option.Option<Principal>>
  /** Whether a person is a user of a company (one they are not in is unreachable for them). */
  readonly isCompanyUser: (companyId: string, userId: string) => Effect.Effect<boolean>
  /** A person's role in an organization; none when they are not in it. */
  readonly organizationRole: (organizationId: string, userId: string) => Effect.Effect<Option.Option<OrgRole>>
}>()("auth/PrincipalLookup") {}
